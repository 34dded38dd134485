package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;
import org.voltdb.VoltType;
import org.voltdb.types.TimestampType;

/**
 * One step of retention's sweep through one partition of a recorded-outputs table, in primary-key order: deletes the
 * expired rows among the next {@code scanRows} invocation IDs after a cursor, as a single-partition transaction, and
 * returns how many it deleted and where the next step starts ({@code NULL} once the partition's end is reached).
 *
 * <p>The tables have no index on their time column: maintaining one cost every recorded execution an index insert
 * and a delete, where the sweep reads each row once per retention pass. A cursor over the key, rather than the
 * key's order itself, keeps retention safe whatever IDs clients choose. One subclass per table, because a
 * partitioned procedure's routing parameter has its table's column type. Public, as are its members: VoltDB loads
 * the subclasses with its own class loader, which cannot reach package-private members.
 */
public abstract class SweepRecordedOutputs extends JournaledProcedure {
  /** The statements of a subclass's table: the step's last ID, and the deletes up to it and to the end. */
  public static final class Statements {
    /**
     * The invocation ID of the {@code scanRows}-th row after the cursor, if there is one. Ordered by the ID alone:
     * every version of the tables has an index that leads with it (the primary key, or on tables migrated from
     * version 3, an index of its own).
     */
    public final SQLStmt lastOfStep;
    /** Expired rows with IDs after the cursor and up to the step's last ID. */
    public final SQLStmt deleteUpTo;
    /** Expired rows with IDs after the cursor (the partition's last step). */
    public final SQLStmt deleteRest;

    public Statements(String table) {
      lastOfStep = new SQLStmt("SELECT invocation_id FROM " + table + " WHERE invocation_id > ? "
          + "ORDER BY invocation_id LIMIT 1 OFFSET ?;");
      deleteUpTo = new SQLStmt("DELETE FROM " + table + " WHERE invocation_id > ? AND invocation_id <= ? "
          + "AND recorded_at < ?;");
      deleteRest = new SQLStmt("DELETE FROM " + table + " WHERE invocation_id > ? AND recorded_at < ?;");
    }
  }

  /** Runs one step; the result has one row: rows deleted, and the cursor of the next step or {@code NULL}. */
  protected final VoltTable[] sweep(SQLStmt lastOfStep, SQLStmt deleteUpTo, SQLStmt deleteRest,
                                    TimestampType cutoff, String after, long scanRows) {
    voltQueueSQL(lastOfStep, after, scanRows - 1);
    VoltTable last = voltExecuteSQL()[0];
    String next = last.advanceRow() ? last.getString(0) : null;
    if (next != null) {
      voltQueueSQL(deleteUpTo, after, next, cutoff);
    } else {
      voltQueueSQL(deleteRest, after, cutoff);
    }
    long deleted = voltExecuteSQL(true)[0].asScalarLong();
    VoltTable result = new VoltTable(new VoltTable.ColumnInfo("deleted", VoltType.BIGINT),
        new VoltTable.ColumnInfo("next_after", VoltType.STRING));
    result.addRow(deleted, next);
    return committed(new VoltTable[] {result});
  }
}
