package org.apiary.drills.exactlyonce;

/** Writes like {@link Write}, then sends its output on under a String key to a function keyed by Long. */
public class WriteBadKey extends DrillWriter {
  @Override
  String inputEdge() {
    return SOURCE;
  }

  @Override
  boolean flaky() {
    return false;
  }

  @Override
  Object nextKey() {
    return "key-" + partitionKey();
  }
}
