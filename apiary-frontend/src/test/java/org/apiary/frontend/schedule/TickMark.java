package org.apiary.frontend.schedule;

import com.fasterxml.jackson.databind.JsonNode;
import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Appends a row for its tick: arguments [tick]; passes the tick on. */
public class TickMark extends LocalFunction<Long> {
  static final Statement PUT = Statement.of("INSERT INTO s_ticks (k, tick, ran_at) VALUES (?, ?, NOW)");

  @Override
  protected void run() {
    String tick = retrieveInputs(SOURCE, JsonNode.class).get(0).asText();
    queueSQL(PUT, partitionKey(), tick);
    executeSQL();
    returnOutput(tick, "tick", partitionKey());
  }
}
