package org.apiary.frontend;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apiary.InvalidRequestException;
import org.apiary.Schedule;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.Json;
import org.apiary.runtime.SystemSchema;
import org.voltdb.VoltTable;

/**
 * Managing schedules at run time (issue 42), through an administrator's connection to the database: create one
 * (as {@link org.apiary.Application#withSchedules} does at registration), list, pause, resume, trigger, backfill,
 * delete. {@code apiary schedules ...} is this from the command line. Every operation is one single-partition
 * transaction in the schedule's partition (creating one also stores its queue, a multi-partition write).
 */
public final class Schedules {
  private Schedules() {}

  /**
   * A schedule as stored: its place (last tick) and whether it is paused, with how many of its ticks are waiting.
   *
   * @param expression the cron expression's fields (without the zone)
   * @param zone the time zone they are matched in ({@code UTC} unless one was given)
   */
  public record Stored(String name, String expression, String zone, String graph, String partitionKeyJson,
                       int catchUp, boolean paused, Instant lastTick, Instant nextTick, long waiting) {}

  /** One tick a trigger or backfill handled: its time, invocation ID, and whether it was put on the queue now. */
  public record Tick(Instant time, String invocationId, boolean enqueued) {}

  /**
   * Stores a schedule and its queue: a new one's first tick is the first after now; one stored again keeps its last
   * tick and pause and takes the rest from {@code schedule}. The graph must be registered.
   *
   * @throws InvalidRequestException if the graph is not registered
   */
  public static void create(ApiaryDatabase db, Schedule schedule) {
    Objects.requireNonNull(schedule, "schedule");
    VoltTable g = db.callAdmin("reading graph '" + schedule.graph() + "'", "@AdHoc", "SELECT COUNT(*) FROM "
        + SystemSchema.GRAPHS + " WHERE name = ?", schedule.graph()).getResults()[0];
    if (g.asScalarLong() == 0) {
      throw new InvalidRequestException("schedule '" + schedule.name() + "' runs graph '" + schedule.graph()
          + "', which is not registered; nothing was stored");
    }
    store(db, schedule);
  }

  /** Stores a schedule and its queue (registration has checked the graph). */
  static void store(ApiaryDatabase db, Schedule schedule) {
    String queue = schedule.queueName();
    db.callAdmin("storing queue '" + queue + "'", SystemSchema.STORE_QUEUE, queue, 0, 0, 0, 0L);
    String key = schedule.partitionKey() == null ? null : Json.tree(schedule.partitionKey()).toString();
    db.callAdmin("storing schedule '" + schedule.name() + "'", SystemSchema.STORE_SCHEDULE, queue, schedule.name(),
        schedule.graph(), schedule.storedExpression(), key, schedule.missed().catchUp());
  }

  /** Every schedule, by name. */
  public static List<Stored> list(ApiaryDatabase db) {
    VoltTable t = db.callAdmin("reading the schedules", "@AdHoc", "SELECT name, cron, graph, key_json, catch_up, "
        + "paused, SINCE_EPOCH(MILLISECOND, last_tick), queue_name FROM " + SystemSchema.SCHEDULES + " ORDER BY name")
        .getResults()[0];
    VoltTable w = db.callAdmin("counting the schedules' waiting ticks", "@AdHoc", "SELECT queue_name, COUNT(*) FROM "
        + SystemSchema.QUEUE_ITEMS + " WHERE queue_name LIKE 'schedule.%' AND status IN ('QUEUED', 'RUNNING') "
        + "GROUP BY queue_name").getResults()[0];
    java.util.Map<String, Long> waiting = new java.util.HashMap<>();
    while (w.advanceRow()) {
      waiting.put(w.getString(0), w.getLong(1));
    }
    List<Stored> all = new ArrayList<>();
    while (t.advanceRow()) {
      Instant last = Instant.ofEpochMilli(t.getLong(6));
      Instant next;
      String fields = t.getString(1);
      String zone = "UTC";
      try {
        org.apiary.internal.Cron cron = org.apiary.internal.Cron.parse(t.getString(1));
        fields = cron.fields();
        zone = cron.zone().getId().equals("Z") ? "UTC" : cron.zone().getId();
        next = cron.next(last);
      } catch (IllegalArgumentException e) {
        next = null; // matches nothing for years, or a zone this JVM does not know: shown as never
      }
      all.add(new Stored(t.getString(0), fields, zone, t.getString(2), t.getString(3), (int) t.getLong(4),
          t.getLong(5) != 0, last, next, waiting.getOrDefault(t.getString(7), 0L)));
    }
    return all;
  }

