package org.apiary.frontend.holes;

import org.apiary.GlobalFunction;

/** Sends a value keyed by a String to a function keyed by Long: a mistake the frontend must end cleanly. */
public class HSendText extends GlobalFunction {
  @Override
  protected void run() {
    returnOutput(retrieveInput(SOURCE, Integer.class).longValue(), "keys", "not-a-number");
  }
}
