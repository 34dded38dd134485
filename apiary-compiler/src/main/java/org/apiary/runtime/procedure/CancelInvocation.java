package org.apiary.runtime.procedure;

import java.util.List;
import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;

/**
 * Cancels a running invocation (issue 42): stores its outcome as {@code CANCELED}, with the reply its clients get,
 * by the same compare-and-set from RUNNING that stores every outcome, so the first outcome stored is the only one.
 * Single-partition (the invocation's ID), journaled. It is serialized with the claims of the invocation's attempts
 * and with the checks a frontend makes before starting each later function of it (both in this partition): no
 * function of the invocation starts after this commits, and one that started before it commits or rolls back as it
 * would. Where the server captures provenance, a cancel it stores is captured as the invocation's
 * {@code Invocations} row ({@link InvocationEnds}).
 */
public class CancelInvocation extends JournaledProcedure {
  public final SQLStmt cancel = new SQLStmt("UPDATE APIARY_INVOCATIONS SET status = 'CANCELED', result = ?, "
      + "finished_at = ? WHERE invocation_id = ? AND status = 'RUNNING';");
  /** Reads the cancelled invocation's log entry, for its provenance (schema version 17). */
  public final SQLStmt ended = new SQLStmt(InvocationEnds.ENTRY_SQL);

  /**
   * @param invocationId the invocation (as stored)
   * @param result the reply for its clients (an encoded {@code WireReply})
   * @return 1 if the invocation was running and is now cancelled, else 0 (it had ended, or is unknown)
   */
  public long run(String invocationId, byte[] result) {
    voltQueueSQL(cancel, result, getTransactionTime(), invocationId);
    var capture = InvocationEnds.capture();
    if (capture.isPresent()) {
      voltQueueSQL(ended, invocationId);
    }
    VoltTable[] done = voltExecuteSQL(true);
    long cancelled = done[0].asScalarLong();
    if (cancelled == 1 && capture.isPresent()) {
      InvocationEnds.row(invocationId, org.apiary.runtime.SystemSchema.STATUS_CANCELLED, done[1])
          .ifPresent(row -> InvocationEnds.offer(capture.get(), List.of(row)));
    }
    return committed(cancelled);
  }
}
