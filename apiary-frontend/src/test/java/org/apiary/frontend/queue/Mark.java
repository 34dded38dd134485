package org.apiary.frontend.queue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Records that its item ran: arguments [item]; returns the item. */
public class Mark extends LocalFunction<Long> {
  static final Statement PUT = Statement.of("INSERT INTO q_marks (k, item, ran_at) VALUES (?, ?, NOW)");

  @Override
  protected void run() {
    List<JsonNode> args = retrieveInputs(SOURCE, JsonNode.class);
    String item = args.get(0).asText();
    queueSQL(PUT, partitionKey(), item);
    executeSQL();
    returnOutput(item);
  }
}
