package org.apiary.examples.bank;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Returns an account's balance. */
public class Balance extends LocalFunction<Long> {
  static final Statement GET = Statement.of("SELECT balance FROM accounts WHERE id = ?");

  @Override
  protected void run() {
    queueSQL(GET, partitionKey());
    returnOutput(executeSQL().get(0).firstRow()
        .orElseThrow(() -> new IllegalArgumentException("no account " + partitionKey())).getLong("balance"));
  }
}
