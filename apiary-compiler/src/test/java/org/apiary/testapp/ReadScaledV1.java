package org.apiary.testapp;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Version 1 of a function that is redeployed with different SQL. */
public class ReadScaledV1 extends LocalFunction<Long> {
  static final Statement GET = Statement.of("SELECT v AS scaled FROM counters WHERE k = ?");

  @Override
  protected void run() {
    queueSQL(GET, partitionKey());
    returnOutput(executeSQL().get(0).rows().get(0).getLong("scaled"));
  }
}
