package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;
import org.voltdb.VoltType;
import org.voltdb.types.TimestampType;

/**
 * Retention's sweep step ({@link SweepRecordedOutputs}) that deletes nothing past retention's fence
 * ({@link RetentionFence}): the one the frontends' database user may call (schema version 14; the unfenced
 * {@code SweepRecorded*} are the administrator's). One subclass per table. Public, as are its members: VoltDB loads
 * the subclasses with its own class loader, which cannot reach package-private members.
 */
public abstract class FencedSweep extends SweepRecordedOutputs {
  public final SQLStmt retentionFence = new SQLStmt(RetentionFence.SQL);

  /** {@link #sweep} up to the earlier of {@code cutoff} and the fence; with no fence, deletes nothing and ends. */
  protected final VoltTable[] sweepBelowFence(SQLStmt lastOfStep, SQLStmt deleteUpTo, SQLStmt deleteRest,
                                              TimestampType cutoff, String after, long scanRows) {
    voltQueueSQL(retentionFence);
    TimestampType applied = RetentionFence.applied(voltExecuteSQL()[0], cutoff);
    if (applied == null) {
      VoltTable none = new VoltTable(new VoltTable.ColumnInfo("deleted", VoltType.BIGINT),
          new VoltTable.ColumnInfo("next_after", VoltType.STRING));
      none.addRow(0L, null); // nothing has expired yet: the partition needs no more steps
      return new VoltTable[] {none};
    }
    return sweep(lastOfStep, deleteUpTo, deleteRest, applied, after, scanRows);
  }
}
