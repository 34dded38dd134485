package org.apiary.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A failure drill: 50,000 rows of two tables offered while the connection to PostgreSQL is cut for a while (through
 * a proxy the test owns; the server itself keeps running), with little memory so rows spill. Every row must end up
 * in PostgreSQL exactly once.
 */
@Tag("failure-drill")
class SpoolerOutageTest {
  private static final int CHUNKS = 100;
  private static final int ROWS_PER_TABLE_PER_CHUNK = 250;
  private static final int ROWS_PER_TABLE = CHUNKS * ROWS_PER_TABLE_PER_CHUNK;
  private static final int CUT_AT_CHUNK = 20;
  private static final int RESTORE_AT_CHUNK = 60;
  private static final ProvenanceTable INVOCATIONS = ProvenanceSchema.functionInvocations();
  private static final ProvenanceTable ITEM_EVENTS = ProvenanceSchema.eventsTable("items", List.of(
      new ProvenanceColumn("item_id", ColumnType.BIGINT),
      new ProvenanceColumn("name", ColumnType.VARCHAR),
      new ProvenanceColumn("price", ColumnType.DECIMAL)), List.of("item_id"));

  @TempDir
  Path spillDirectory;

  @Test
  void everyRowArrivesExactlyOnceAcrossAConnectionOutage() throws Exception {
    try (PostgresTestSchema schema = new PostgresTestSchema(); TcpProxy proxy = new TcpProxy(PostgresTestSchema.PORT)) {
      SpoolerConfig config = SpoolerConfig.defaults().withSpillDirectory(spillDirectory).withMaxMemoryRows(2000)
          .withMaxBatchRows(1000).withInitialBackoff(Duration.ofMillis(20)).withMaxBackoff(Duration.ofMillis(400));
      SpoolerStats stats;
      try (ProvenanceSpooler spooler = ProvenanceSpooler.start(config,
          ProvenanceSink.opener(schema.urlThrough(proxy.port()), PostgresTestSchema.props()))) {
        spooler.register(INVOCATIONS);
        spooler.register(ITEM_EVENTS);
        for (int chunk = 0; chunk < CHUNKS; chunk++) {
          if (chunk == CUT_AT_CHUNK) {
            proxy.cut();
          } else if (chunk == RESTORE_AT_CHUNK) {
            proxy.restore();
          }
          List<ProvenanceRow> rows = new ArrayList<>(2 * ROWS_PER_TABLE_PER_CHUNK);
          for (int i = 0; i < ROWS_PER_TABLE_PER_CHUNK; i++) {
            long n = (long) chunk * ROWS_PER_TABLE_PER_CHUNK + i;
            rows.add(invocation(n));
            rows.add(itemEvent(n));
          }
          spooler.offer(rows);
          Thread.sleep(chunk >= CUT_AT_CHUNK && chunk < RESTORE_AT_CHUNK ? 40 : 5); // the cut lasts about 1.6 s
        }
        assertTrue(spooler.flush(Duration.ofSeconds(40)), "flush timed out: " + spooler.stats());
        stats = spooler.stats();
      }
      assertEquals(2L * ROWS_PER_TABLE, stats.rowsOffered());
      assertEquals(2L * ROWS_PER_TABLE, stats.rowsLoaded());
      assertEquals(0, stats.rowsInMemory());
      assertEquals(0, stats.rowsOnDisk());
      assertTrue(stats.failedLoadAttempts() > 0, "the outage must have failed loads: " + stats);
      assertTrue(stats.rowsSpilled() > 0, "rows must have spilled to disk during the outage: " + stats);
      assertTrue(proxy.connectionsAccepted() > 1, "the spooler must have reconnected");
      try (Stream<Path> left = Files.list(spillDirectory)) {
        assertEquals(List.of(), left.filter(f -> SpillFile.idOf(f).isPresent()).toList());
      }

      try (Connection direct = DriverManager.getConnection(schema.url(), PostgresTestSchema.props())) {
        assertEquals(ROWS_PER_TABLE, SinkChecks.queryLong(direct, "SELECT COUNT(*) FROM FunctionInvocations"));
        assertEquals(ROWS_PER_TABLE, SinkChecks.countDistinctKeys(direct, INVOCATIONS));
        assertEquals(ROWS_PER_TABLE, SinkChecks.queryLong(direct, "SELECT COUNT(*) FROM itemsEvents"));
        assertEquals(ROWS_PER_TABLE, SinkChecks.countDistinctKeys(direct, ITEM_EVENTS));
        assertEquals((long) ROWS_PER_TABLE * (ROWS_PER_TABLE - 1) / 2,
            SinkChecks.queryLong(direct, "SELECT SUM(tx_id) FROM FunctionInvocations"));
        for (long n : new long[] {0, 4_999, CUT_AT_CHUNK * ROWS_PER_TABLE_PER_CHUNK + 17, 12_345, ROWS_PER_TABLE - 1}) {
          assertInvocationStored(direct, n);
          assertItemEventStored(direct, n);
        }
      }
    }
  }

  private static ProvenanceRow invocation(long n) {
    return new ProvenanceRow(INVOCATIONS.name(), List.of(Instant.parse("2024-05-01T00:00:00Z").plusMillis(n),
        Long.toString(n), n, 0L, (int) (n % 2), "function" + (n % 7), "graph" + (n % 3), "exec-" + n / 4, "key-" + n, n % 4 == 0 ? "client" : "function0", n % 1000, "purpose" + (n % 2), "role" + (n % 3), "ran"));
  }

  private static ProvenanceRow itemEvent(long n) {
    return new ProvenanceRow(ITEM_EVENTS.name(), List.of(Instant.parse("2024-05-01T00:00:00Z").plusMillis(n),
        Long.toString(n), n, 0L, (int) (n % 2), n % 2 == 0 ? ProvenanceSchema.INSERT : ProvenanceSchema.UPDATE, n % 5, n * 11, "item " + n,
        new BigDecimal(n).movePointLeft(2)));
  }

  private static void assertInvocationStored(Connection connection, long n) throws SQLException {
    try (PreparedStatement query = connection.prepareStatement("SELECT event_time, function_name, graph_id, "
        + "execution_id, partition_key, caller FROM FunctionInvocations WHERE tx_id = ?")) {
      query.setLong(1, n);
      try (ResultSet rs = query.executeQuery()) {
        assertTrue(rs.next(), "invocation " + n + " missing");
        List<Object> expected = invocation(n).values();
        assertEquals(expected.get(0), rs.getObject(1, java.time.LocalDateTime.class).toInstant(java.time.ZoneOffset.UTC));
        for (int i = 2; i <= 6; i++) {
          assertEquals(expected.get(i + 3), rs.getString(i), "invocation " + n + " column " + i);
        }
      }
    }
  }

  private static void assertItemEventStored(Connection connection, long n) throws SQLException {
    try (PreparedStatement query = connection.prepareStatement("SELECT event_type, event_seq, item_id, name, price "
        + "FROM itemsEvents WHERE tx_id = ?")) {
      query.setLong(1, n);
      try (ResultSet rs = query.executeQuery()) {
        assertTrue(rs.next(), "item event " + n + " missing");
        List<Object> expected = itemEvent(n).values();
        assertEquals(expected.get(5), rs.getString(1));
        assertEquals(expected.get(6), rs.getLong(2));
        assertEquals(expected.get(7), rs.getLong(3));
        assertEquals(expected.get(8), rs.getString(4));
        assertEquals(0, ((BigDecimal) expected.get(9)).compareTo(rs.getBigDecimal(5)));
      }
    }
  }
}
