package org.apiary.runtime.procedure;

import java.time.Instant;
import java.util.List;
import org.voltdb.VoltTable;

/**
 * Runs a schedule now (issue 42): puts one tick at this transaction's time (to the millisecond) on its queue, paused
 * or not, without moving the schedule's regular ticks. Single-partition in the schedule's partition, journaled; the
 * administrator's.
 */
public class TriggerSchedule extends ScheduleProcedure {
  /** @return the tick put on the queue (one row), or no row if there is no such schedule */
  public VoltTable run(String queueName) {
    VoltTable out = ticks();
    VoltTable s = read(queueName);
    if (s == null) {
      return committed(out);
    }
    enqueue(queueName, s, List.of(Instant.ofEpochMilli(getTransactionTime().getTime())), out);
    voltExecuteSQL(true);
    return committed(out);
  }
}
