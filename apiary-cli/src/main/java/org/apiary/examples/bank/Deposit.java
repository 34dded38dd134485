package org.apiary.examples.bank;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Adds a positive amount to an account and returns the new balance. */
public class Deposit extends LocalFunction<Long> {
  static final Statement ADD = Statement.of("UPDATE accounts SET balance = balance + ? WHERE id = ?");
  static final Statement GET = Statement.of("SELECT balance FROM accounts WHERE id = ?");

  @Override
  protected void run() {
    long amount = retrieveInput(SOURCE, Long.class);
    if (amount <= 0) {
      throw new IllegalArgumentException("a deposit must be positive, got " + amount);
    }
    queueSQL(ADD, amount, partitionKey());
    queueSQL(GET, partitionKey());
    var results = executeSQL();
    if (results.get(0).modifiedRowCount() == 0) {
      throw new IllegalArgumentException("no account " + partitionKey());
    }
    returnOutput(results.get(1).rows().get(0).getLong("balance"));
  }
}
