package org.apiary.frontend.holes;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** The second version of h_evolve: counts a write on key k. */
public class HEvolveWriting extends LocalFunction<Long> {
  static final Statement GET = Statement.of("SELECT n FROM h_writes WHERE k = ?");
  static final Statement PUT = Statement.of("UPSERT INTO h_writes (k, n) VALUES (?, ?)");

  @Override
  protected void run() {
    retrieveInput(SOURCE, Long.class);
    queueSQL(GET, partitionKey());
    long n = executeSQL().get(0).firstRow().map(r -> r.getLong("n")).orElse(0L) + 1;
    queueSQL(PUT, partitionKey(), n);
    executeSQL();
    returnOutput(n);
  }
}
