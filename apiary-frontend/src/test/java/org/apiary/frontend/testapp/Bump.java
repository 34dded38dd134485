package org.apiary.frontend.testapp;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Adds its argument to counter k; sends the new value to the next function, with the same key. */
public class Bump extends LocalFunction<Long> {
  static final Statement GET = Statement.of("SELECT v FROM g_counters WHERE k = ?");
  static final Statement PUT = Statement.of("UPSERT INTO g_counters (k, v) VALUES (?, ?)");

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
