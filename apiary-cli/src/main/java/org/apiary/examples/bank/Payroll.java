package org.apiary.examples.bank;

import org.apiary.GlobalFunction;
import org.apiary.Statement;

/** Pays an amount into every account: one deposit per account, each on its own partition (a fan-out). */
public class Payroll extends GlobalFunction {
  static final Statement ACCOUNTS = Statement.of("SELECT id FROM accounts ORDER BY id");

  @Override
  protected void run() {
    long amount = retrieveInput("amount", Long.class);
    queueSQL(ACCOUNTS);
    for (var account : executeSQL().get(0).rows()) {
      long id = account.getLong("id");
      returnOutput(amount, SOURCE, id); // deposit reads its amount from the edge named "source"
    }
  }
}
