package org.apiary.runtime.procedure.marked;

import org.apiary.runtime.SystemSchema;
import org.apiary.runtime.procedure.MarksPartitions;
import org.voltdb.SQLStmt;
import org.voltdb.types.TimestampType;

/**
 * {@link org.apiary.runtime.procedure.AdvanceRetention}, marking its place in every partition's journal in a journaled cluster
 * ({@link MarksPartitions}).
 */
public class AdvanceRetention extends org.apiary.runtime.procedure.AdvanceRetention implements MarksPartitions {
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
