package org.apiary.benchmarks;

import java.util.Arrays;
import java.util.List;
import org.apiary.RecordingMode;

/**
 * The systems a workload is measured on (issue 5): Apiary with its guarantees and capture switched on and off, the
 * same stored procedures called directly, and the microservice baseline.
 */
public enum Variant {
  /** The workload's stored procedures called from the load generator's process: no frontend, no log, no capture. */
  RAW_VOLTDB("raw-voltdb", null, false, Capture.NONE),
  /** Everything on: exactly-once (Algorithm 1's selective recording and the invocation log), reads and writes captured. */
  APIARY("apiary", RecordingMode.SELECTIVE, true, Capture.READS_AND_WRITES),
  /**
   * Neither guarantee: the frontend and the graph alone, no recording, no invocation log, no capture. What each
   * guarantee adds is measured against it as well as against the variant with the other guarantee on.
   */
  APIARY_BARE("apiary-bare", RecordingMode.NONE, false, Capture.NONE),
  /** No recording and no invocation log; provenance on. */
  APIARY_NO_EO("apiary-no-eo", RecordingMode.NONE, false, Capture.READS_AND_WRITES),
  /** Every function's output recorded (prior work's approach); provenance on. */
  APIARY_NAIVE_EO("apiary-naive-eo", RecordingMode.NAIVE, true, Capture.READS_AND_WRITES),
  /** Exactly-once on, provenance off. */
  APIARY_NO_PROV("apiary-no-prov", RecordingMode.SELECTIVE, true, Capture.NONE),
  /** Exactly-once on, only writes (and function executions) captured. */
  APIARY_WRITE_PROV("apiary-write-prov", RecordingMode.SELECTIVE, true, Capture.WRITES),
  /** Exactly-once on, provenance off; functions log what they read and write to a file instead. */
  APIARY_MANUAL_LOG("apiary-manual-log", RecordingMode.SELECTIVE, true, Capture.MANUAL_LOG),
  /** Business logic in one server process per service, each query its own database round trip. */
  RPC_SERVERS("rpc-servers", null, false, Capture.NONE);

  /** What provenance a variant captures. */
  public enum Capture { NONE, WRITES, READS_AND_WRITES, MANUAL_LOG }

  private final String id;
  private final RecordingMode recording;
  private final boolean invocationLog;
  private final Capture capture;

  Variant(String id, RecordingMode recording, boolean invocationLog, Capture capture) {
    this.id = id;
    this.recording = recording;
    this.invocationLog = invocationLog;
    this.capture = capture;
  }

  /** The command-line and JSON name. */
  public String id() {
    return id;
  }

  /** How outputs are recorded, for variants that run graphs through a frontend; {@code null} otherwise. */
  public RecordingMode recording() {
    return recording;
  }

  public boolean invocationLog() {
    return invocationLog;
  }

  public Capture capture() {
    return capture;
  }

  public boolean throughFrontend() {
    return recording != null;
  }

  public static Variant byId(String id) {
    return Arrays.stream(values()).filter(v -> v.id.equals(id)).findFirst().orElseThrow(() ->
        new IllegalArgumentException("unknown variant '" + id + "'; the variants are " + ids()));
  }

  public static List<String> ids() {
    return Arrays.stream(values()).map(Variant::id).toList();
  }
}
