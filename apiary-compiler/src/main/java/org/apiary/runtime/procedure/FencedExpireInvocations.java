package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;
import org.voltdb.types.TimestampType;

/**
 * Retention's step in one partition of {@code APIARY_INVOCATIONS} ({@link ExpireInvocations}) that deletes nothing
 * past retention's fence ({@link RetentionFence}): the one the frontends' database user may call (schema version 14;
 * the unfenced {@code ExpireInvocations} is the administrator's).
 */
public class FencedExpireInvocations extends ExpireOldRows {
  public final SQLStmt retentionFence = new SQLStmt(RetentionFence.SQL);
  public final SQLStmt expire = new SQLStmt(sql("APIARY_INVOCATIONS", "finished_at", " AND status <> 'RUNNING'",
      "invocation_id"));

  /**
   * @param partitionKey any key of the partition (routes the call)
   * @param cutoff ended invocations that finished before this are deleted, if retention's fence is not earlier
   * @param limit the most rows this step deletes
   * @return rows deleted
   */
  public long run(String partitionKey, TimestampType cutoff, long limit) {
    voltQueueSQL(retentionFence);
    TimestampType applied = RetentionFence.applied(voltExecuteSQL()[0], cutoff);
    return applied == null ? 0 : expire(expire, applied, limit);
  }
}
