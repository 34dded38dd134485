package org.apiary.drills.exactlyonce;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/**
 * A drill step that writes: inserts one attributable row into {@code drill_effects} and passes the chain on with its
 * token appended. A flaky step fails after its insert (so the insert is rolled back) while its key is in
 * {@code drill_failing}.
 */
public abstract class DrillWriter extends LocalFunction<Long> {
  /** For the drill's writers. */
  protected DrillWriter() {}

  static final Statement INSERT = Statement.of(
      "INSERT INTO drill_effects (k, invocation, step, payload, token, upstream) VALUES (?, ?, ?, ?, ?, ?)");
  static final Statement FAILING = Statement.of("SELECT COUNT(*) AS n FROM drill_failing WHERE k = ?");

  /** The edge this step's input arrives on. */
  abstract String inputEdge();

  /** Whether this step fails while its key is marked failing. */
  abstract boolean flaky();

  /** The partition key its output goes on with: its own, unless a step misbehaves on purpose. */
  Object nextKey() {
    return partitionKey();
  }

  @Override
  protected void run() {
    String chain = retrieveInput(inputEdge(), String.class);
    String payload = DrillApp.payloadOf(chain);
    long token = uniqueId();
    queueSQL(INSERT, partitionKey(), DrillApp.invocationOf(payload), functionName(), payload, token,
        DrillApp.lastToken(chain));
    if (flaky()) {
      queueSQL(FAILING, partitionKey());
    }
    var results = executeSQL();
    if (flaky() && results.get(1).firstRow().map(r -> r.getLong(0)).orElse(0L) > 0) {
      throw new IllegalStateException("key " + partitionKey() + " is marked failing");
    }
    returnOutput(chain + ";" + functionName() + "=" + token, DrillApp.NEXT, nextKey());
  }
}
