package org.apiary.drills;

import org.apiary.database.ApiaryDatabase;
import org.voltdb.VoltTable;

/** The drills' oracle on the counter application: what the counters hold, read straight from the database. */
final class DrillCounters {
  private DrillCounters() {}

  /**
   * The sum of every counter with key {@code fromKey} or above: the increments of 1 applied to them. (Not
   * {@code Long.MIN_VALUE}: VoltDB reads that as NULL.)
   */
  static long sum(ApiaryDatabase db, long fromKey) {
    VoltTable t = db.callAdmin("summing the counters", "@AdHoc", "SELECT SUM(v) FROM counters WHERE k >= ?",
        fromKey).getResults()[0];
    t.advanceRow();
    long sum = t.getLong(0);
    return t.wasNull() ? 0 : sum;
  }
}
