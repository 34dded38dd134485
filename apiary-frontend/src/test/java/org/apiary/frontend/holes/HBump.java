package org.apiary.frontend.holes;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Adds its argument to counter k and sends the new value on. */
public class HBump extends LocalFunction<Long> {
  static final Statement GET = Statement.of("SELECT v FROM h_counters WHERE k = ?");
  static final Statement PUT = Statement.of("UPSERT INTO h_counters (k, v) VALUES (?, ?)");

  @Override
  protected void run() {
    long by = retrieveInput(SOURCE, Long.class);
    queueSQL(GET, partitionKey());
    long v = executeSQL().get(0).firstRow().map(r -> r.getLong("v")).orElse(0L) + by;
    queueSQL(PUT, partitionKey(), v);
    executeSQL();
    returnOutput(v, "bumped", partitionKey());
  }
}
