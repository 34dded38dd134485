package org.apiary.runtime.procedure.marked;

import org.apiary.runtime.SystemSchema;
import org.apiary.runtime.procedure.MarksPartitions;
import org.voltdb.SQLStmt;

/**
 * {@link org.apiary.runtime.procedure.StoreFunction}, marking its place in every partition's journal in a journaled cluster
 * ({@link MarksPartitions}).
 */
public class StoreFunction extends org.apiary.runtime.procedure.StoreFunction implements MarksPartitions {
  public final SQLStmt partitionMark = new SQLStmt(SystemSchema.PARTITION_MARK_SQL);

  @Override
  public SQLStmt partitionMark() {
    return partitionMark;
  }

  @Override
  public long run(String name, String kind, String keyType, String partitionTable, String partitionColumn,
                  byte hasWrites, String functionClass, String procedureClass) {
    return super.run(name, kind, keyType, partitionTable, partitionColumn, hasWrites,
        functionClass, procedureClass);
  }
}
