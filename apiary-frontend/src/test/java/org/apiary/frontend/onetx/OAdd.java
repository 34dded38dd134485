package org.apiary.frontend.onetx;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Adds its argument to the counter of its key and returns the new value; fails while o_flags holds the key. */
public class OAdd extends LocalFunction<Long> {
  static final Statement FLAG = Statement.of("SELECT k FROM o_flags WHERE k = ?");
  static final Statement GET = Statement.of("SELECT v FROM o_counters WHERE k = ?");
  static final Statement PUT = Statement.of("UPSERT INTO o_counters (k, v) VALUES (?, ?)");

  @Override
  protected void run() {
    long add = retrieveInput(SOURCE, Long.class);
    queueSQL(FLAG, partitionKey());
    queueSQL(GET, partitionKey());
    var results = executeSQL();
    if (results.get(0).firstRow().isPresent()) {
      throw new IllegalStateException("flag set for key " + partitionKey());
    }
    long v = results.get(1).firstRow().map(r -> r.getLong("v")).orElse(0L) + add;
    queueSQL(PUT, partitionKey(), v);
    executeSQL();
    returnOutput(v);
  }
}