  /**
   * Pauses a schedule: no tick of it is put on its queue until it is resumed (ticks already there still run).
   *
   * @throws InvalidRequestException if there is no such schedule
   */
  public static void pause(ApiaryDatabase db, String name) {
    setPaused(db, name, 1);
  }

  /**
   * Resumes a schedule: its next tick is the first after now (the ticks of the pause are not run; backfill them).
   *
   * @throws InvalidRequestException if there is no such schedule
   */
  public static void resume(ApiaryDatabase db, String name) {
    setPaused(db, name, 0);
  }

  private static void setPaused(ApiaryDatabase db, String name, int paused) {
    long found = db.callAdmin((paused != 0 ? "pausing" : "resuming") + " schedule '" + name + "'",
        SystemSchema.PAUSE_SCHEDULE, Schedule.queueName(name), paused).getResults()[0].asScalarLong();
    if (found == 0) {
      throw unknown(name);
    }
  }

  /**
   * Runs a schedule now: puts a tick at the database's current time on its queue, paused or not.
   *
   * @return the tick
   * @throws InvalidRequestException if there is no such schedule
   */
  public static Tick trigger(ApiaryDatabase db, String name) {
    List<Tick> ticks = ticks(db.callAdmin("triggering schedule '" + name + "'", SystemSchema.TRIGGER_SCHEDULE,
        Schedule.queueName(name)).getResults()[0]);
    if (ticks.isEmpty()) {
      throw unknown(name);
    }
    return ticks.get(0);
  }

  /**
   * Backfills a schedule: puts every tick from {@code from} to {@code to} (both inclusive) on its queue, each unless a
   * tick of that time is there already (one that ran, within the retention of queue items, does not run again).
   *
   * @return every tick of the range, and whether it was put on the queue now
   * @throws InvalidRequestException if there is no such schedule, {@code to} is before {@code from}, or the range
   *     holds more than 10,000 ticks (nothing is put on the queue)
   */
  public static List<Tick> backfill(ApiaryDatabase db, String name, Instant from, Instant to) {
    if (to.isBefore(from)) {
      throw new InvalidRequestException("a backfill's range ends (" + to + ") before it starts (" + from + ")");
    }
    VoltTable t = db.callAdmin("backfilling schedule '" + name + "'", SystemSchema.BACKFILL_SCHEDULE,
        Schedule.queueName(name), from.toEpochMilli(), to.toEpochMilli()).getResults()[0];
    if (t.getRowCount() == 0) {
      boolean known = list(db).stream().anyMatch(s -> s.name().equals(name));
      if (!known) {
        throw unknown(name);
      }
      return List.of();
    }
    t.advanceRow();
    if (t.getString(1) == null) {
      throw new InvalidRequestException("the range " + from + " to " + to + " holds more than 10000 ticks of schedule '"
          + name + "'; backfill it in parts (nothing was put on the queue)");
    }
    t.resetRowPosition();
    return ticks(t);
  }

  /**
   * Deletes a schedule: no tick of it is put on its queue after this; ticks already there still run.
   *
   * @throws InvalidRequestException if there is no such schedule
   */
  public static void delete(ApiaryDatabase db, String name) {
    if (db.callAdmin("deleting schedule '" + name + "'", SystemSchema.DELETE_SCHEDULE, Schedule.queueName(name))
        .getResults()[0].asScalarLong() == 0) {
      throw unknown(name);
    }
  }

  private static List<Tick> ticks(VoltTable t) {
    List<Tick> all = new ArrayList<>();
    while (t.advanceRow()) {
      all.add(new Tick(Instant.ofEpochMilli(t.getTimestampAsLong(0) / 1000), t.getString(1), t.getLong(2) != 0));
    }
    return all;
  }

  private static InvalidRequestException unknown(String name) {
    return new InvalidRequestException("there is no schedule named '" + name + "'");
  }
}
