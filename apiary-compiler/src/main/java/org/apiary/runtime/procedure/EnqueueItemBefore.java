package org.apiary.runtime.procedure;

import org.voltdb.VoltTable;

/**
 * {@link EnqueueRankedItem} with the request's deadline (issue 42, schema version 22): an enqueue that reaches the
 * database after the time its client stopped waiting (its expiry plus the clock skew allowed) stores nothing and
 * answers {@link #PAST_DEADLINE}. A copy of an enqueue held by a paused frontend would otherwise arrive after the item
 * it asked for had run and retention had deleted it, and put it on the queue again.
 */
public class EnqueueItemBefore extends EnqueueRankedItem {
  /** Nothing was enqueued: the request reached the database after its deadline. */
  public static final long PAST_DEADLINE = 5;

  /**
   * As {@link EnqueueRankedItem#run}, and:
   *
   * @param deadline the latest database time (milliseconds since the epoch) at which the item may be stored; 0 for
   *     none (an item a function enqueued, whose transaction has committed)
   * @return as {@link EnqueueRankedItem#run}, or {@link #PAST_DEADLINE} (with the item's invocation ID and graph)
   */
  public VoltTable run(String queueName, String invocationId, String dedupId, String graph, byte[] request,
                       long requestHash, long delayMs, int priority, String partitionKey, long deadline) {
    if (deadline > 0 && getTransactionTime().getTime() > deadline) {
      VoltTable result = outcomeTable();
      result.addRow(PAST_DEADLINE, invocationId, graph, null);
      return committed(result); // wrote nothing
    }
    return super.run(queueName, invocationId, dedupId, graph, request, requestHash, delayMs, priority, partitionKey);
  }
}
