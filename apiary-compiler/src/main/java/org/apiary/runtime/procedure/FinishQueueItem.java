package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;

/**
 * Marks a running queue item ended (issue 42), once its invocation's outcome is stored in the invocation log:
 * single-partition (the queue's), journaled. Only the frontend that holds the item ends it (a takeover gave it back
 * to the queue, and another claim owns it now).
 */
public class FinishQueueItem extends JournaledProcedure {
  public final SQLStmt finish = new SQLStmt("UPDATE APIARY_QUEUE_ITEMS SET status = ?, finished_at = ? "
      + "WHERE queue_name = ? AND invocation_id = ? AND status = 'RUNNING' AND frontend = ?;");

  /**
   * @param queueName the queue (the partitioning parameter)
   * @param invocationId the item's invocation
   * @param frontend the frontend that claimed it
   * @param status {@code DONE}, {@code FAILED} or {@code CANCELED}, as its invocation ended
   * @return 1 if it was running on that frontend and is now ended, else 0
   */
  public long run(String queueName, String invocationId, String frontend, String status) {
    voltQueueSQL(finish, status, getTransactionTime(), queueName, invocationId, frontend);
    return committed(voltExecuteSQL(true)[0].asScalarLong());
  }
}
