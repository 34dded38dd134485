package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;

/**
 * Hands a dead frontend's running items of a queue to the frontend taking over its work (issue 42, schema version
 * 20): single-partition (the queue's), journaled. The items stay running, so they keep their places in the queue's
 * limits while the taker finishes their invocations (which it took over with the dead frontend's log entries);
 * {@code ReleaseQueueItems}, version 18's, gave them back to the queue, where a waiting item of higher priority, or a
 * delayed one that came due, could be claimed ahead of them while their invocations still ran, beyond the limit.
 */
public class AdoptQueueItems extends JournaledProcedure {
  public final SQLStmt running = new SQLStmt("SELECT invocation_id, request FROM APIARY_QUEUE_ITEMS "
      + "WHERE queue_name = ? AND status = 'RUNNING' AND frontend = ? ORDER BY invocation_id;");
  public final SQLStmt adopt = new SQLStmt("UPDATE APIARY_QUEUE_ITEMS SET frontend = ? "
      + "WHERE queue_name = ? AND status = 'RUNNING' AND frontend = ?;");

  /**
   * @param queueName the queue (the partitioning parameter)
   * @param deadFrontend the frontend whose lease expired
   * @param taker the frontend taking over its work
   * @return the adopted items: invocation ID and request; and the takeover's time ({@link QueueClaimTime}, not
   *     journaled: the journal's result hash covers the items alone)
   */
  public VoltTable[] run(String queueName, String deadFrontend, String taker) {
    voltQueueSQL(running, queueName, deadFrontend);
    VoltTable items = voltExecuteSQL()[0];
    if (items.getRowCount() > 0) {
      voltQueueSQL(adopt, taker, queueName, deadFrontend);
      voltExecuteSQL(true);
    }
    java.util.Date at = getTransactionTime();
    return new VoltTable[] {committed(items), QueueClaimTime.of(at)};
  }
}
