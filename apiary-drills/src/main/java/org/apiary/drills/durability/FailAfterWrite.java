package org.apiary.drills.durability;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Sets counter k to -1, then fails: the write is rolled back, so no counter may ever read -1. */
public class FailAfterWrite extends LocalFunction<Long> {
  static final Statement PUT = Statement.of("UPSERT INTO counters (k, v) VALUES (?, -1)");

  @Override
  protected void run() {
    retrieveInput(SOURCE, Long.class);
    queueSQL(PUT, partitionKey());
    executeSQL();
    throw new IllegalStateException("counter " + partitionKey() + " refused after writing it");
  }
}
