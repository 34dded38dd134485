package org.apiary.frontend.holes;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Counts, in h_writes, how many times it ran for key k, and returns its input. */
public class HTally extends LocalFunction<Long> {
  static final Statement GET = Statement.of("SELECT n FROM h_writes WHERE k = ?");
  static final Statement PUT = Statement.of("UPSERT INTO h_writes (k, n) VALUES (?, ?)");

  @Override
  protected void run() {
    long v = retrieveInput("bumped", Long.class);
    queueSQL(GET, partitionKey());
    long n = executeSQL().get(0).firstRow().map(r -> r.getLong("n")).orElse(0L) + 1;
    queueSQL(PUT, partitionKey(), n);
    returnOutput(v);
  }
}
