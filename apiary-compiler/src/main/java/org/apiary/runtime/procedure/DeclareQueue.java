package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;

/**
 * Stores a queue's declaration (issue 42, schema version 20): its limits, whether its items carry a priority and
 * whether its limits apply per partition key, registered at this transaction's time: a write to a replicated table
 * (a multi-partition transaction), journaled. A queue declared again takes the declaration given last.
 * {@code StoreQueue}, version 18's, stores the limits alone (the rest 0).
 */
public class DeclareQueue extends JournaledProcedure {
  public final SQLStmt upsert = new SQLStmt("UPSERT INTO APIARY_QUEUES (name, concurrency, per_frontend, rate_limit, "
      + "rate_period_ms, declared_at, priority_enabled, partitioned) VALUES (?, ?, ?, ?, ?, ?, ?, ?);");

  /**
   * @param name the queue
   * @param concurrency the most items running at once across frontends (per key if partitioned), 0 for no limit
   * @param perFrontend the most items running at once on one frontend, 0 for no limit
   * @param rateLimit the most items started in a window of {@code ratePeriodMs} (per key if partitioned), 0 for none
   * @param ratePeriodMs the rate's window in milliseconds (0 without a rate)
   * @param priority 1 if items carry a priority, else 0
   * @param partitioned 1 if the limits apply per partition key, else 0
   * @return 1
   */
  public long run(String name, int concurrency, int perFrontend, int rateLimit, long ratePeriodMs, byte priority,
                  byte partitioned) {
    voltQueueSQL(upsert, name, concurrency, perFrontend, rateLimit, ratePeriodMs, getTransactionTime(), priority,
        partitioned);
    return committed(voltExecuteSQL(true)[0].asScalarLong());
  }
}
