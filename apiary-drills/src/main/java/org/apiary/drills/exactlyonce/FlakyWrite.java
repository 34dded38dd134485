package org.apiary.drills.exactlyonce;

/** The drill's second writer; fails while its key is marked failing. */
public class FlakyWrite extends DrillWriter {
  @Override
  String inputEdge() {
    return DrillApp.NEXT;
  }

  @Override
  boolean flaky() {
    return true;
  }
}
