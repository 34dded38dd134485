package org.apiary.runtime.procedure;

import java.lang.reflect.Field;
import org.apiary.runtime.provenance.ExecutionIds;
import org.voltdb.ProcedureRunner;
import org.voltdb.SiteProcedureConnection;
import org.voltdb.VoltProcedure;
import org.voltdb.dtxn.TransactionState;

/**
 * The running transaction as provenance identifies it ({@link ExecutionIds}): VoltDB's transaction ID, whether the
 * transaction is read-only and single-partition, and the partition of the site running it. VoltDB offers procedures
 * only the unique ID, which export does not carry and which read-only transactions share, so this reads the
 * procedure's runner.
 */
final class TransactionIds {
  private static final Field RUNNER;
  private static final Field TXN_STATE;
  private static final Field SITE;

  static {
    try {
      RUNNER = VoltProcedure.class.getDeclaredField("m_runner");
      RUNNER.setAccessible(true);
      TXN_STATE = ProcedureRunner.class.getDeclaredField("m_txnState");
      TXN_STATE.setAccessible(true);
      SITE = ProcedureRunner.class.getDeclaredField("m_site");
      SITE.setAccessible(true);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError("this VoltDB version has no VoltProcedure.m_runner, "
          + "ProcedureRunner.m_txnState or ProcedureRunner.m_site; provenance capture cannot identify executions: " + e);
    }
  }

  private TransactionIds() {}

  /** The running transaction's identity; call from the procedure's own thread, during its transaction. */
  static ExecutionIds.ExecutionId of(VoltProcedure procedure) {
    try {
      Object runner = RUNNER.get(procedure);
      // ProcedureRunner.getTxnState() asserts it is only used by system procedures, so read the field.
      TransactionState txn = (TransactionState) TXN_STATE.get(runner);
      int partition = ((SiteProcedureConnection) SITE.get(runner)).getCorrespondingPartitionId();
      return ExecutionIds.of(txn.txnId, txn.isReadOnly(), txn.isSinglePartition(), partition);
    } catch (IllegalAccessException e) {
      throw new IllegalStateException("cannot read the transaction ID: " + e.getMessage(), e);
    }
  }
}
