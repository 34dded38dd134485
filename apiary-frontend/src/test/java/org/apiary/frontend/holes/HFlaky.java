package org.apiary.frontend.holes;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Returns its input, or fails while h_flags holds its key (a condition that can later become false). */
public class HFlaky extends LocalFunction<Long> {
  static final Statement FLAG = Statement.of("SELECT k FROM h_flags WHERE k = ?");

  @Override
  protected void run() {
    long v = retrieveInput("bumped", Long.class);
    queueSQL(FLAG, partitionKey());
    if (executeSQL().get(0).firstRow().isPresent()) {
      throw new IllegalStateException("flag set for key " + partitionKey());
    }
    returnOutput(v);
  }
}
