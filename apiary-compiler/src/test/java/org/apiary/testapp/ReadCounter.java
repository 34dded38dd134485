package org.apiary.testapp;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Returns counter k, or 0 if it does not exist. */
public class ReadCounter extends LocalFunction<Long> {
  static final Statement GET = Statement.of("SELECT v FROM counters WHERE k = ?");

  @Override
  protected void run() {
    queueSQL(GET, partitionKey());
    returnOutput(executeSQL().get(0).firstRow().map(r -> r.getLong("v")).orElse(0L));
  }
}
