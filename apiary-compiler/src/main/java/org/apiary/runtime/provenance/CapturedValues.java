package org.apiary.runtime.provenance;

import java.time.Instant;
import org.voltdb.types.TimestampType;

/** Conversions from VoltDB's value types to the Java types provenance rows carry. */
public final class CapturedValues {
  private CapturedValues() {}

  /** A VoltDB timestamp (microseconds since the epoch) as an Instant. */
  public static Instant instant(TimestampType t) {
    long micros = t.getTime();
    return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
  }

  /** A value as provenance stores it. */
  public static Object value(Object v) {
    return v instanceof TimestampType t ? instant(t) : v;
  }
}
