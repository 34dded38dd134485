package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;

/**
 * Records a deployed function (what the frontends' and invokers' catalogs read), at this transaction's time: a write
 * to a replicated table, journaled, so a deployment from any process survives a crash of the server.
 */
public class StoreFunction extends JournaledProcedure {
  public final SQLStmt upsert = new SQLStmt("UPSERT INTO APIARY_FUNCTIONS VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?);");

  /** @return 1 */
  public long run(String name, String kind, String keyType, String partitionTable, String partitionColumn,
                  byte hasWrites, String functionClass, String procedureClass) {
    voltQueueSQL(upsert, name, kind, keyType, partitionTable, partitionColumn, hasWrites, functionClass,
        procedureClass, getTransactionTime());
    return committed(voltExecuteSQL(true)[0].asScalarLong());
  }
}
