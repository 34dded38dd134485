package org.apiary.runtime.procedure;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.List;
import org.apiary.internal.Cron;
import org.apiary.internal.Json;
import org.apiary.internal.wire.WireRequest;
import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;
import org.voltdb.VoltType;

/**
 * What the schedule procedures share (issue 42): a schedule ({@code APIARY_SCHEDULES}) lives in the partition of its
 * queue ({@code schedule.NAME}), so one single-partition transaction reads it, decides its ticks by the transaction's
 * time and puts them on the queue as items. A tick's item is named by its invocation ID, {@code NAME@TIME}, and its
 * request runs the schedule's graph with the tick's time (ISO-8601, UTC) as its one argument, as caller
 * {@code schedule:NAME}: putting a tick there again (a trigger in the same instant, a backfill over ticks that ran)
 * finds the item and writes nothing, while queue items are retained.
 */
public abstract class ScheduleProcedure extends JournaledProcedure {
  public final SQLStmt schedule = new SQLStmt("SELECT name, graph, cron, key_json, catch_up, paused, last_tick "
      + "FROM APIARY_SCHEDULES WHERE queue_name = ?;");
  public final SQLStmt itemById = new SQLStmt("SELECT status FROM APIARY_QUEUE_ITEMS WHERE queue_name = ? "
      + "AND invocation_id = ?;");
  public final SQLStmt insertItem = new SQLStmt("INSERT INTO APIARY_QUEUE_ITEMS (queue_name, invocation_id, dedup_id, "
      + "graph, request, request_hash, status, frontend, enqueued_at, started_at, finished_at, not_before) "
      + "VALUES (?, ?, NULL, ?, ?, 0, 'QUEUED', NULL, ?, NULL, NULL, NULL);");

  /** The most ticks a backfill puts on the queue at once, and a tick computation examines. */
  public static final int MAX_TICKS = 10_000;

  /** The invocation ID of schedule {@code name}'s tick at {@code tick}. */
  public static String invocationId(String name, Instant tick) {
    return name + "@" + tick;
  }

  /** The caller a schedule's ticks run as. */
  public static String caller(String name) {
    return "schedule:" + name;
  }

  /** The columns every schedule procedure answers with: one row per tick it handled. */
  public static VoltTable ticks() {
    return new VoltTable(new VoltTable.ColumnInfo("tick", VoltType.TIMESTAMP),
        new VoltTable.ColumnInfo("invocation_id", VoltType.STRING), new VoltTable.ColumnInfo("enqueued", VoltType.TINYINT));
  }

  /** The schedule's row (advanced to it), or {@code null} if there is no such schedule. */
  protected VoltTable read(String queueName) {
    voltQueueSQL(schedule, queueName);
    VoltTable t = voltExecuteSQL()[0];
    return t.advanceRow() ? t : null;
  }

  /**
   * Puts these ticks of the schedule on its queue, each unless its item is there, and adds a row per tick to
   * {@code out}; the caller executes the batch (with whatever it queues after).
   */
  protected void enqueue(String queueName, VoltTable schedule, List<Instant> ticks, VoltTable out) {
    String name = schedule.getString("name");
    for (Instant tick : ticks) {
      voltQueueSQL(itemById, queueName, invocationId(name, tick));
    }
    VoltTable[] found = ticks.isEmpty() ? new VoltTable[0] : voltExecuteSQL();
    String keyJson = schedule.getString("key_json");
    JsonNode key = keyJson == null ? null : Json.parse(keyJson.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    for (int i = 0; i < ticks.size(); i++) {
      Instant tick = ticks.get(i);
      String id = invocationId(name, tick);
      boolean fresh = found[i].getRowCount() == 0;
      if (fresh) {
        byte[] request = WireRequest.invoke(id, schedule.getString("graph"), key,
            List.of(TextNode.valueOf(tick.toString())), caller(name)).toBytes();
        voltQueueSQL(insertItem, queueName, id, schedule.getString("graph"), request, getTransactionTime());
      }
      out.addRow(new org.voltdb.types.TimestampType(tick.toEpochMilli() * 1000), id, fresh ? 1 : 0);
    }
  }

  /**
   * The latest {@code count} ticks of {@code cron} after {@code after} and at or before {@code now}, oldest first.
   * Looks back an hour, a day, 31 days, a year, then to {@code after}, and stops at the first window holding
   * {@code count} ticks: every earlier tick would be dropped anyway.
   */
  public static List<Instant> latestTicks(Cron cron, Instant after, Instant now, int count) {
    long[] windowsSeconds = {3600, 86_400, 31L * 86_400, 366L * 86_400};
    ArrayDeque<Instant> kept = new ArrayDeque<>();
    for (int w = 0; w <= windowsSeconds.length; w++) {
      Instant from = w < windowsSeconds.length ? now.minusSeconds(windowsSeconds[w]) : after;
      boolean last = !from.isAfter(after);
      if (last) {
        from = after;
      }
      kept.clear();
      int examined = 0;
      for (Instant t = next(cron, from); t != null && !t.isAfter(now) && examined < 50 * MAX_TICKS;
           t = next(cron, t)) {
        examined++;
        kept.addLast(t);
        if (kept.size() > count) {
          kept.removeFirst();
        }
      }
      if (last || kept.size() >= count) {
        return List.copyOf(kept);
      }
    }
    return List.copyOf(kept);
  }

  /** The tick after {@code t}, or {@code null} if the expression matches nothing for years. */
  public static Instant next(Cron cron, Instant t) {
    try {
      return cron.next(t);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  public static Instant instant(org.voltdb.types.TimestampType t) {
    return Instant.ofEpochMilli(t.getTime() / 1000);
  }
}
