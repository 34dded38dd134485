package org.apiary.frontend.onetx;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Returns the counter of its key (0 if none). */
public class OPeek extends LocalFunction<Long> {
  static final Statement GET = Statement.of("SELECT v FROM o_counters WHERE k = ?");

  @Override
  protected void run() {
    retrieveInput(SOURCE, Long.class);
    queueSQL(GET, partitionKey());
    returnOutput(executeSQL().get(0).firstRow().map(r -> r.getLong("v")).orElse(0L));
  }
}
