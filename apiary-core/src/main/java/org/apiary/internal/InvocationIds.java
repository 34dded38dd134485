package org.apiary.internal;

import java.security.SecureRandom;
import java.util.UUID;

/**
 * Fresh invocation IDs: time-ordered UUIDs (RFC 9562 version 7: 48 bits of Unix milliseconds, then random bits), so
 * IDs issued close in time sort close together. The recorded-outputs tables are indexed by invocation ID first; with
 * random (version 4) IDs every insert lands at a random leaf of a tree of all outcomes in the retention window, and a
 * cache miss at each level of it cost more than the counter workload's own transaction.
 */
public final class InvocationIds {
  private static final SecureRandom RANDOM = new SecureRandom();

  private InvocationIds() {}

  /** A new ID in the standard 36-character UUID form. */
  public static String next() {
    byte[] r = new byte[10];
    RANDOM.nextBytes(r);
    long millis = System.currentTimeMillis();
    long high = (millis << 16) | 0x7000L | ((r[0] & 0x0FL) << 8) | (r[1] & 0xFFL);
    long low = 0x8000_0000_0000_0000L | ((r[2] & 0x3FL) << 56);
    for (int i = 3; i < 10; i++) {
      low |= (r[i] & 0xFFL) << (8 * (9 - i));
    }
    return new UUID(high, low).toString();
  }
}
