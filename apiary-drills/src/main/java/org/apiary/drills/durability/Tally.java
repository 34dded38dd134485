package org.apiary.drills.durability;

import org.apiary.GlobalFunction;
import org.apiary.Statement;

/** Adds one to tally 0 and returns the new count: a write to a replicated table, a multi-partition transaction. */
public class Tally extends GlobalFunction {
  static final Statement GET = Statement.of("SELECT n FROM tallies WHERE id = 0");
  static final Statement PUT = Statement.of("UPSERT INTO tallies (id, n) VALUES (0, ?)");

  @Override
  protected void run() {
    retrieveInput(SOURCE, Long.class);
    queueSQL(GET);
    long n = executeSQL().get(0).firstRow().map(r -> r.getLong("n")).orElse(0L) + 1;
    queueSQL(PUT, n);
    executeSQL();
    returnOutput(n);
  }
}
