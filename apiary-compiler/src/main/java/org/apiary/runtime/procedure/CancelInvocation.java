package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;

/**
 * Cancels a running invocation (issue 42): stores its outcome as {@code CANCELED}, with the reply its clients get,
 * by the same compare-and-set from RUNNING that stores every outcome, so the first outcome stored is the only one.
 * Single-partition (the invocation's ID), journaled. It is serialized with the claims of the invocation's attempts
 * and with the checks a frontend makes before starting each later function of it (both in this partition): no
 * function of the invocation starts after this commits, and one that started before it commits or rolls back as it
 * would.
 */
public class CancelInvocation extends JournaledProcedure {
  public final SQLStmt cancel = new SQLStmt("UPDATE APIARY_INVOCATIONS SET status = 'CANCELED', result = ?, "
      + "finished_at = ? WHERE invocation_id = ? AND status = 'RUNNING';");

  /**
   * @param invocationId the invocation (as stored)
   * @param result the reply for its clients (an encoded {@code WireReply})
   * @return 1 if the invocation was running and is now cancelled, else 0 (it had ended, or is unknown)
   */
  public long run(String invocationId, byte[] result) {
    voltQueueSQL(cancel, result, getTransactionTime(), invocationId);
    return committed(voltExecuteSQL(true)[0].asScalarLong());
  }
}
