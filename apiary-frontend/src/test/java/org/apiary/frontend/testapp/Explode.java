package org.apiary.frontend.testapp;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Reads counter k, then fails. */
public class Explode extends LocalFunction<Long> {
  static final Statement GET = Statement.of("SELECT v FROM g_counters WHERE k = ?");

  @Override
  protected void run() {
    queueSQL(GET, partitionKey());
    executeSQL();
    throw new IllegalStateException("explode always fails, key " + partitionKey());
  }
}
