package org.apiary.frontend.schedule;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Answers with its tick and how many rows it has (reads only). */
public class TickDone extends LocalFunction<Long> {
  static final Statement COUNT = Statement.of("SELECT COUNT(*) FROM s_ticks WHERE k = ? AND tick = ?");

  @Override
  protected void run() {
    String tick = retrieveInputs("tick", String.class).get(0);
    queueSQL(COUNT, partitionKey(), tick);
    executeSQL();
    returnOutput(tick);
  }
}
