package org.apiary.frontend.holes;

import org.apiary.LocalFunction;

/** Returns 400,000 characters: three of them make a graph reply larger than the invocation log can store. */
public class HBigPart extends LocalFunction<Long> {
  @Override
  protected void run() {
    retrieveInputs("keys", Long.class);
    returnOutput("x".repeat(400_000));
  }
}
