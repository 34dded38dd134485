package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;
import org.voltdb.types.TimestampType;

/** Retention's step in one partition of {@code APIARY_INVOCATIONS}: ended invocations only (see {@link ExpireOldRows}). */
public class ExpireInvocations extends ExpireOldRows {
  public final SQLStmt expire = new SQLStmt(sql("APIARY_INVOCATIONS", "finished_at", " AND status <> 'RUNNING'",
      "invocation_id"));

  /**
   * @param partitionKey any key of the partition (routes the call)
   * @param cutoff ended invocations that finished before this are deleted
   * @param limit the most rows this step deletes
   * @return rows deleted
   */
  public long run(String partitionKey, TimestampType cutoff, long limit) {
    return expire(expire, cutoff, limit);
  }
}
