package org.apiary.testapp;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Version 2: the same function, its SQL changed to scale the value by 10. */
public class ReadScaledV2 extends LocalFunction<Long> {
  static final Statement GET = Statement.of("SELECT v * 10 AS scaled FROM counters WHERE k = ?");

  @Override
  protected void run() {
    queueSQL(GET, partitionKey());
    returnOutput(executeSQL().get(0).rows().get(0).getLong("scaled"));
  }
}
