package org.apiary.drills.exactlyonce;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** The function of {@code drill_tick}, run by the every-second schedule: records the tick's time (its argument). */
public class Tick extends LocalFunction<Long> {
  static final Statement PUT = Statement.of("INSERT INTO drill_ticks (k, tick) VALUES (?, ?)");

  @Override
  protected void run() {
    String tick = retrieveInput(SOURCE, String.class);
    queueSQL(PUT, partitionKey(), tick);
    executeSQL();
    returnOutput(tick);
  }
}
