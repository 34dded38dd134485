package org.apiary.runtime.procedure;

import java.time.Instant;
import java.util.List;
import org.apiary.internal.Cron;
import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;

/**
 * Puts a schedule's due ticks on its queue (issue 42): single-partition in the schedule's partition, journaled, called
 * by every frontend when it expects a tick. By this transaction's time it finds the ticks after the schedule's last
 * one; the latest is due and runs, and of the earlier (missed) ones the latest {@code catch_up} run too, oldest first;
 * the rest are skipped. It moves the schedule's last tick to the latest due one in the same transaction, so no other
 * call (another frontend's, at the same moment) finds those ticks again. A paused schedule puts nothing there.
 */
public class TickSchedule extends ScheduleProcedure {
  public final SQLStmt advance = new SQLStmt("UPDATE APIARY_SCHEDULES SET last_tick = ? WHERE queue_name = ?;");

  /**
   * @param queueName the schedule's queue (the partitioning parameter)
   * @return one row per tick put on the queue (tick, invocation ID, 1 if enqueued now / 0 if its item was there);
   *     empty if none was due, the schedule is paused or unknown
   */
  public VoltTable run(String queueName) {
    VoltTable out = ticks();
    VoltTable s = read(queueName);
    if (s == null || s.getLong("paused") != 0) {
      return committed(out);
    }
    Instant now = getTransactionTime().toInstant();
    Instant last = instant(s.getTimestampAsTimestamp("last_tick"));
    List<Instant> due = latestTicks(Cron.parse(s.getString("cron")), last, now, (int) s.getLong("catch_up") + 1);
    if (due.isEmpty()) {
      return committed(out);
    }
    enqueue(queueName, s, due, out);
    Instant latest = due.get(due.size() - 1);
    voltQueueSQL(advance, new org.voltdb.types.TimestampType(latest.toEpochMilli() * 1000), queueName);
    voltExecuteSQL(true);
    return committed(out);
  }
}
