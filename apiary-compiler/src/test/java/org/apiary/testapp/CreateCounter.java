package org.apiary.testapp;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/**
 * Creates counter k with the source input as its value, leaving its insert queued when it returns (the statement
 * runs as the function's last batch); fails if the counter exists.
 */
public class CreateCounter extends LocalFunction<Long> {
  static final Statement CREATE = Statement.of("INSERT INTO counters (k, v) VALUES (?, ?)");

  @Override
  protected void run() {
    long v = retrieveInput(SOURCE, Long.class);
    queueSQL(CREATE, partitionKey(), v);
    returnOutput(v);
  }
}
