package org.apiary.runtime.procedure.marked;

import org.apiary.runtime.SystemSchema;
import org.apiary.runtime.procedure.MarksPartitions;
import org.voltdb.SQLStmt;

/**
 * {@link org.apiary.runtime.procedure.ReassignInvocations}, marking its place in every partition's journal in a journaled cluster
 * ({@link MarksPartitions}).
 */
public class ReassignInvocations extends org.apiary.runtime.procedure.ReassignInvocations implements MarksPartitions {
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
