package org.apiary.benchmarks.hotel;

import org.apiary.LocalFunction;
import org.apiary.QueryResult;
import org.apiary.Statement;
import org.apiary.benchmarks.ManualLog;

/** The best-rated hotel within a budget (the recommendation service); returns its ID, or -1 if none. */
public class Recommend extends LocalFunction<Long> {
  static final Statement BEST = Statement.of("SELECT hotel_id, rating, price_cents FROM hotel_geo "
      + "WHERE price_cents <= ? ORDER BY rating DESC, hotel_id LIMIT 1");

  @Override
  protected void run() {
    long budget = retrieveInput(SOURCE, Long.class);
    queueSQL(BEST, budget);
    QueryResult r = executeSQL().get(0);
    if (ManualLog.enabled()) {
      ManualLog.reads(functionName(), uniqueId(), "hotel_geo", "HOTEL_ID", r);
    }
    returnOutput(r.firstRow().map(x -> x.getLong("hotel_id")).orElse(-1L));
  }
}
