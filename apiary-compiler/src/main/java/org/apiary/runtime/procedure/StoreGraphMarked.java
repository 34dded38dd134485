package org.apiary.runtime.procedure;

import org.apiary.runtime.SystemSchema;
import org.voltdb.SQLStmt;

/**
 * {@link StoreGraph}, marking its place in every partition's journal in a journaled cluster
 * ({@link MarksPartitions}).
 */
public class StoreGraphMarked extends StoreGraph implements MarksPartitions {
  public final SQLStmt partitionMark = new SQLStmt(SystemSchema.PARTITION_MARK_SQL);

  @Override
  public SQLStmt partitionMark() {
    return partitionMark;
  }

  @Override
  public long run(String name, int version, byte[] definition) {
    return super.run(name, version, definition);
  }
}
