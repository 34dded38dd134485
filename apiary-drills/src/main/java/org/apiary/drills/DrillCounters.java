package org.apiary.drills;

import org.apiary.database.ApiaryDatabase;
import org.apiary.database.Rows;

/** The drills' oracle on the counter application: what the counters hold, read straight from the database. */
final class DrillCounters {
  private DrillCounters() {}

  /**
   * The sum of every counter with key {@code fromKey} or above: the increments of 1 applied to them. (Not
   * {@code Long.MIN_VALUE}: VoltDB reads that as NULL.)
   */
  static long sum(ApiaryDatabase db, long fromKey) {
    Long sum = db.query("summing the counters", "SELECT SUM(v) FROM counters WHERE k >= ?", fromKey).rows().get(0)
        .getLongOrNull(0);
    return sum == null ? 0 : sum;
  }
}
