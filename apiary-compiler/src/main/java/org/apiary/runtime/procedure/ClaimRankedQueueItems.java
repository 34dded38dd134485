package org.apiary.runtime.procedure;

import java.util.HashMap;
import java.util.Map;
import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;

/**
 * A frontend claims due queued items to run (issue 42, schema version 20): as {@code ClaimDueQueueItems}, one
 * single-partition transaction in the queue's partition, counting the limits from the database's own rows, but
 * taking waiting items highest priority first ({@code claim_rank} ascending, then oldest), and, on a partitioned queue,
 * counting the concurrency and rate limits per partition key: it looks at most {@link #SCAN} waiting items ahead in
 * claiming order and takes those whose key has room; the per-frontend limit bounds the whole queue.
 */
public class ClaimRankedQueueItems extends JournaledProcedure {
  /** How many waiting items of a partitioned queue one claim looks at (as {@code Queue.PARTITIONED_CLAIM_SCAN}). */
  public static final int SCAN = 1_000;

  public final SQLStmt limits = new SQLStmt("SELECT concurrency, per_frontend, rate_limit, rate_period_ms, "
      + "partitioned FROM APIARY_QUEUES WHERE name = ?;");
  public final SQLStmt running = new SQLStmt("SELECT COUNT(*) FROM APIARY_QUEUE_ITEMS WHERE queue_name = ? "
      + "AND status = 'RUNNING';");
  public final SQLStmt runningHere = new SQLStmt("SELECT COUNT(*) FROM APIARY_QUEUE_ITEMS WHERE queue_name = ? "
      + "AND status = 'RUNNING' AND frontend = ?;");
  public final SQLStmt startedSince = new SQLStmt("SELECT COUNT(*) FROM APIARY_QUEUE_ITEMS WHERE queue_name = ? "
      + "AND started_at > ?;");
  public final SQLStmt runningByKey = new SQLStmt("SELECT part_key, COUNT(*) FROM APIARY_QUEUE_ITEMS "
      + "WHERE queue_name = ? AND status = 'RUNNING' GROUP BY part_key ORDER BY part_key;");
  public final SQLStmt startedSinceByKey = new SQLStmt("SELECT part_key, COUNT(*) FROM APIARY_QUEUE_ITEMS "
      + "WHERE queue_name = ? AND started_at > ? GROUP BY part_key ORDER BY part_key;");
  public final SQLStmt first = new SQLStmt("SELECT invocation_id, request, part_key FROM APIARY_QUEUE_ITEMS "
      + "WHERE queue_name = ? AND status = 'QUEUED' AND (not_before IS NULL OR not_before <= ?) "
      + "ORDER BY queue_name, status, claim_rank, enqueued_at, invocation_id LIMIT ?;");
  public final SQLStmt claim = new SQLStmt("UPDATE APIARY_QUEUE_ITEMS SET status = 'RUNNING', frontend = ?, "
      + "started_at = ? WHERE queue_name = ? AND invocation_id = ? AND status = 'QUEUED';");

  /**
   * @param queueName the queue (the partitioning parameter)
   * @param frontend the claiming frontend
   * @param max the most items to claim now
   * @return the claimed items: invocation ID and request, empty if none (or the queue is not declared); and the claim's
   *     time ({@link QueueClaimTime}, not journaled: the journal's result hash covers the items alone)
   */
  public VoltTable[] run(String queueName, String frontend, int max) {
    voltQueueSQL(limits, queueName);
    VoltTable[] l = voltExecuteSQL();
    VoltTable claimed = new VoltTable(new VoltTable.ColumnInfo("invocation_id", org.voltdb.VoltType.STRING),
        new VoltTable.ColumnInfo("request", org.voltdb.VoltType.VARBINARY));
    java.util.Date at = getTransactionTime();
    if (!l[0].advanceRow()) {
      return new VoltTable[] {committed(claimed), QueueClaimTime.of(at)};
    }
    long concurrency = l[0].getLong(0);
    long perFrontend = l[0].getLong(1);
    long rateLimit = l[0].getLong(2);
    long ratePeriodMs = l[0].getLong(3);
    boolean partitioned = l[0].getLong(4) != 0;
    java.util.Date windowStart = new java.util.Date(at.getTime() - Math.max(ratePeriodMs, 1));
    voltQueueSQL(partitioned ? runningByKey : running, queueName);
    voltQueueSQL(runningHere, queueName, frontend);
    voltQueueSQL(partitioned ? startedSinceByKey : startedSince, queueName, windowStart);
    VoltTable[] counts = voltExecuteSQL();
    long room = max;
    if (perFrontend > 0) {
      room = Math.min(room, perFrontend - counts[1].asScalarLong());
    }
    if (!partitioned) {
      if (concurrency > 0) {
        room = Math.min(room, concurrency - counts[0].asScalarLong());
      }
      if (rateLimit > 0) {
        room = Math.min(room, rateLimit - counts[2].asScalarLong());
      }
    }
    if (room <= 0) {
      return new VoltTable[] {committed(claimed), QueueClaimTime.of(at)};
    }
    Map<String, Long> runningPerKey = partitioned ? perKey(counts[0]) : Map.of();
    Map<String, Long> startedPerKey = partitioned ? perKey(counts[2]) : Map.of();
    voltQueueSQL(first, queueName, at, (int) (partitioned ? SCAN : room));
    VoltTable waiting = voltExecuteSQL()[0];
    int taken = 0;
    while (taken < room && waiting.advanceRow()) {
      String id = waiting.getString(0);
      if (partitioned) {
        String key = String.valueOf(waiting.getString(2)); // "null" for an item stored before it was partitioned
        long runningNow = runningPerKey.getOrDefault(key, 0L);
        long startedNow = startedPerKey.getOrDefault(key, 0L);
        if ((concurrency > 0 && runningNow >= concurrency) || (rateLimit > 0 && startedNow >= rateLimit)) {
          continue;
        }
        runningPerKey.put(key, runningNow + 1);
        startedPerKey.put(key, startedNow + 1);
      }
      voltQueueSQL(claim, frontend, at, queueName, id);
      claimed.addRow(id, waiting.getVarbinary(1));
      taken++;
    }
    if (taken > 0) {
      voltExecuteSQL(true);
    }
    return new VoltTable[] {committed(claimed), QueueClaimTime.of(at)};
  }

  private static Map<String, Long> perKey(VoltTable t) {
    Map<String, Long> m = new HashMap<>();
    while (t.advanceRow()) {
      m.put(String.valueOf(t.getString(0)), t.getLong(1));
    }
    return m;
  }
}
