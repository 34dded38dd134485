package org.apiary.runtime.procedure;

import org.apiary.runtime.SystemSchema;
import org.voltdb.SQLStmt;
import org.voltdb.VoltProcedure;
import org.voltdb.VoltTable;
import org.voltdb.VoltType;

/**
 * A control operation of a journaled cluster's journals ({@code ServerJournal.control}), run on every site of every
 * node at one place in every partition's order: a multi-partition write of {@value SystemSchema#PARTITIONS}, one row
 * per partition, whose function reaches each node's journal. Not journaled itself.
 */
public class JournalControl extends VoltProcedure {
  public final SQLStmt control = new SQLStmt("UPDATE " + SystemSchema.PARTITIONS
      + " SET mark = apiary_journal_control(?, ?, partition_id, ?);");

  /**
   * @return one row: {@code partitions}, how many partitions it reached (the table's rows), and
   *     {@code catalog_version}, the version of the catalog it ran under
   */
  public VoltTable run(int operation, long arg) {
    org.apiary.runtime.journal.ServerJournal journal = org.apiary.runtime.journal.ServerJournal.current();
    voltQueueSQL(control, operation, arg, journal == null ? 0L : journal.secret());
    long reached = voltExecuteSQL(true)[0].asScalarLong();
    VoltTable result = new VoltTable(new VoltTable.ColumnInfo("partitions", VoltType.BIGINT),
        new VoltTable.ColumnInfo("catalog_version", VoltType.INTEGER));
    result.addRow(reached, org.apiary.runtime.journal.ServerJournal.catalogVersion());
    return result;
  }
}
