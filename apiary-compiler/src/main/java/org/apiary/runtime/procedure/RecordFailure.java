package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;
import org.voltdb.exceptions.ConstraintFailureException;

/**
 * Records a recorded function's failure (or a one-transaction invocation's final error) as its outputs, so a later
 * execution replays the failure instead of running; a second record of the same instance finds the table's primary key
 * taken and answers {@link #ALREADY_RECORDED}, so the first one stands. Fenced like the function's own transaction: nothing is recorded after the
 * invocation's deadline, or for an invocation that started before retention's cutoff, since a frontend that paused
 * that long could otherwise store a failure for an invocation another frontend completed and retention forgot. One
 * subclass per recorded-outputs table, because a single-partition procedure's first parameter has its partition
 * column's type.
 */
public abstract class RecordFailure extends JournaledProcedure {
  /** The failure was recorded now. */
  public static final long RECORDED = 1;
  /** The instance had a record already (another execution stored its outcome first); nothing was written. */
  public static final long ALREADY_RECORDED = 0;

  /**
   * The statements of one recorded-outputs table. Public: VoltDB loads the subclasses with a class loader of its own,
   * so they cannot reach package-private members here.
   */
  public static final class Statements {
    /** Inserts the failure's record. */
    public final SQLStmt insert;
    /** Reads retention's fence. */
    public final SQLStmt fence = new SQLStmt(org.apiary.runtime.SystemSchema.RETENTION_FENCE_SQL);

    /** The statements for {@code table}. */
    public Statements(String table) {
      insert = new SQLStmt("INSERT INTO " + table + " (pkey, invocation_id, function_name, outputs, request_hash, "
          + "caller, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?);");
    }
  }

  /**
   * Inserts the record unless a fence refuses it.
   *
   * @param requestHash the request's hash (one-transaction invocations), or VoltDB's BIGINT null
   * @param notBefore the invocation's retention fence ({@code Invocation.notBefore}), or 0 for none
   * @param deadline the latest transaction time it may be recorded at ({@code Invocation.deadline}), or 0 for none
   * @return {@link #RECORDED}, or {@link #ALREADY_RECORDED} if the instance had a record (which stands)
   */
  protected final long record(SQLStmt insert, SQLStmt fence, Object partitionKey, String invocationId,
                              String function, byte[] outputs, long requestHash, String caller, long notBefore,
                              long deadline) {
    long now = getTransactionTime().getTime();
    if (deadline > 0 && now > deadline) {
      throw new VoltAbortException("the failure of function '" + function + "' for invocation " + invocationId
          + " was not recorded: it reached the database " + (now - deadline) + " ms after the invocation's deadline");
    }
    voltQueueSQL(insert, partitionKey, invocationId, function, outputs, requestHash, caller, getTransactionTime());
    if (notBefore > 0) {
      voltQueueSQL(fence);
    }
    VoltTable[] done;
    try {
      done = voltExecuteSQL(true);
    } catch (ConstraintFailureException e) {
      return committed(ALREADY_RECORDED); // its only write failed: nothing to undo, and the first record stands
    }
    if (notBefore > 0 && done[1].advanceRow() && done[1].getLong(0) > notBefore) {
      throw new VoltAbortException("the failure of function '" + function + "' for invocation " + invocationId
          + " was not recorded: the invocation started before retention's cutoff, so its records may be gone");
    }
    return committed(RECORDED);
  }
}
