package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;

/**
 * Stores a queue's declared limits (issue 42), registered at this transaction's time: a write to a replicated table
 * (a multi-partition transaction), journaled. A queue stored again takes the limits given last.
 */
public class StoreQueue extends JournaledProcedure {
  public final SQLStmt upsert = new SQLStmt("UPSERT INTO APIARY_QUEUES (name, concurrency, per_frontend, rate_limit, "
      + "rate_period_ms, declared_at) VALUES (?, ?, ?, ?, ?, ?);");

  /**
   * @param name the queue
   * @param concurrency the most items running at once across frontends, 0 for no limit
   * @param perFrontend the most items running at once on one frontend, 0 for no limit
   * @param rateLimit the most items started in a window of {@code ratePeriodMs}, 0 for no limit
   * @param ratePeriodMs the rate's window in milliseconds (0 without a rate)
   * @return 1
   */
  public long run(String name, int concurrency, int perFrontend, int rateLimit, long ratePeriodMs) {
    voltQueueSQL(upsert, name, concurrency, perFrontend, rateLimit, ratePeriodMs, getTransactionTime());
    return committed(voltExecuteSQL(true)[0].asScalarLong());
  }
}
