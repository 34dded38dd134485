package org.apiary.frontend.queue;

import java.time.Duration;
import org.apiary.LocalFunction;
import org.apiary.Statement;

/**
 * Records its item under key k and, in the same transaction, enqueues three {@code qMark} children on {@code q_prio}
 * with priorities 1, 7 and 4 (keys k + 1000, + 1001, + 1002) and one on {@code q_plain} delayed 1.5 s (key k + 2000).
 */
public class SpawnRanked extends LocalFunction<Long> {
  static final int[] PRIORITIES = {1, 7, 4};
  static final Duration DELAY = Duration.ofMillis(1_500);
  static final Statement PUT = Statement.of("INSERT INTO q_marks (k, item, ran_at) VALUES (?, ?, NOW)");

  @Override
  protected void run() {
    String item = retrieveInput(SOURCE, String.class);
    queueSQL(PUT, partitionKey(), item);
    executeSQL();
    for (int i = 0; i < PRIORITIES.length; i++) {
      enqueue("q_prio", null, Duration.ZERO, PRIORITIES[i], "qMark", partitionKey() + 1000 + i, "ranked-" + i);
    }
    enqueue("q_plain", null, DELAY, 0, "qMark", partitionKey() + 2000, "delayed");
    returnOutput(item);
  }
}
