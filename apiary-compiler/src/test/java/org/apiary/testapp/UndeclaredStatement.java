package org.apiary.testapp;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Builds a statement at run time, which Apiary cannot have compiled: must fail clearly. */
public class UndeclaredStatement extends LocalFunction<Long> {
  static final Statement GET = Statement.of("SELECT v FROM counters WHERE k = ?");

  @Override
  protected void run() {
    queueSQL(Statement.of("DELETE FROM counters WHERE k = ?"), partitionKey());
    executeSQL();
  }
}
