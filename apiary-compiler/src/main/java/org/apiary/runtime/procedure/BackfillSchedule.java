package org.apiary.runtime.procedure;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apiary.internal.Cron;
import org.voltdb.VoltTable;

/**
 * Backfills a schedule (issue 42): puts every tick of {@code [from, to]} on its queue, each unless its item is there
 * (a tick that ran, within the retention of queue items, does not run again), paused or not, without moving the
 * schedule's regular ticks. Single-partition in the schedule's partition, journaled; the administrator's. A range of
 * more than {@value ScheduleProcedure#MAX_TICKS} ticks is refused (nothing is written).
 */
public class BackfillSchedule extends ScheduleProcedure {
  /**
   * @param queueName the schedule's queue (the partitioning parameter)
   * @param fromMs the first instant of the range (milliseconds since the epoch, inclusive)
   * @param toMs the last (inclusive)
   * @return one row per tick of the range; no row if the schedule is unknown; one row with a NULL invocation ID if
   *     the range holds more than {@value ScheduleProcedure#MAX_TICKS} ticks
   */
  public VoltTable run(String queueName, long fromMs, long toMs) {
    VoltTable out = ticks();
    VoltTable s = read(queueName);
    if (s == null) {
      return committed(out);
    }
    Cron cron = Cron.parse(s.getString("cron"));
    List<Instant> range = new ArrayList<>();
    Instant to = Instant.ofEpochMilli(toMs);
    for (Instant t = next(cron, Instant.ofEpochMilli(fromMs - 1000)); t != null && !t.isAfter(to); t = next(cron, t)) {
      if (t.toEpochMilli() < fromMs) {
        continue;
      }
      if (range.size() == MAX_TICKS) {
        out.addRow(null, null, 0);
        return committed(out);
      }
      range.add(t);
    }
    enqueue(queueName, s, range, out);
    if (!range.isEmpty()) {
      voltExecuteSQL(true);
    }
    return committed(out);
  }
}
