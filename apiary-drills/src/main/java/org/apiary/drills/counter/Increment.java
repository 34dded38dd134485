package org.apiary.drills.counter;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Adds the argument to counter k (creating it at 0) and returns the new value. */
public class Increment extends LocalFunction<Long> {
  static final Statement GET = Statement.of("SELECT v FROM counters WHERE k = ?");
  static final Statement PUT = Statement.of("UPSERT INTO counters (k, v) VALUES (?, ?)");

  @Override
  protected void run() {
    long by = retrieveInput(SOURCE, Long.class);
    queueSQL(GET, partitionKey());
    long v = executeSQL().get(0).firstRow().map(r -> r.getLong("v")).orElse(0L) + by;
    queueSQL(PUT, partitionKey(), v);
    executeSQL();
    returnOutput(v);
  }
}
