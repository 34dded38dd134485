package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;

/**
 * Puts an invocation on a durable queue (issue 42, schema version 20) as {@code EnqueueItemAt} does (deduplication,
 * delayed start), with two more things stored: the item's priority (as {@code claim_rank}, its negation, so that
 * claims take the lowest rank first along an ascending index), refused with {@link #NO_PRIORITY} on a queue declared
 * without priority; and, on a partitioned queue, the item's partition key (as JSON text), by which the claims count
 * the queue's limits.
 */
public class EnqueueRankedItem extends JournaledProcedure {
  /** Nothing was enqueued: the queue is not declared. */
  public static final long UNKNOWN_QUEUE = EnqueueItem.UNKNOWN_QUEUE;
  /** Enqueued as a new item. */
  public static final long ENQUEUED = EnqueueItem.ENQUEUED;
  /** An item with the same ID or deduplication ID and the same request was there; it is the answer. */
  public static final long EXISTING = EnqueueItem.EXISTING;
  /** An item with the same ID or deduplication ID but another request was there; nothing was enqueued. */
  public static final long CONFLICT = EnqueueItem.CONFLICT;
  /** Nothing was enqueued: a priority other than 0 was given for a queue declared without priority. */
  public static final long NO_PRIORITY = 4;

  public final SQLStmt queue = new SQLStmt("SELECT priority_enabled, partitioned FROM APIARY_QUEUES WHERE name = ?;");
  public final SQLStmt byDedup = new SQLStmt("SELECT invocation_id, graph, request_hash, status FROM "
      + "APIARY_QUEUE_ITEMS WHERE queue_name = ? AND dedup_id = ?;");
  public final SQLStmt byId = new SQLStmt("SELECT invocation_id, graph, request_hash, status FROM "
      + "APIARY_QUEUE_ITEMS WHERE queue_name = ? AND invocation_id = ?;");
  public final SQLStmt insert = new SQLStmt("INSERT INTO APIARY_QUEUE_ITEMS (queue_name, invocation_id, dedup_id, "
      + "graph, request, request_hash, status, frontend, enqueued_at, started_at, finished_at, not_before, claim_rank, "
      + "part_key) VALUES (?, ?, ?, ?, ?, ?, 'QUEUED', NULL, ?, NULL, NULL, ?, ?, ?);");

  /**
   * @param queueName the queue (the partitioning parameter)
   * @param invocationId the invocation the item runs as (as stored: scoped by caller where credentials are required)
   * @param dedupId the deduplication ID (scoped likewise), or {@code null}
   * @param graph the graph to run
   * @param request the encoded request the item runs
   * @param requestHash a hash of graph, key, arguments and caller, compared with an existing item's
   * @param delayMs how long after this transaction the item is due, 0 for at once
   * @param priority the item's priority, 0 for none
   * @param partitionKey the item's partition key as JSON text, stored if the queue is partitioned
   * @return one row: outcome ({@link #ENQUEUED}, {@link #EXISTING}, {@link #CONFLICT}, {@link #UNKNOWN_QUEUE},
   *     {@link #NO_PRIORITY}), the item's invocation ID, and its graph and status (the existing one's, or the new one's)
   */
  public VoltTable run(String queueName, String invocationId, String dedupId, String graph, byte[] request,
                       long requestHash, long delayMs, int priority, String partitionKey) {
    voltQueueSQL(queue, queueName);
    if (dedupId != null) {
      voltQueueSQL(byDedup, queueName, dedupId);
    }
    voltQueueSQL(byId, queueName, invocationId);
    VoltTable[] found = voltExecuteSQL();
    VoltTable result = outcomeTable();
    if (!found[0].advanceRow()) {
      result.addRow(UNKNOWN_QUEUE, invocationId, graph, null);
      return committed(result); // wrote nothing
    }
    boolean prioritized = found[0].getLong(0) != 0;
    boolean partitioned = found[0].getLong(1) != 0;
    for (int i = 1; i < found.length; i++) {
      VoltTable existing = found[i];
      if (existing.advanceRow()) {
        boolean same = existing.getString("graph").equals(graph) && existing.getLong("request_hash") == requestHash;
        result.addRow(same ? EXISTING : CONFLICT, existing.getString("invocation_id"), existing.getString("graph"),
            existing.getString("status"));
        return committed(result); // wrote nothing
      }
    }
    if (priority != 0 && !prioritized) {
      result.addRow(NO_PRIORITY, invocationId, graph, null);
      return committed(result); // wrote nothing
    }
    // -MIN_VALUE overflows (and VoltDB reads MIN_VALUE as NULL): it ranks as -MAX_VALUE does, last
    int rank = priority == Integer.MIN_VALUE ? Integer.MAX_VALUE : -priority;
    voltQueueSQL(insert, queueName, invocationId, dedupId, graph, request, requestHash, getTransactionTime(),
        delayMs > 0 ? new java.util.Date(getTransactionTime().getTime() + delayMs) : null, rank,
        partitioned ? partitionKey : null);
    voltExecuteSQL(true);
    result.addRow(ENQUEUED, invocationId, graph, "QUEUED");
    return committed(result);
  }

  /** The table an enqueue answers with: outcome, the item's invocation ID, graph and status. */
  static VoltTable outcomeTable() {
    return new VoltTable(new VoltTable.ColumnInfo("outcome", org.voltdb.VoltType.BIGINT),
        new VoltTable.ColumnInfo("invocation_id", org.voltdb.VoltType.STRING),
        new VoltTable.ColumnInfo("graph", org.voltdb.VoltType.STRING),
        new VoltTable.ColumnInfo("status", org.voltdb.VoltType.STRING));
  }
}
