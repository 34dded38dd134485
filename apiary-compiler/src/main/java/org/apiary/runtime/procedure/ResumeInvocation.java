package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;

/**
 * Resumes a failed or cancelled invocation (issue 42): deletes the failures its recorded functions stored (so the
 * next attempt runs those functions again instead of replaying their failure; their recorded outputs stay, so the
 * functions that committed are replayed, not run again) and makes it RUNNING again under a frontend, with its
 * attempts counted afresh, under its graph version or another. That frontend's recovery then runs it from its first
 * unfinished function (Algorithm 1). Multi-partition (the records are in their keys' partitions), journaled; the
 * administrator's.
 */
public class ResumeInvocation extends JournaledProcedure {
  /** The first bytes of a recorded failure ({@code FunctionErrors.recordedFailure}). */
  private static final byte[] FAILURE_MARKER = "APIARY-FUNCTION-FAILED".getBytes(
      java.nio.charset.StandardCharsets.US_ASCII);

  public final SQLStmt status = new SQLStmt("SELECT status FROM APIARY_INVOCATIONS WHERE invocation_id = ?;");
  public final SQLStmt integerRecords = new SQLStmt("SELECT pkey, function_name, outputs FROM APIARY_RECORDED_INTEGER "
      + "WHERE invocation_id = ?;");
  public final SQLStmt varcharRecords = new SQLStmt("SELECT pkey, function_name, outputs FROM APIARY_RECORDED_VARCHAR "
      + "WHERE invocation_id = ?;");
  public final SQLStmt varbinaryRecords = new SQLStmt("SELECT pkey, function_name, outputs FROM "
      + "APIARY_RECORDED_VARBINARY WHERE invocation_id = ?;");
  public final SQLStmt deleteInteger = new SQLStmt("DELETE FROM APIARY_RECORDED_INTEGER WHERE pkey = ? AND "
      + "invocation_id = ? AND function_name = ?;");
  public final SQLStmt deleteVarchar = new SQLStmt("DELETE FROM APIARY_RECORDED_VARCHAR WHERE pkey = ? AND "
      + "invocation_id = ? AND function_name = ?;");
  public final SQLStmt deleteVarbinary = new SQLStmt("DELETE FROM APIARY_RECORDED_VARBINARY WHERE pkey = ? AND "
      + "invocation_id = ? AND function_name = ?;");
  public final SQLStmt resume = new SQLStmt("UPDATE APIARY_INVOCATIONS SET status = 'RUNNING', result = NULL, "
      + "finished_at = NULL, attempts = 0, frontend = ?, graph_version = ? WHERE invocation_id = ? "
      + "AND status IN ('FAILED', 'CANCELED');");

  /** {@code run}'s answer when the invocation is not logged. */
  public static final long UNKNOWN = -1;
  /** {@code run}'s answer when it is running or ended with a result, so there is nothing to resume. */
  public static final long NOT_RESUMABLE = 0;

  /**
   * @param invocationId the invocation, as logged
   * @param frontend the frontend whose recovery runs it next
   * @param graphVersion the graph version its next attempts run under
   * @return 1 if it was failed or cancelled and now runs again, {@link #NOT_RESUMABLE} or {@link #UNKNOWN}
   */
  public long run(String invocationId, String frontend, long graphVersion) {
    voltQueueSQL(status, invocationId);
    VoltTable found = voltExecuteSQL()[0];
    if (!found.advanceRow()) {
      return UNKNOWN;
    }
    String current = found.getString(0);
    if (!"FAILED".equals(current) && !"CANCELED".equals(current)) {
      return NOT_RESUMABLE;
    }
    voltQueueSQL(integerRecords, invocationId);
    voltQueueSQL(varcharRecords, invocationId);
    voltQueueSQL(varbinaryRecords, invocationId);
    VoltTable[] records = voltExecuteSQL();
    SQLStmt[] deletes = {deleteInteger, deleteVarchar, deleteVarbinary};
    for (int t = 0; t < records.length; t++) {
      while (records[t].advanceRow()) {
        byte[] outputs = records[t].getVarbinary(2);
        if (isFailure(outputs)) {
          voltQueueSQL(deletes[t], records[t].get(0, records[t].getColumnType(0)), invocationId,
              records[t].getString(1));
        }
      }
    }
    voltQueueSQL(resume, frontend, graphVersion, invocationId);
    VoltTable[] done = voltExecuteSQL(true);
    return committed(done[done.length - 1].asScalarLong());
  }

  private static boolean isFailure(byte[] outputs) {
    if (outputs == null || outputs.length < FAILURE_MARKER.length) {
      return false;
    }
    for (int i = 0; i < FAILURE_MARKER.length; i++) {
      if (outputs[i] != FAILURE_MARKER[i]) {
        return false;
      }
    }
    return true;
  }
}
