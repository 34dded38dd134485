package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;

/**
 * Retention for a queue (issue 42): deletes at most {@code max} of the queue's items that ended more than
 * {@code retentionMs} before this transaction's time, oldest first. Single-partition (the queue's), journaled. Items
 * waiting or running are never deleted; a deleted item's deduplication ID is free again.
 */
public class ExpireQueueItems extends JournaledProcedure {
  public final SQLStmt oldest = new SQLStmt("SELECT invocation_id FROM APIARY_QUEUE_ITEMS WHERE queue_name = ? "
      + "AND finished_at < ? ORDER BY queue_name, finished_at, invocation_id LIMIT ?;");
  public final SQLStmt delete = new SQLStmt("DELETE FROM APIARY_QUEUE_ITEMS WHERE queue_name = ? "
      + "AND invocation_id = ?;");

  /** @return how many items were deleted */
  public long run(String queueName, long retentionMs, int max) {
    voltQueueSQL(oldest, queueName, new java.util.Date(getTransactionTime().getTime() - retentionMs), max);
    VoltTable expired = voltExecuteSQL()[0];
    long n = 0;
    while (expired.advanceRow()) {
      voltQueueSQL(delete, queueName, expired.getString(0));
      n++;
    }
    if (n > 0) {
      voltExecuteSQL(true);
    }
    return committed(n);
  }
}
