package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;

/** Extends (or creates) a frontend's lease by the database's clock: a single-partition write, journaled. */
public class RenewLease extends JournaledProcedure {
  public final SQLStmt renew = new SQLStmt("UPSERT INTO APIARY_FRONTENDS (frontend, endpoint, lease_expires_ms) "
      + "VALUES (?, ?, ?);");

  /**
   * @param forMillis how long from this transaction's time the lease lasts (negative: it has already expired)
   * @return 1
   */
  public long run(String frontend, String endpoint, long forMillis) {
    voltQueueSQL(renew, frontend, endpoint, getTransactionTime().getTime() + forMillis);
    return committed(voltExecuteSQL(true)[0].asScalarLong());
  }
}
