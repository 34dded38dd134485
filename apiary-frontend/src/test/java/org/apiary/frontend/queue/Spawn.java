package org.apiary.frontend.queue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import org.apiary.LocalFunction;
import org.apiary.Statement;

/**
 * Records its item under key k and, in the same transaction, enqueues {@code qMark} of "child-ITEM" under key
 * k + 1000 on {@code q_plain}; then fails if told to (arguments [item, fail]), which must undo both.
 */
public class Spawn extends LocalFunction<Long> {
  static final Statement PUT = Statement.of("INSERT INTO q_marks (k, item, ran_at) VALUES (?, ?, NOW)");

  @Override
  protected void run() {
    List<JsonNode> args = retrieveInputs(SOURCE, JsonNode.class);
    String item = args.get(0).asText();
    queueSQL(PUT, partitionKey(), item);
    executeSQL();
    enqueue("q_plain", null, "qMark", partitionKey() + 1000, "child-" + item);
    if (args.get(1).asBoolean()) {
      throw new IllegalStateException("told to fail after enqueuing");
    }
    returnOutput(item);
  }
}
