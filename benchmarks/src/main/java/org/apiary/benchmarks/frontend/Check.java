package org.apiary.benchmarks.frontend;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Reads counter k back and returns it (read-only). */
public class Check extends LocalFunction<Long> {
  static final Statement GET = Statement.of("SELECT v FROM bench_counters WHERE k = ?");

  @Override
  protected void run() {
    queueSQL(GET, partitionKey());
    returnOutput(executeSQL().get(0).firstRow().map(r -> r.getLong("v")).orElse(0L));
  }
}
