package org.apiary.drills.exactlyonce;

/** The drill's only writer of {@code drill_flaky}; fails while its key is marked failing. */
public class FlakyFirstWrite extends DrillWriter {
  @Override
  String inputEdge() {
    return SOURCE;
  }

  @Override
  boolean flaky() {
    return true;
  }
}
