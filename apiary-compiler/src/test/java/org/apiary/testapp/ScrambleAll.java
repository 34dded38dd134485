package org.apiary.testapp;

import org.apiary.GlobalFunction;
import org.apiary.Statement;

/**
 * Sets every counter v to {@code x - v} for the source input x in one multi-partition
 * transaction, and returns how many counters it changed: where it runs among each partition's transactions decides
 * every counter's final value.
 */
public class ScrambleAll extends GlobalFunction {
  static final Statement UPDATE = Statement.of("UPDATE counters SET v = ? - v");

  @Override
  protected void run() {
    long x = retrieveInput(SOURCE, Long.class);
    queueSQL(UPDATE, x);
    returnOutput(executeSQL().get(0).modifiedRowCount());
  }
}
