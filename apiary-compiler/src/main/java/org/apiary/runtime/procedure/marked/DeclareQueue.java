package org.apiary.runtime.procedure.marked;

import org.apiary.runtime.SystemSchema;
import org.apiary.runtime.procedure.MarksPartitions;
import org.voltdb.SQLStmt;

/**
 * {@link org.apiary.runtime.procedure.DeclareQueue}, marking its place in every partition's journal in a journaled
 * cluster ({@link MarksPartitions}).
 */
public class DeclareQueue extends org.apiary.runtime.procedure.DeclareQueue implements MarksPartitions {
  public final SQLStmt partitionMark = new SQLStmt(SystemSchema.PARTITION_MARK_SQL);

  @Override
  public SQLStmt partitionMark() {
    return partitionMark;
  }

  @Override
  public long run(String name, int concurrency, int perFrontend, int rateLimit, long ratePeriodMs, byte priority,
                  byte partitioned) {
    return super.run(name, concurrency, perFrontend, rateLimit, ratePeriodMs, priority, partitioned);
  }
}
