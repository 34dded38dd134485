package org.apiary.testapp;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Writes counter k, then throws: the write must be rolled back. */
public class WriteThenFail extends LocalFunction<Long> {
  static final Statement PUT = Statement.of("UPSERT INTO counters (k, v) VALUES (?, ?)");

  @Override
  protected void run() {
    queueSQL(PUT, partitionKey(), 42L);
    executeSQL();
    throw new IllegalStateException("refusing counter " + partitionKey() + " after writing it");
  }
}
