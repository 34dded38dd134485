package org.apiary.runtime.procedure;

import org.apiary.runtime.SystemSchema;
import org.voltdb.SQLStmt;

/**
 * {@link StoreFunction}, marking its place in every partition's journal in a journaled cluster
 * ({@link MarksPartitions}).
 */
public class StoreFunctionMarked extends StoreFunction implements MarksPartitions {
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
