package org.apiary.drills.exactlyonce;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Read-only: returns the chain it received and how many effect rows its invocation has. */
public class Observe extends LocalFunction<Long> {
  static final Statement COUNT = Statement.of(
      "SELECT COUNT(*) AS n FROM drill_effects WHERE k = ? AND invocation = ?");

  @Override
  protected void run() {
    String chain = retrieveInput(DrillApp.NEXT, String.class);
    queueSQL(COUNT, partitionKey(), DrillApp.invocationOf(DrillApp.payloadOf(chain)));
    long seen = executeSQL().get(0).firstRow().map(r -> r.getLong(0)).orElse(0L);
    returnOutput(chain + "|seen=" + seen);
  }
}
