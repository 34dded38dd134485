package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;

/**
 * Moves every running invocation of a frontend to another: the takeover of a dead frontend's invocations, a
 * multi-partition write, journaled.
 */
public class ReassignInvocations extends JournaledProcedure {
  public final SQLStmt reassign = new SQLStmt("UPDATE APIARY_INVOCATIONS SET frontend = ? WHERE frontend = ? "
      + "AND status = 'RUNNING';");

  /** @return how many invocations moved */
  public long run(String to, String from) {
    voltQueueSQL(reassign, to, from);
    return committed(voltExecuteSQL(true)[0].asScalarLong());
  }
}
