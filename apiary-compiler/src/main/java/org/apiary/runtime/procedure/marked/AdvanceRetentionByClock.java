package org.apiary.runtime.procedure.marked;

import org.apiary.runtime.SystemSchema;
import org.apiary.runtime.procedure.MarksPartitions;
import org.voltdb.SQLStmt;

/**
 * {@link org.apiary.runtime.procedure.AdvanceRetentionByClock}, marking its place in every partition's journal in a journaled cluster
 * ({@link MarksPartitions}).
 */
public class AdvanceRetentionByClock extends org.apiary.runtime.procedure.AdvanceRetentionByClock implements MarksPartitions {
  public final SQLStmt partitionMark = new SQLStmt(SystemSchema.PARTITION_MARK_SQL);

  @Override
  public SQLStmt partitionMark() {
    return partitionMark;
  }

  @Override
  public long run(long retentionMillis) {
    return super.run(retentionMillis);
  }
}
