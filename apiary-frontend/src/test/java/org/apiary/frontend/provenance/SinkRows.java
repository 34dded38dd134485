package org.apiary.frontend.provenance;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apiary.runtime.provenance.ServerProvenance;

/** Reading an embedded server's provenance sink in tests: its rows as text, and waiting for a count. */
final class SinkRows {
  private SinkRows() {}

  /**
   * Flushes the server's capture and reads {@code countQuery} until it reaches {@code expected}, at most
   * {@code wait}; returns the last count seen.
   */
  static long awaitCount(String url, String countQuery, long expected, Duration wait) throws Exception {
    long deadline = System.nanoTime() + wait.toNanos();
    long count;
    do {
      ServerProvenance.active().orElseThrow().flush(Duration.ofSeconds(10));
      count = Long.parseLong(rows(url, countQuery).get(0));
      if (count >= expected) {
        return count;
      }
      Thread.sleep(200);
    } while (System.nanoTime() < deadline);
    return count;
  }

  /** The rows of a query, each as its values joined by '|'. */
  static List<String> rows(String url, String query) throws Exception {
    try (Connection c = DriverManager.getConnection(url);
         PreparedStatement s = c.prepareStatement(query);
         ResultSet rs = s.executeQuery()) {
      List<String> rows = new ArrayList<>();
      int n = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        StringBuilder row = new StringBuilder();
        for (int i = 1; i <= n; i++) {
          row.append(i == 1 ? "" : "|").append(rs.getString(i));
        }
        rows.add(row.toString());
      }
      return rows;
    }
  }
}
