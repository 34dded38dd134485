package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;

/**
 * Sets the shortest retention any frontend's retention pass applies ({@code APIARY_RETENTION_MINIMUM}, read by
 * {@link AdvanceRetentionByClock}): the administrator's, since only the administrator may call it (schema version 14).
 * A multi-partition write of a replicated table, journaled.
 */
public class SetMinimumRetention extends JournaledProcedure {
  /** The longest minimum that may be set: 100 years. */
  public static final long MAX_MINIMUM_MS = 36_525L * 24 * 3600 * 1000;

  public final SQLStmt set = new SQLStmt("UPSERT INTO APIARY_RETENTION_MINIMUM (id, minimum_ms) VALUES (0, ?);");

  /**
   * @param minimumMillis the shortest retention, in milliseconds: 0 to {@link #MAX_MINIMUM_MS}
   * @return 1
   */
  public long run(long minimumMillis) {
    if (minimumMillis < 0 || minimumMillis > MAX_MINIMUM_MS) {
      throw new VoltAbortException("a minimum retention is 0 to " + MAX_MINIMUM_MS + " ms, not " + minimumMillis);
    }
    voltQueueSQL(set, minimumMillis);
    return committed(voltExecuteSQL(true)[0].asScalarLong());
  }
}
