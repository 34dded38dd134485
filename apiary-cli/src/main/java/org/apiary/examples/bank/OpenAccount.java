package org.apiary.examples.bank;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Opens an account with a zero balance; the input is the owner's name. */
public class OpenAccount extends LocalFunction<Long> {
  static final Statement INSERT = Statement.of("INSERT INTO accounts (id, owner, balance) VALUES (?, ?, 0)");

  @Override
  protected void run() {
    queueSQL(INSERT, partitionKey(), retrieveInput(SOURCE, String.class));
    executeSQL();
    returnOutput(partitionKey());
  }
}
