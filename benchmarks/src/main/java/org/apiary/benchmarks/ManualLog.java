package org.apiary.benchmarks;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apiary.QueryResult;
import org.apiary.Row;
import org.apiary.internal.Json;

/**
 * The "manual logging" baseline of the provenance benchmarks: functions append one JSON line per row they read or
 * write to a file (buffered, as an application logger would), instead of Apiary capturing it. Like an application's
 * logger it is process-wide, because functions run inside VoltDB and receive nothing but their inputs; it logs only
 * after {@link #open(Path)}, and every call is a cheap no-op before that.
 */
public final class ManualLog {
  private static BufferedWriter writer;
  private static volatile boolean open;

  private ManualLog() {}

  /** Starts logging into {@code file} (replacing it). */
  public static synchronized void open(Path file) throws IOException {
    close();
    writer = Files.newBufferedWriter(file);
    open = true;
  }

  /** Whether functions should log. */
  public static boolean enabled() {
    return open;
  }

  /** Logs one event ({@code read}, {@code insert}, {@code update}, {@code delete}) of one row of {@code table}. */
  public static synchronized void event(String function, long txId, String event, String table, Object key, Object value) {
    if (!open) {
      return;
    }
    try {
      Map<String, Object> line = new LinkedHashMap<>();
      line.put("function", function);
      line.put("tx", txId);
      line.put("event", event);
      line.put("table", table);
      line.put("key", key);
      line.put("value", value);
      writer.write(Json.MAPPER.writeValueAsString(line));
      writer.newLine();
    } catch (IOException e) {
      throw new UncheckedIOException("manual log: " + e.getMessage(), e);
    }
  }

  /** Logs every row of a query result as read from {@code table}, keyed by {@code keyColumn}. */
  public static void reads(String function, long txId, String table, String keyColumn, QueryResult result) {
    if (!open) {
      return;
    }
    for (Row r : result) {
      Map<String, Object> row = new LinkedHashMap<>();
      for (String c : result.columns()) {
        row.put(c, r.get(c));
      }
      event(function, txId, "read", table, r.get(keyColumn), row);
    }
  }

  /** Flushes and closes the log, if open. */
  public static synchronized void close() throws IOException {
    open = false;
    if (writer != null) {
      writer.close();
      writer = null;
    }
  }
}
