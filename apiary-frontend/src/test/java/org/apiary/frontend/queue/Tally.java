package org.apiary.frontend.queue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import org.apiary.LocalFunction;
import org.apiary.Statement;

/**
 * Adds a row for every run of its item: arguments [item]; returns the item. {@code q_tally} has no key, so a second
 * run of the same item shows as a second row.
 */
public class Tally extends LocalFunction<Long> {
  static final Statement PUT = Statement.of("INSERT INTO q_tally (k, item, ran_at) VALUES (?, ?, NOW)");

  @Override
  protected void run() {
    List<JsonNode> args = retrieveInputs(SOURCE, JsonNode.class);
    String item = args.get(0).asText();
    queueSQL(PUT, partitionKey(), item);
    executeSQL();
    returnOutput(item);
  }
}
