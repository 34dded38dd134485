package org.apiary.benchmarks.provenance;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apiary.internal.Json;

/**
 * The "manual logging" baseline: one JSON line per read or write, appended to a file (buffered, as an application
 * logger would). The file is named by the system property {@code apiary.bench.manualLog}.
 */
public final class ManualLog {
  private static BufferedWriter writer;

  private ManualLog() {}

  static synchronized void append(String function, long txId, String event, long key, long value) {
    try {
      if (writer == null) {
        writer = Files.newBufferedWriter(Path.of(System.getProperty("apiary.bench.manualLog", "manual-log.jsonl")));
      }
      Map<String, Object> line = new LinkedHashMap<>();
      line.put("function", function);
      line.put("tx", txId);
      line.put("event", event);
      line.put("k", key);
      line.put("v", value);
      writer.write(Json.MAPPER.writeValueAsString(line));
      writer.newLine();
    } catch (IOException e) {
      throw new UncheckedIOException("manual log: " + e.getMessage(), e);
    }
  }

  /** Flushes and closes the log; returns its size in bytes. */
  static synchronized long close(Path file) throws IOException {
    if (writer != null) {
      writer.close();
      writer = null;
    }
    return Files.exists(file) ? Files.size(file) : 0;
  }
}
