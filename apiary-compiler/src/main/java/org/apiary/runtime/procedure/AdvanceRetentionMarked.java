package org.apiary.runtime.procedure;

import org.apiary.runtime.SystemSchema;
import org.voltdb.SQLStmt;
import org.voltdb.types.TimestampType;

/**
 * {@link AdvanceRetention}, marking its place in every partition's journal in a journaled cluster
 * ({@link MarksPartitions}).
 */
public class AdvanceRetentionMarked extends AdvanceRetention implements MarksPartitions {
  public final SQLStmt partitionMark = new SQLStmt(SystemSchema.PARTITION_MARK_SQL);

  @Override
  public SQLStmt partitionMark() {
    return partitionMark;
  }

  @Override
  public long run(TimestampType cutoff) {
    return super.run(cutoff);
  }
}
