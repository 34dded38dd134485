package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;

/**
 * Puts an invocation on a durable queue (issue 42): one single-partition transaction in the queue's partition, which
 * holds all of that queue's items, so the deduplication check and the insert cannot interleave with another enqueue
 * of the queue. An item is named by its invocation ID and, optionally, by a deduplication ID: an item already there
 * under either (queued, running or ended, until retention deletes it) is the answer, if its request is the same
 * (same graph and request hash); with another request nothing is written and the existing item is reported as a
 * conflict. The queue must be declared. An item may wait {@code delayMs} before it is due ({@code not_before}, by
 * this transaction's clock): a delayed start (schema version 19; {@code EnqueueItem}, version 18's, has no delay).
 */
public class EnqueueItemAt extends JournaledProcedure {
  /** Nothing was enqueued: the queue is not declared. */
  public static final long UNKNOWN_QUEUE = EnqueueItem.UNKNOWN_QUEUE;
  /** Enqueued as a new item. */
  public static final long ENQUEUED = EnqueueItem.ENQUEUED;
  /** An item with the same ID or deduplication ID and the same request was there; it is the answer. */
  public static final long EXISTING = EnqueueItem.EXISTING;
  /** An item with the same ID or deduplication ID but another request was there; nothing was enqueued. */
  public static final long CONFLICT = EnqueueItem.CONFLICT;

  public final SQLStmt queue = new SQLStmt("SELECT name FROM APIARY_QUEUES WHERE name = ?;");
  public final SQLStmt byDedup = new SQLStmt("SELECT invocation_id, graph, request_hash, status FROM "
      + "APIARY_QUEUE_ITEMS WHERE queue_name = ? AND dedup_id = ?;");
  public final SQLStmt byId = new SQLStmt("SELECT invocation_id, graph, request_hash, status FROM "
      + "APIARY_QUEUE_ITEMS WHERE queue_name = ? AND invocation_id = ?;");
  public final SQLStmt insert = new SQLStmt("INSERT INTO APIARY_QUEUE_ITEMS (queue_name, invocation_id, dedup_id, "
      + "graph, request, request_hash, status, frontend, enqueued_at, started_at, finished_at, not_before) "
      + "VALUES (?, ?, ?, ?, ?, ?, 'QUEUED', NULL, ?, NULL, NULL, ?);");

  /**
   * @param queueName the queue (the partitioning parameter)
   * @param invocationId the invocation the item runs as (as stored: scoped by caller where credentials are required)
   * @param dedupId the deduplication ID (scoped likewise), or {@code null}
   * @param graph the graph to run
   * @param request the encoded request the item runs
   * @param requestHash a hash of graph, key, arguments and caller, compared with an existing item's
   * @param delayMs how long after this transaction the item is due, 0 for at once
   * @return one row: outcome ({@link #ENQUEUED}, {@link #EXISTING}, {@link #CONFLICT}, {@link #UNKNOWN_QUEUE}), the
   *     item's invocation ID, and its graph and status (the existing one's, or the new one's)
   */
  public VoltTable run(String queueName, String invocationId, String dedupId, String graph, byte[] request,
                       long requestHash, long delayMs) {
    voltQueueSQL(queue, queueName);
    if (dedupId != null) {
      voltQueueSQL(byDedup, queueName, dedupId);
    }
    voltQueueSQL(byId, queueName, invocationId);
    VoltTable[] found = voltExecuteSQL();
    VoltTable result = new VoltTable(new VoltTable.ColumnInfo("outcome", org.voltdb.VoltType.BIGINT),
        new VoltTable.ColumnInfo("invocation_id", org.voltdb.VoltType.STRING),
        new VoltTable.ColumnInfo("graph", org.voltdb.VoltType.STRING),
        new VoltTable.ColumnInfo("status", org.voltdb.VoltType.STRING));
    if (found[0].getRowCount() == 0) {
      result.addRow(UNKNOWN_QUEUE, invocationId, graph, null);
      return committed(result); // wrote nothing
    }
    for (int i = 1; i < found.length; i++) {
      VoltTable existing = found[i];
      if (existing.advanceRow()) {
        boolean same = existing.getString("graph").equals(graph) && existing.getLong("request_hash") == requestHash;
        result.addRow(same ? EXISTING : CONFLICT, existing.getString("invocation_id"), existing.getString("graph"),
            existing.getString("status"));
        return committed(result); // wrote nothing
      }
    }
    voltQueueSQL(insert, queueName, invocationId, dedupId, graph, request, requestHash, getTransactionTime(),
        delayMs > 0 ? new java.util.Date(getTransactionTime().getTime() + delayMs) : null);
    voltExecuteSQL(true);
    result.addRow(ENQUEUED, invocationId, graph, "QUEUED");
    return committed(result);
  }
}
