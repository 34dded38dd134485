package org.apiary.runtime.procedure;

import org.apiary.runtime.SystemSchema;
import org.voltdb.SQLStmt;

/**
 * {@link ReassignInvocations}, marking its place in every partition's journal in a journaled cluster
 * ({@link MarksPartitions}).
 */
public class ReassignInvocationsMarked extends ReassignInvocations implements MarksPartitions {
  public final SQLStmt partitionMark = new SQLStmt(SystemSchema.PARTITION_MARK_SQL);

  @Override
  public SQLStmt partitionMark() {
    return partitionMark;
  }

  @Override
  public long run(String to, String from) {
    return super.run(to, from);
  }
}
