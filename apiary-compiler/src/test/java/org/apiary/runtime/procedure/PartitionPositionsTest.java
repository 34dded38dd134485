package org.apiary.runtime.procedure;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.voltdb.exceptions.TransactionRestartException;
import org.voltdb.iv2.TxnEgo;
import org.voltdb.messaging.FragmentResponseMessage;
import org.voltdb.messaging.FragmentTaskMessage;

/**
 * Issue 41 item 3: a global function's write joins its execution by the position its partition ran it under. Only a
 * response reporting a fragment the partition ran gives that position; a failed response (a fragment misrouted to a
 * former leader, which VoltDB sends again to the new one, as after a rejoin moves leadership back) must not be kept
 * in its place.
 */
class PartitionPositionsTest {
  private static FragmentResponseMessage response(long spHandle, byte status) {
    FragmentTaskMessage task = new FragmentTaskMessage(1L, 2L, 3L, 4L, false, false, false, false, 0L);
    task.setSpHandle(spHandle);
    FragmentResponseMessage m = new FragmentResponseMessage(task, 5L);
    m.setStatus(status, status == FragmentResponseMessage.SUCCESS ? null
        : new TransactionRestartException("test: misrouted", 3L));
    return m;
  }

  @Test
  void onlyARunFragmentsPositionIsKeptAndTheFirstOfThoseStands() throws InterruptedException {
    long refused = TxnEgo.makeZero(3).makeNext().makeNext().getTxnId();
    long ran = TxnEgo.makeZero(3).makeNext().makeNext().makeNext().makeNext().getTxnId();
    long laterBatch = TxnEgo.makeZero(3).makeNext().makeNext().makeNext().makeNext().makeNext().getTxnId();
    long otherPartition = TxnEgo.makeZero(5).makeNext().getTxnId();
    PartitionPositions p = new PartitionPositions();
    p.offer(response(refused, FragmentResponseMessage.UNEXPECTED_ERROR));
    p.offer(response(ran, FragmentResponseMessage.SUCCESS));
    p.offer(response(laterBatch, FragmentResponseMessage.SUCCESS));
    p.offer(response(otherPartition, FragmentResponseMessage.SUCCESS));
    for (int i = 0; i < 4; i++) {
      p.poll(1, java.util.concurrent.TimeUnit.SECONDS);
    }
    assertEquals(Map.of(3, ran, 5, otherPartition), p.positions());
  }
}
