package org.apiary.testapp;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Sets account id's balance. */
public class Deposit extends LocalFunction<Long> {
  static final Statement PUT = Statement.of("UPSERT INTO accounts (id, balance) VALUES (?, ?)");

  @Override
  protected void run() {
    queueSQL(PUT, partitionKey(), retrieveInput(SOURCE, Long.class));
    executeSQL();
  }
}
