package org.apiary.benchmarks.counter;

import org.apiary.LocalFunction;
import org.apiary.QueryResult;
import org.apiary.Statement;
import org.apiary.benchmarks.ManualLog;

/** Reads counter k and writes it back incremented; returns the new value. */
public class ReadIncrement extends LocalFunction<Long> {
  static final Statement GET = Statement.of("SELECT k, v FROM bench_counters WHERE k = ?");
  static final Statement PUT = Statement.of("UPDATE bench_counters SET v = ? WHERE k = ?");

  @Override
  protected void run() {
    queueSQL(GET, partitionKey());
    QueryResult read = executeSQL().get(0);
    long v = read.firstRow().orElseThrow(() -> new IllegalArgumentException("no counter " + partitionKey()))
        .getLong("v") + 1;
    queueSQL(PUT, v, partitionKey()); // left queued: it runs when run() returns, in the transaction's last batch
    if (ManualLog.enabled()) {
      ManualLog.reads(functionName(), uniqueId(), "bench_counters", "K", read);
      ManualLog.event(functionName(), uniqueId(), "update", "bench_counters", partitionKey(), v);
    }
    returnOutput(v);
  }
}
