package org.apiary.testapp;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/**
 * Sets counter k to {@code (v * 31 + x) mod 1,000,000,007} (v = 0 for a new counter) for the source input x and
 * returns the new value: unlike an increment, the result depends on the order of the calls, so a replay that
 * reorders a partition's transactions ends elsewhere.
 */
public class Scramble extends LocalFunction<Long> {
  /** The modulus of every counter value. */
  public static final long MODULUS = 1_000_000_007L;
  static final Statement GET = Statement.of("SELECT v FROM counters WHERE k = ?");
  static final Statement PUT = Statement.of("UPSERT INTO counters (k, v) VALUES (?, ?)");

  @Override
  protected void run() {
    long x = retrieveInput(SOURCE, Long.class);
    queueSQL(GET, partitionKey());
    long current = executeSQL().get(0).firstRow().map(r -> r.getLong("v")).orElse(0L);
    long next = (current * 31 + x) % MODULUS;
    queueSQL(PUT, partitionKey(), next);
    executeSQL();
    returnOutput(next);
  }
}
