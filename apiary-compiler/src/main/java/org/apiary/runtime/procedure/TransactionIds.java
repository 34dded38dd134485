package org.apiary.runtime.procedure;

import org.apiary.runtime.provenance.ExecutionIds;
import org.voltdb.VoltProcedure;
import org.voltdb.dtxn.TransactionState;

/**
 * The running transaction as provenance identifies it ({@link ExecutionIds}): VoltDB's transaction ID, whether the
 * transaction is read-only and single-partition, and the partition of the site running it. VoltDB offers procedures
 * only the unique ID, which export does not carry and which read-only transactions share, so this reads the
 * procedure's runner.
 */
final class TransactionIds {
  private TransactionIds() {}

  /** The running transaction's identity; call from the procedure's own thread, during its transaction. */
  static ExecutionIds.ExecutionId of(VoltProcedure procedure) {
    TransactionState txn = RunningTransaction.of(procedure);
    return ExecutionIds.of(txn.txnId, txn.isReadOnly(), txn.isSinglePartition(),
        RunningTransaction.sitePartition(procedure));
  }
}
