package org.apiary.frontend.queue;

import org.apiary.ExternalFunction;

/** Waits in the frontend for the given milliseconds, then sends the item on under its key. */
public class Pause extends ExternalFunction {
  @Override
  protected void run() throws Exception {
    String[] parts = retrieveInput("pause", String.class).split("\\|");
    Thread.sleep(Long.parseLong(parts[2]));
    returnOutput(parts[1], "leave", Long.parseLong(parts[0]));
  }
}
