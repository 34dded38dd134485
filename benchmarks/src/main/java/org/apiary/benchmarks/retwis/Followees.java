package org.apiary.benchmarks.retwis;

import org.apiary.LocalFunction;
import org.apiary.QueryResult;
import org.apiary.Row;
import org.apiary.Statement;
import org.apiary.benchmarks.ManualLog;

/** The users a user follows; sends each one to {@code recentPosts} on the followee's own partition (fan-out). */
public class Followees extends LocalFunction<Long> {
  static final Statement FOLLOWEES = Statement.of("SELECT follower, followee FROM retwis_follows WHERE follower = ?");

  @Override
  protected void run() {
    queueSQL(FOLLOWEES, partitionKey());
    QueryResult r = executeSQL().get(0);
    if (ManualLog.enabled()) {
      ManualLog.reads(functionName(), uniqueId(), "retwis_follows", "FOLLOWEE", r);
    }
    for (Row row : r) {
      long followee = row.getLong("followee");
      returnOutput(followee, "followee", followee);
    }
  }
}
