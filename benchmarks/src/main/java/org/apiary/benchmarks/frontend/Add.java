package org.apiary.benchmarks.frontend;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Adds the argument to counter k and sends the new value along edge "out", keyed by k. */
public class Add extends LocalFunction<Long> {
  static final Statement GET = Statement.of("SELECT v FROM bench_counters WHERE k = ?");
  static final Statement PUT = Statement.of("UPSERT INTO bench_counters (k, v) VALUES (?, ?)");

  @Override
  protected void run() {
    long by = retrieveInput(SOURCE, Long.class);
    queueSQL(GET, partitionKey());
    long v = executeSQL().get(0).firstRow().map(r -> r.getLong("v")).orElse(0L) + by;
    queueSQL(PUT, partitionKey(), v);
    executeSQL();
    returnOutput(v, "out", partitionKey());
  }
}
