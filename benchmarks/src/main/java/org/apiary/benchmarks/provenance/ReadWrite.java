package org.apiary.benchmarks.provenance;

import java.util.List;
import org.apiary.LocalFunction;
import org.apiary.ProvenanceLevel;
import org.apiary.Statement;
import org.apiary.benchmarks.ManualLog;

/**
 * Reads counter k and writes it back incremented, capturing provenance at the level named by its argument; with
 * {@code MANUAL} it captures nothing itself and instead appends what it read and wrote as JSON lines to a file,
 * the way an application without Apiary's capture would log.
 */
public class ReadWrite extends LocalFunction<Long> {
  static final Statement GET = Statement.of("SELECT k, v FROM prov_counters WHERE k = ?");
  static final Statement PUT = Statement.of("UPSERT INTO prov_counters (k, v) VALUES (?, ?)");

  @Override
  protected void run() {
    String mode = retrieveInput(SOURCE, String.class);
    boolean manual = mode.equals("MANUAL");
    ProvenanceLevel level = manual ? ProvenanceLevel.NONE : ProvenanceLevel.valueOf(mode);
    queueSQL(GET, List.of(partitionKey()), level);
    long v = executeSQL().get(0).firstRow().map(r -> r.getLong("v")).orElse(0L) + 1;
    queueSQL(PUT, List.of(partitionKey(), v), level);
    executeSQL();
    if (manual) {
      ManualLog.event(functionName(), uniqueId(), "read", "prov_counters", partitionKey(), v - 1);
      ManualLog.event(functionName(), uniqueId(), "update", "prov_counters", partitionKey(), v);
    }
    returnOutput(v);
  }
}
