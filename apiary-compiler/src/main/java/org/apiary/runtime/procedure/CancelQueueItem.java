package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;

/**
 * Cancels a queue item that has not started (issue 42, schema version 20): single-partition (the queue's),
 * journaled. An item still waiting (delayed or not) is ended as cancelled, with the outcome its clients get, so no
 * claim ever takes it and no function of it starts; an item a claim took already is left alone (its invocation is
 * cancelled through the invocation log once it is logged).
 */
public class CancelQueueItem extends JournaledProcedure {
  public final SQLStmt cancel = new SQLStmt("UPDATE APIARY_QUEUE_ITEMS SET status = 'CANCELED', finished_at = ?, "
      + "outcome = ? WHERE queue_name = ? AND invocation_id = ? AND status = 'QUEUED';");

  /**
   * @param queueName the queue (the partitioning parameter)
   * @param invocationId the item's invocation ID, as stored
   * @param outcome the encoded reply its clients get from now on
   * @return 1 if the item was waiting and is now cancelled, else 0
   */
  public long run(String queueName, String invocationId, byte[] outcome) {
    voltQueueSQL(cancel, getTransactionTime(), outcome, queueName, invocationId);
    return committed(voltExecuteSQL(true)[0].asScalarLong());
  }
}
