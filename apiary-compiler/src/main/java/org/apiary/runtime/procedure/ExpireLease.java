package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;

/** Deletes a frontend's lease if it has expired by the database's clock: a single-partition write, journaled. */
public class ExpireLease extends JournaledProcedure {
  public final SQLStmt expire = new SQLStmt("DELETE FROM APIARY_FRONTENDS WHERE frontend = ? AND "
      + "lease_expires_ms < ?;");

  /** @return 1 if the lease had expired and is gone, else 0 */
  public long run(String frontend) {
    voltQueueSQL(expire, frontend, getTransactionTime().getTime());
    long deleted = voltExecuteSQL(true)[0].asScalarLong();
    return deleted == 0 ? 0 : committed(deleted);
  }
}
