package org.apiary.docs.readme;

import org.apiary.LocalFunction;
import org.apiary.Row;
import org.apiary.Statement;

/**
 * The timeline graph of README.md and docs/programming-guide.md: sends each followee of a user, keyed by the
 * followee, to getPosts.
 */
public class GetFollowees extends LocalFunction<Long> {
  static final Statement FOLLOWEES = Statement.of("SELECT followee FROM follows WHERE follower = ?");

  @Override
  protected void run() {
    queueSQL(FOLLOWEES, partitionKey());
    for (Row row : executeSQL().get(0)) {
      long f = row.getLong("followee");
      returnOutput(f, "followees", f);
    }
  }
}
