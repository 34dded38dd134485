package org.apiary.frontend.holes;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Counts a write on key k. */
public class HCount extends LocalFunction<Long> {
  static final Statement GET = Statement.of("SELECT n FROM h_writes WHERE k = ?");
  static final Statement PUT = Statement.of("UPSERT INTO h_writes (k, n) VALUES (?, ?)");

  @Override
  protected void run() {
    queueSQL(GET, partitionKey());
    long n = executeSQL().get(0).firstRow().map(r -> r.getLong("n")).orElse(0L);
    queueSQL(PUT, partitionKey(), n + 1);
    executeSQL();
    returnOutput(n + 1);
  }
}
