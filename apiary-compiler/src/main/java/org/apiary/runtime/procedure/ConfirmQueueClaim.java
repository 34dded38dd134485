package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;
import org.voltdb.VoltProcedure;
import org.voltdb.VoltTable;

/**
 * Whether a frontend still holds a queue item it claimed (issue 42, schema version 22): read-only and
 * single-partition (the queue's), so not journaled. A frontend whose claim grew too old to start the item's invocation
 * (it was paused, or the database was slow) asks this: if the item is still running on it, it starts the invocation
 * within the retention of this read's time ({@link QueueClaimTime}); if another frontend took the item over, or it
 * ended, the frontend leaves it.
 */
public class ConfirmQueueClaim extends VoltProcedure {
  public final SQLStmt item = new SQLStmt("SELECT status, frontend FROM APIARY_QUEUE_ITEMS "
      + "WHERE queue_name = ? AND invocation_id = ?;");

  /**
   * @param queueName the queue (the partitioning parameter)
   * @param invocationId the item's invocation
   * @return the item's status and frontend (no row if it is gone), and this read's time
   */
  public VoltTable[] run(String queueName, String invocationId) {
    voltQueueSQL(item, queueName, invocationId);
    return new VoltTable[] {voltExecuteSQL(true)[0], QueueClaimTime.of(getTransactionTime())};
  }
}
