package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;

/**
 * Hands a running invocation to a frontend for its next attempt, under a graph version: a single-partition write,
 * journaled (it replaced a SQL-only procedure, which the journal could not see).
 */
public class ClaimInvocation extends JournaledProcedure {
  public final SQLStmt claim = new SQLStmt("UPDATE APIARY_INVOCATIONS SET frontend = ?, graph_version = ?, "
      + "attempts = attempts + 1 WHERE invocation_id = ? AND status = 'RUNNING';");

  /** @return 1 if the invocation was running and is now the frontend's, else 0 */
  public long run(String frontend, long graphVersion, String invocationId) {
    voltQueueSQL(claim, frontend, graphVersion, invocationId);
    return committed(voltExecuteSQL(true)[0].asScalarLong());
  }
}
