package org.apiary.drills.exactlyonce;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/**
 * The last function of {@code drill_queued} (input {@code "<item>|<call number>"}): records that the item left, with
 * the number of the stub's call whose answer it got, and counts it no longer running under its key.
 */
public class QueuedLeave extends LocalFunction<Long> {
  static final Statement LEAVE = Statement.of("INSERT INTO drill_queued_effects (k, item, step, token, ran_at) "
      + "VALUES (?, ?, 'leave', ?, NOW)");
  static final Statement DONE = Statement.of("UPDATE drill_queue_state SET running = running - 1 WHERE k = ?");

  @Override
  protected void run() {
    String in = retrieveInput(DrillApp.NEXT, String.class);
    int bar = in.indexOf('|');
    String item = in.substring(0, bar);
    queueSQL(LEAVE, partitionKey(), item, Long.parseLong(in.substring(bar + 1)));
    queueSQL(DONE, partitionKey());
    executeSQL();
    returnOutput(item + " left");
  }
}
