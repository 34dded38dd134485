package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;

/**
 * Gives a dead frontend's running items of a queue back to the queue (issue 42), as part of taking over its work:
 * single-partition (the queue's), journaled. An item given back is claimed again and run under its invocation ID,
 * which the invocation log answers with the stored outcome, or attaches to the invocation another frontend took
 * over: nothing runs twice.
 */
public class ReleaseQueueItems extends JournaledProcedure {
  public final SQLStmt release = new SQLStmt("UPDATE APIARY_QUEUE_ITEMS SET status = 'QUEUED', frontend = NULL "
      + "WHERE queue_name = ? AND status = 'RUNNING' AND frontend = ?;");

  /** @return how many items went back to the queue */
  public long run(String queueName, String deadFrontend) {
    voltQueueSQL(release, queueName, deadFrontend);
    return committed(voltExecuteSQL(true)[0].asScalarLong());
  }
}
