package org.apiary.frontend;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.Cron;
import org.apiary.runtime.SystemSchema;
import org.voltdb.VoltTable;

/**
 * A frontend's side of schedules (issue 42): it only asks the database to put due ticks on their queues; the
 * {@link QueueRunner} runs them like any queued item. Every {@link #ROUND_MS} ms it looks, by its own clock, for a
 * schedule whose next tick has come and calls {@code TickSchedule} for it, a single-partition transaction that decides
 * by the database's clock which ticks are due (and applies the missed-tick policy) and moves the schedule past them, so
 * frontends calling at the same moment put each tick there once. The schedules are read again every second (one
 * multi-partition read), which is also how a frontend learns that another one took a tick, or of a pause.
 */
final class ScheduleRunner {
  private static final Logger LOG = System.getLogger(ScheduleRunner.class.getName());
  /** How often a frontend looks for due ticks. */
  static final long ROUND_MS = 100;
  private static final long READ_EVERY_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final ApiaryDatabase db;
  private final FrontendConfig config;
  private final String frontendId;
  private final ScheduledExecutorService scheduler;
  private volatile boolean running = true;
  /** Per schedule's queue: when its next tick is due, by the rows last read (the scheduler's thread only). */
  private final Map<String, Instant> nextTick = new HashMap<>();
  private final Map<String, Cron> crons = new HashMap<>();
  private long readAt;

  ScheduleRunner(ApiaryDatabase db, FrontendConfig config, String frontendId, ScheduledExecutorService scheduler) {
    this.db = db;
    this.config = config;
    this.frontendId = frontendId;
    this.scheduler = scheduler;
  }

  /** Schedules the rounds (only where the invocation log is kept: ticks run as queued, logged invocations). */
  void start() {
    if (config.invocationLog()) {
      scheduler.scheduleWithFixedDelay(this::round, ROUND_MS, ROUND_MS, TimeUnit.MILLISECONDS);
    }
  }

  void stop() {
    running = false;
  }

  private void read() {
    VoltTable t = db.callAdmin("reading the schedules", "@AdHoc", "SELECT queue_name, cron, paused, "
        + "SINCE_EPOCH(MILLISECOND, last_tick) FROM " + SystemSchema.SCHEDULES).getResults()[0];
    nextTick.clear();
    while (t.advanceRow()) {
      if (t.getLong(2) != 0) {
        continue; // paused
      }
      String queue = t.getString(0);
      try {
        Cron cron = crons.computeIfAbsent(t.getString(1), Cron::parse);
        nextTick.put(queue, cron.next(Instant.ofEpochMilli(t.getLong(3))));
      } catch (IllegalArgumentException e) {
        LOG.log(Level.WARNING, "frontend " + frontendId + ": schedule of queue " + queue + " is not run: "
            + e.getMessage());
      }
    }
    readAt = System.nanoTime();
  }

  private void round() {
    if (!running) {
      return;
    }
    try {
      if (readAt == 0 || System.nanoTime() - readAt > READ_EVERY_NANOS) {
        read();
      }
      Instant now = Instant.now();
      for (Map.Entry<String, Instant> e : Map.copyOf(nextTick).entrySet()) {
        if (!running) {
          return;
        }
        if (e.getValue().isAfter(now)) {
          continue;
        }
        VoltTable ticks = db.callAdmin("putting the due ticks of " + e.getKey() + " on its queue",
            SystemSchema.TICK_SCHEDULE, e.getKey()).getResults()[0];
        // Whether this call or another frontend's took the tick, the next one is known at the next read.
        nextTick.remove(e.getKey());
        if (ticks.getRowCount() > 0) {
          LOG.log(Level.DEBUG, "frontend " + frontendId + ": put " + ticks.getRowCount() + " tick(s) on "
              + e.getKey());
        }
      }
    } catch (RuntimeException e) {
      if (running) {
        LOG.log(Level.WARNING, "frontend " + frontendId + ": putting due schedule ticks on their queues failed; "
            + "retrying in " + ROUND_MS + " ms: " + e.getMessage());
      }
    }
  }
}
