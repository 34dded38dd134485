package org.apiary.runtime.procedure;

import java.lang.reflect.Field;
import org.voltdb.ProcedureRunner;
import org.voltdb.SiteProcedureConnection;
import org.voltdb.VoltProcedure;
import org.voltdb.dtxn.TransactionState;

/**
 * The transaction a procedure is running, read from its runner: VoltDB offers procedures only the unique ID, while
 * provenance needs the transaction ID and the journal the invocation as it arrived. Call from the procedure's own
 * thread, during its transaction.
 */
final class RunningTransaction {
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
          + "ProcedureRunner.m_txnState or ProcedureRunner.m_site; Apiary cannot identify transactions: " + e);
    }
  }

  private RunningTransaction() {}

  /** The running transaction's state (ProcedureRunner.getTxnState() asserts it is for system procedures only). */
  static TransactionState of(VoltProcedure procedure) {
    try {
      return (TransactionState) TXN_STATE.get(RUNNER.get(procedure));
    } catch (IllegalAccessException e) {
      throw new IllegalStateException("cannot read the running transaction: " + e.getMessage(), e);
    }
  }

  /** The partition of the site running the procedure (for a multi-partition transaction, its coordinator's). */
  static int sitePartition(VoltProcedure procedure) {
    try {
      return ((SiteProcedureConnection) SITE.get(RUNNER.get(procedure))).getCorrespondingPartitionId();
    } catch (IllegalAccessException e) {
      throw new IllegalStateException("cannot read the running transaction's partition: " + e.getMessage(), e);
    }
  }
}
