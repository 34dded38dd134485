package org.apiary.frontend.holes;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/**
 * Counts a write on its key and returns 400,000 characters: three of them make a graph reply larger than the
 * invocation log can store. (It writes so that its graph is logged: a graph that writes nothing stores no outcome.)
 */
public class HBigPart extends LocalFunction<Long> {
  static final Statement PUT = Statement.of("UPSERT INTO h_writes (k, n) VALUES (?, 1)");

  @Override
  protected void run() {
    retrieveInputs("keys", Long.class);
    queueSQL(PUT, partitionKey());
    executeSQL();
    returnOutput("x".repeat(400_000));
  }
}
