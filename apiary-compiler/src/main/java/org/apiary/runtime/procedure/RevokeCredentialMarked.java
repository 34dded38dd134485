package org.apiary.runtime.procedure;

import org.apiary.runtime.SystemSchema;
import org.voltdb.SQLStmt;

/**
 * {@link RevokeCredential}, marking its place in every partition's journal in a journaled cluster
 * ({@link MarksPartitions}).
 */
public class RevokeCredentialMarked extends RevokeCredential implements MarksPartitions {
  public final SQLStmt partitionMark = new SQLStmt(SystemSchema.PARTITION_MARK_SQL);

  @Override
  public SQLStmt partitionMark() {
    return partitionMark;
  }

  @Override
  public long run(String keyId) {
    return super.run(keyId);
  }
}
