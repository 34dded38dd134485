package org.apiary.testapp;

import java.util.ArrayList;
import java.util.List;
import org.apiary.GlobalFunction;
import org.apiary.Row;
import org.apiary.Statement;

/** Returns every account's balance, ordered by id, read in one transaction. */
public class Balances extends GlobalFunction {
  static final Statement ALL = Statement.of("SELECT id, balance FROM accounts ORDER BY id");

  @Override
  protected void run() {
    queueSQL(ALL);
    List<Long> balances = new ArrayList<>();
    for (Row row : executeSQL().get(0)) {
      balances.add(row.getLong("balance"));
    }
    returnOutput(balances);
  }
}
