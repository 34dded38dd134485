package org.apiary.frontend.holes;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** The first version of h_evolve: reads the write count of key k. */
public class HEvolveReadOnly extends LocalFunction<Long> {
  static final Statement GET = Statement.of("SELECT n FROM h_writes WHERE k = ?");

  @Override
  protected void run() {
    retrieveInput(SOURCE, Long.class);
    queueSQL(GET, partitionKey());
    returnOutput(executeSQL().get(0).firstRow().map(r -> r.getLong("n")).orElse(0L));
  }
}
