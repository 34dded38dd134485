package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;
import org.voltdb.types.TimestampType;

/** Retention's fenced sweep step in one partition of {@code APIARY_RECORDED_INTEGER} (see {@link FencedSweep}). */
public class FencedSweepInteger extends FencedSweep {
  private final Statements sql = new Statements("APIARY_RECORDED_INTEGER");
  public final SQLStmt lastOfStep = sql.lastOfStep;
  public final SQLStmt deleteUpTo = sql.deleteUpTo;
  public final SQLStmt deleteRest = sql.deleteRest;

  /**
   * @param partitionKey any key of the partition (routes the call)
   * @param cutoff records older than this are deleted, if retention's fence is not earlier
   * @param after the cursor: the step starts after this invocation ID ({@code ""} for the partition's first step)
   * @param scanRows how many rows the step covers
   * @return rows deleted, and the next step's cursor ({@code NULL} at the partition's end)
   */
  public VoltTable[] run(long partitionKey, TimestampType cutoff, String after, long scanRows) {
    return sweepBelowFence(lastOfStep, deleteUpTo, deleteRest, cutoff, after, scanRows);
  }
}
