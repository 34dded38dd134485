package org.apiary.runtime.procedure;

import org.apiary.runtime.SystemSchema;
import org.voltdb.SQLStmt;
import org.voltdb.VoltProcedure;

/**
 * A control operation of a journaled cluster's journals ({@code ServerJournal.control}), run on every site of every
 * node at one place in every partition's order: a multi-partition write of {@value SystemSchema#PARTITIONS}, one row
 * per partition, whose function reaches each node's journal. Not journaled itself.
 */
public class JournalControl extends VoltProcedure {
  public final SQLStmt control = new SQLStmt("UPDATE " + SystemSchema.PARTITIONS
      + " SET mark = apiary_journal_control(?, ?, partition_id);");

  /** @return how many partitions it reached (the table's rows) */
  public long run(int operation, long arg) {
    voltQueueSQL(control, operation, arg);
    return voltExecuteSQL(true)[0].asScalarLong();
  }
}
