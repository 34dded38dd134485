package org.apiary.drills.exactlyonce;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/**
 * The first function of {@code drill_queued} (argument {@code "<item>|<stub URL>"}): records that the item entered,
 * at this transaction's time, and counts it running under its partition key, raising the key's high-water mark if it
 * is now higher. The drill reads the mark to check the queue's concurrency limit from the database's own rows.
 */
public class QueuedEnter extends LocalFunction<Long> {
  static final Statement ENTER = Statement.of("INSERT INTO drill_queued_effects (k, item, step, token, ran_at) "
      + "VALUES (?, ?, 'enter', 0, NOW)");
  static final Statement STATE = Statement.of("SELECT running, high FROM drill_queue_state WHERE k = ?");
  static final Statement PUT = Statement.of("UPSERT INTO drill_queue_state (k, running, high) VALUES (?, ?, ?)");

  @Override
  protected void run() {
    String arg = retrieveInput(SOURCE, String.class);
    String item = arg.substring(0, arg.indexOf('|'));
    queueSQL(ENTER, partitionKey(), item);
    queueSQL(STATE, partitionKey());
    var state = executeSQL().get(1).firstRow();
    long running = state.map(r -> r.getLong("running")).orElse(0L) + 1;
    long high = Math.max(running, state.map(r -> r.getLong("high")).orElse(0L));
    queueSQL(PUT, partitionKey(), running, high);
    executeSQL();
    returnOutput(arg, DrillApp.NEXT);
  }
}
