package org.apiary.examples.bank;

import org.apiary.GlobalFunction;
import org.apiary.Statement;

/** The sum of every balance, read consistently across all partitions. */
public class TotalDeposits extends GlobalFunction {
  static final Statement SUM = Statement.of("SELECT SUM(balance) AS total FROM accounts");

  @Override
  protected void run() {
    queueSQL(SUM);
    returnOutput(executeSQL().get(0).rows().get(0).getLong("total"));
  }
}
