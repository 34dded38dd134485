package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;

/**
 * Stores a graph's next version, registered at this transaction's time: a write to a replicated table (a
 * multi-partition transaction), journaled, so a registration from any process survives a crash of the server.
 */
public class StoreGraph extends JournaledProcedure {
  public final SQLStmt insert = new SQLStmt("INSERT INTO APIARY_GRAPHS (name, version, definition, registered_at) "
      + "VALUES (?, ?, ?, ?);");

  /** @return 1 */
  public long run(String name, int version, byte[] definition) {
    voltQueueSQL(insert, name, version, definition, getTransactionTime());
    return committed(voltExecuteSQL(true)[0].asScalarLong());
  }
}
