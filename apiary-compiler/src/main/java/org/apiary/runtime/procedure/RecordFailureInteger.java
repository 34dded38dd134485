package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;

/** Records a failure in {@code APIARY_RECORDED_INTEGER} (see {@link RecordFailure}). */
public class RecordFailureInteger extends RecordFailure {
  private final Statements sql = new Statements("APIARY_RECORDED_INTEGER");
  public final SQLStmt insert = sql.insert;
  public final SQLStmt fence = sql.fence;

  /** See {@link RecordFailure#record}; {@code partitionKey} routes the call. */
  public long run(long partitionKey, String invocationId, String function, byte[] outputs, long requestHash,
                  String caller, long notBefore, long deadline) {
    return record(insert, fence, partitionKey, invocationId, function, outputs, requestHash, caller, notBefore,
        deadline);
  }
}
