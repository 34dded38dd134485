package org.apiary.frontend.testapp;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Counts a hit on key k for every input it got, and returns k * 10 per input. */
public class Hit extends LocalFunction<Long> {
  static final Statement GET = Statement.of("SELECT n FROM g_hits WHERE k = ?");
  static final Statement PUT = Statement.of("UPSERT INTO g_hits (k, n) VALUES (?, ?)");

  @Override
  protected void run() {
    var inputs = retrieveInputs("keys", Long.class);
    queueSQL(GET, partitionKey());
    long n = executeSQL().get(0).firstRow().map(r -> r.getLong("n")).orElse(0L);
    queueSQL(PUT, partitionKey(), n + inputs.size());
    executeSQL();
    for (long k : inputs) {
      returnOutput(k * 10);
    }
  }
}
