package org.apiary.frontend.queue;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Records when its item left; returns the item. */
public class Leave extends LocalFunction<Long> {
  static final Statement SET = Statement.of("UPDATE q_runs SET left_at = NOW WHERE k = ? AND item = ?");

  @Override
  protected void run() {
    String item = retrieveInput("leave", String.class);
    queueSQL(SET, partitionKey(), item);
    executeSQL();
    returnOutput(item);
  }
}
