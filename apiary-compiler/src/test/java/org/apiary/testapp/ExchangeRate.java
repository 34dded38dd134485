package org.apiary.testapp;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Reads only the replicated rates table; runs on the partition of its Long key. Returns the rate of a currency. */
public class ExchangeRate extends LocalFunction<Long> {
  static final Statement RATE = Statement.of("SELECT rate FROM rates WHERE currency = ?");

  @Override
  protected void run() {
    queueSQL(RATE, retrieveInput(SOURCE, String.class));
    returnOutput(executeSQL().get(0).firstRow().map(r -> r.getDouble("rate")).orElse(-1.0));
  }
}
