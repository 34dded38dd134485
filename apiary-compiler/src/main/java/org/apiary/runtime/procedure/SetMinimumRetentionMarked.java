package org.apiary.runtime.procedure;

import org.apiary.runtime.SystemSchema;
import org.voltdb.SQLStmt;

/**
 * {@link SetMinimumRetention}, marking its place in every partition's journal in a journaled cluster
 * ({@link MarksPartitions}).
 */
public class SetMinimumRetentionMarked extends SetMinimumRetention implements MarksPartitions {
  public final SQLStmt partitionMark = new SQLStmt(SystemSchema.PARTITION_MARK_SQL);

  @Override
  public SQLStmt partitionMark() {
    return partitionMark;
  }

  @Override
  public long run(long minimumMillis) {
    return super.run(minimumMillis);
  }
}
