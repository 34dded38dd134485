package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;
import org.voltdb.types.TimestampType;

/**
 * Moves retention's fence ({@code APIARY_RETENTION}) forward by the database's own clock before a retention pass
 * deletes anything older; the frontends' retention procedure (schema version 14). The cutoff is the transaction's time
 * less the retention, where the retention is the longest of the one asked for, {@value #MIN_RETENTION_MS} ms (the
 * margin for clock skew between the database's hosts) and the minimum an administrator set
 * ({@code SetMinimumRetention}); it is kept at least that margin before the start of the oldest running invocation,
 * and never moves back. So whoever may call it (the frontends' database user) can keep records longer, but cannot put
 * the fence ahead of the database's clock (which refused every invocation for good), past a running invocation, or
 * nearer than the administrator's minimum. A multi-partition transaction (it reads every partition's running
 * invocations in the same transaction as it writes the fence, so none can begin unseen in between), once per pass.
 *
 * <p>{@code AdvanceRetention}, which takes any cutoff, is left to the administrator.
 */
public class AdvanceRetentionByClock extends JournaledProcedure {
  /** The least retention in effect, whatever is asked: the margin for clock skew between the database's hosts. */
  public static final long MIN_RETENTION_MS = 1_000;

  public final SQLStmt fence = new SQLStmt("SELECT cutoff FROM APIARY_RETENTION WHERE id = 0;");
  public final SQLStmt minimum = new SQLStmt("SELECT minimum_ms FROM APIARY_RETENTION_MINIMUM WHERE id = 0;");
  public final SQLStmt oldestRunning = new SQLStmt("SELECT MIN(started_at) FROM APIARY_INVOCATIONS "
      + "WHERE status = 'RUNNING';");
  public final SQLStmt insert = new SQLStmt("INSERT INTO APIARY_RETENTION (id, cutoff) VALUES (0, ?);");
  public final SQLStmt advance = new SQLStmt("UPDATE APIARY_RETENTION SET cutoff = ? WHERE id = 0;");

  /**
   * Advances the fence.
   *
   * @param retentionMillis how long the caller keeps ended invocations and recorded outputs
   * @return the fence after this call, in microseconds since the epoch (0: none yet); the coming pass deletes what is
   *     older
   */
  public long run(long retentionMillis) {
    voltQueueSQL(fence);
    voltQueueSQL(minimum);
    voltQueueSQL(oldestRunning);
    VoltTable[] read = voltExecuteSQL();
    VoltTable stored = read[0];
    long storedMicros = stored.advanceRow() ? stored.getTimestampAsLong(0) : 0L;
    long keep = Math.max(retentionMillis, MIN_RETENTION_MS);
    if (read[1].advanceRow()) {
      keep = Math.max(keep, read[1].getLong(0));
    }
    long now = getTransactionTime().getTime();
    if (keep >= now) {
      return storedMicros; // nothing is that old
    }
    long cutoffMillis = now - keep;
    VoltTable oldest = read[2];
    if (oldest.advanceRow()) {
      long startedMicros = oldest.getTimestampAsLong(0);
      if (!oldest.wasNull()) {
        cutoffMillis = Math.min(cutoffMillis, startedMicros / 1000L - MIN_RETENTION_MS);
      }
    }
    long cutoffMicros = cutoffMillis * 1000L;
    if (cutoffMillis <= 0 || cutoffMicros <= storedMicros) {
      return storedMicros;
    }
    voltQueueSQL(stored.getRowCount() == 0 ? insert : advance, new TimestampType(cutoffMicros));
    voltExecuteSQL(true);
    return committed(cutoffMicros);
  }
}
