package org.apiary.docs.guide;

import org.apiary.GlobalFunction;
import org.apiary.Statement;

// docs/programming-guide.md, "Global functions and fan-out": a copy of org.apiary.examples.bank.Payroll.
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
