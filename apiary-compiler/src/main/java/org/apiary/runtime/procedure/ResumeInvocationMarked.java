package org.apiary.runtime.procedure;

import org.apiary.runtime.SystemSchema;
import org.voltdb.SQLStmt;

/**
 * {@link ResumeInvocation}, marking its place in every partition's journal in a journaled cluster
 * ({@link MarksPartitions}).
 */
public class ResumeInvocationMarked extends ResumeInvocation implements MarksPartitions {
  public final SQLStmt partitionMark = new SQLStmt(SystemSchema.PARTITION_MARK_SQL);

  @Override
  public SQLStmt partitionMark() {
    return partitionMark;
  }

  @Override
  public long run(String invocationId, String frontend, long graphVersion) {
    return super.run(invocationId, frontend, graphVersion);
  }
}
