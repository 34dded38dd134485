package org.apiary.frontend.holes;

import org.apiary.GlobalFunction;

/** Returns the length of its text argument: a call whose request is as large as a test needs. */
public class HLength extends GlobalFunction {
  @Override
  protected void run() {
    returnOutput((long) retrieveInput(SOURCE, String.class).length());
  }
}
