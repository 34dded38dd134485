package org.apiary.runtime.procedure;

import java.lang.reflect.Field;
import org.voltdb.ProcedureRunner;
import org.voltdb.VoltProcedure;
import org.voltdb.dtxn.TransactionState;

/**
 * The running transaction's VoltDB transaction ID, the ID VoltDB's change data capture stamps on every exported
 * row ({@code VOLT_TRANSACTION_ID}), so captured reads and function executions join with captured writes.
 * VoltDB offers procedures only the unique ID, which export does not carry, so this reads the procedure's runner.
 */
final class TransactionIds {
  private static final Field RUNNER;
  private static final Field TXN_STATE;

  static {
    try {
      RUNNER = VoltProcedure.class.getDeclaredField("m_runner");
      RUNNER.setAccessible(true);
      TXN_STATE = ProcedureRunner.class.getDeclaredField("m_txnState");
      TXN_STATE.setAccessible(true);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError("this VoltDB version has no VoltProcedure.m_runner or ProcedureRunner.m_txnState; provenance capture "
          + "cannot tie reads to transactions: " + e);
    }
  }

  private TransactionIds() {}

  static long of(VoltProcedure procedure) {
    try {
      // ProcedureRunner.getTxnState() asserts it is only used by system procedures, so read the field.
      return ((TransactionState) TXN_STATE.get(RUNNER.get(procedure))).txnId;
    } catch (IllegalAccessException e) {
      throw new IllegalStateException("cannot read the transaction ID: " + e.getMessage(), e);
    }
  }
}
