package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;
import org.voltdb.types.TimestampType;

/** Retention's step in one partition of {@code APIARY_RECORDED_VARBINARY} (see {@link ExpireOldRows}). */
public class ExpireRecordedVarbinary extends ExpireOldRows {
  public final SQLStmt expire = new SQLStmt(sql("APIARY_RECORDED_VARBINARY", "recorded_at", "",
      "invocation_id, pkey, function_name"));

  /**
   * @param partitionKey any key of the partition (routes the call)
   * @param cutoff records older than this are deleted
   * @param limit the most rows this step deletes
   * @return rows deleted
   */
  public long run(byte[] partitionKey, TimestampType cutoff, long limit) {
    return expire(expire, cutoff, limit);
  }
}
