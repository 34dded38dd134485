package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;

/**
 * A frontend claims queued items to run (issue 42): one single-partition transaction in the queue's partition, which
 * holds every item of the queue, so the limits are counted from the database's own rows and no two claims
 * interleave. It counts the items running (across every frontend, and on this one) and those started within the
 * rate's window, claims at most as many of the oldest queued items as every limit leaves room for (and at most
 * {@code max}), and marks them running on this frontend, started now (the transaction's time). An item is due once
 * its {@code not_before} time (a delayed start, schema version 19) has passed; {@code ClaimQueueItems}, version 18's,
 * claims regardless.
 */
public class ClaimDueQueueItems extends JournaledProcedure {
  public final SQLStmt limits = new SQLStmt("SELECT concurrency, per_frontend, rate_limit, rate_period_ms FROM "
      + "APIARY_QUEUES WHERE name = ?;");
  public final SQLStmt running = new SQLStmt("SELECT COUNT(*) FROM APIARY_QUEUE_ITEMS WHERE queue_name = ? "
      + "AND status = 'RUNNING';");
  public final SQLStmt runningHere = new SQLStmt("SELECT COUNT(*) FROM APIARY_QUEUE_ITEMS WHERE queue_name = ? "
      + "AND status = 'RUNNING' AND frontend = ?;");
  public final SQLStmt startedSince = new SQLStmt("SELECT COUNT(*) FROM APIARY_QUEUE_ITEMS WHERE queue_name = ? "
      + "AND started_at > ?;");
  public final SQLStmt oldest = new SQLStmt("SELECT invocation_id, request FROM APIARY_QUEUE_ITEMS WHERE queue_name = ? "
      + "AND status = 'QUEUED' AND (not_before IS NULL OR not_before <= ?) "
      + "ORDER BY queue_name, status, enqueued_at, invocation_id LIMIT ?;");
  public final SQLStmt claim = new SQLStmt("UPDATE APIARY_QUEUE_ITEMS SET status = 'RUNNING', frontend = ?, "
      + "started_at = ? WHERE queue_name = ? AND invocation_id = ? AND status = 'QUEUED';");

  /**
   * @param queueName the queue (the partitioning parameter)
   * @param frontend the claiming frontend
   * @param max the most items to claim now
   * @return the claimed items: invocation ID and request; empty if none (or the queue is not declared)
   */
  public VoltTable run(String queueName, String frontend, int max) {
    voltQueueSQL(limits, queueName);
    VoltTable[] l = voltExecuteSQL();
    VoltTable none = new VoltTable(new VoltTable.ColumnInfo("invocation_id", org.voltdb.VoltType.STRING),
        new VoltTable.ColumnInfo("request", org.voltdb.VoltType.VARBINARY));
    if (!l[0].advanceRow()) {
      return committed(none);
    }
    long concurrency = l[0].getLong(0);
    long perFrontend = l[0].getLong(1);
    long rateLimit = l[0].getLong(2);
    long ratePeriodMs = l[0].getLong(3);
    long now = getTransactionTime().getTime();
    voltQueueSQL(running, queueName);
    voltQueueSQL(runningHere, queueName, frontend);
    voltQueueSQL(startedSince, queueName, new java.util.Date(now - Math.max(ratePeriodMs, 1)));
    VoltTable[] counts = voltExecuteSQL();
    long room = max;
    if (concurrency > 0) {
      room = Math.min(room, concurrency - counts[0].asScalarLong());
    }
    if (perFrontend > 0) {
      room = Math.min(room, perFrontend - counts[1].asScalarLong());
    }
    if (rateLimit > 0) {
      room = Math.min(room, rateLimit - counts[2].asScalarLong());
    }
    if (room <= 0) {
      return committed(none);
    }
    voltQueueSQL(oldest, queueName, getTransactionTime(), (int) room);
    VoltTable picked = voltExecuteSQL()[0];
    if (picked.getRowCount() == 0) {
      return committed(none);
    }
    java.util.Date at = getTransactionTime();
    while (picked.advanceRow()) {
      voltQueueSQL(claim, frontend, at, queueName, picked.getString(0));
    }
    voltExecuteSQL(true);
    picked.resetRowPosition();
    return committed(picked);
  }
}
