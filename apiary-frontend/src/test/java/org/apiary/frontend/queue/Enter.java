package org.apiary.frontend.queue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Records when its item entered: arguments [item, ms]; sends "k|item|ms" to the pause. */
public class Enter extends LocalFunction<Long> {
  static final Statement PUT = Statement.of("INSERT INTO q_runs (k, item, entered, left_at) VALUES (?, ?, NOW, NULL)");

  @Override
  protected void run() {
    List<JsonNode> args = retrieveInputs(SOURCE, JsonNode.class);
    String item = args.get(0).asText();
    queueSQL(PUT, partitionKey(), item);
    executeSQL();
    returnOutput(partitionKey() + "|" + item + "|" + args.get(1).asLong(), "pause");
  }
}
