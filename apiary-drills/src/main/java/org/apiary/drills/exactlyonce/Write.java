package org.apiary.drills.exactlyonce;

/** The drill's first writer; never fails. */
public class Write extends DrillWriter {
  @Override
  String inputEdge() {
    return SOURCE;
  }

  @Override
  boolean flaky() {
    return false;
  }
}
