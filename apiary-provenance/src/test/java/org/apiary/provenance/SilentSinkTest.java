package org.apiary.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.time.Duration;
import java.util.Properties;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sink whose network goes silent (connections stay open, no byte comes back) must not hang its loader: through a
 * proxy the test owns, loads fail within the sink timeout with an error naming the sink and the timeout, reconnecting
 * into the silence fails the same bounded way, and once the network answers again every row is loaded exactly once.
 * The PostgreSQL server itself keeps running.
 */
class SilentSinkTest {
  private static final Duration SINK_TIMEOUT = Duration.ofSeconds(2);
  /** The most one failed attempt may take here: the timeout, plus backoff and a slow 2-core machine. */
  private static final Duration FAILURE_BOUND = Duration.ofSeconds(12);

  @TempDir
  Path spillDirectory;

  @Test
  void aSilentSinkFailsTheSpoolersLoadsWithinTheTimeoutAndLosesNoRow() throws Exception {
    ProvenanceTable table = SinkChecks.typedTable("silent");
    try (PostgresTestSchema schema = new PostgresTestSchema(); TcpProxy proxy = new TcpProxy(PostgresTestSchema.PORT)) {
      String url = schema.urlThrough(proxy.port());
      SpoolerConfig config = SpoolerConfig.defaults().withSpillDirectory(spillDirectory)
          .withInitialBackoff(Duration.ofMillis(50)).withMaxBackoff(Duration.ofMillis(200))
          .withCloseTimeout(Duration.ofSeconds(2));
      try (ProvenanceSpooler spooler = ProvenanceSpooler.start(config,
          ProvenanceSink.opener(url, userOnly(), SINK_TIMEOUT))) {
        spooler.register(table);
        spooler.offer(SinkChecks.typedRows(table, 0, 100, "v"));
        assertTrue(spooler.flush(Duration.ofSeconds(20)), "first load timed out: " + spooler.stats());

        proxy.blackHole();
        spooler.offer(SinkChecks.typedRows(table, 100, 300, "v"));
        SpoolerStats failed = await(spooler, s -> s.failedLoadAttempts() >= 1, FAILURE_BOUND,
            "a load into the silent sink to fail");
        assertTrue(failed.lastError().contains("cannot load 200 rows into provenance table silentEvents in " + url),
            failed.lastError());
        assertTrue(failed.lastError().contains("sink timeout of 2 s"), failed.lastError());
        assertEquals(100, failed.rowsLoaded(), failed.toString());
        assertEquals(200, failed.rowsInMemory(), "the failed rows wait for the retry: " + failed);

        // Reconnecting into the silence: the login times out the same bounded way.
        SpoolerStats reconnecting = await(spooler, s -> s.failedLoadAttempts() >= 3, FAILURE_BOUND.multipliedBy(2),
            "two reconnects into the silent sink to fail");
        assertTrue(reconnecting.lastError().contains("cannot connect to provenance database " + url),
            reconnecting.lastError());
        assertTrue(reconnecting.lastError().contains("sink timeout of 2 s"), reconnecting.lastError());
        assertEquals(100, reconnecting.rowsLoaded(), reconnecting.toString());
        assertTrue(proxy.connectionsAccepted() >= 3, "the spooler must have tried to reconnect");
        try (Connection direct = DriverManager.getConnection(schema.url(), PostgresTestSchema.props())) {
          assertEquals(100, SinkChecks.queryLong(direct, "SELECT COUNT(*) FROM silentEvents"));
        }

        proxy.restore();
        assertTrue(spooler.flush(Duration.ofSeconds(20)), "flush after the sink answers again: " + spooler.stats());
        SpoolerStats done = spooler.stats();
        assertEquals(300, done.rowsLoaded(), done.toString());
        assertEquals(0, done.rowsInMemory(), done.toString());
      }
      try (ProvenanceSink direct = ProvenanceSink.open(schema.url(), PostgresTestSchema.props())) {
        assertEquals(300, SinkChecks.countDistinctKeys(direct.connection(), table));
        SinkChecks.assertStored(direct, table, SinkChecks.typedRows(table, 0, 300, "v"));
      }
    }
  }

  @Test
  void aLoadIntoASilentSinkThrowsATimeoutNamingTheSinkAndTheTimeout() throws Exception {
    ProvenanceTable table = SinkChecks.typedTable("hushed");
    try (PostgresTestSchema schema = new PostgresTestSchema(); TcpProxy proxy = new TcpProxy(PostgresTestSchema.PORT)) {
      String url = schema.urlThrough(proxy.port());
      try (ProvenanceSink sink = ProvenanceSink.open(url, userOnly(), SINK_TIMEOUT)) {
        assertEquals(SINK_TIMEOUT, sink.timeout());
        sink.ensureTable(table);
        proxy.blackHole();
        SQLException e = assertTimeoutPreemptively(FAILURE_BOUND, () -> assertThrows(SQLTimeoutException.class,
            () -> sink.load(table, SinkChecks.typedRows(table, 0, 10, "v"))));
        assertTrue(e.getMessage().startsWith("cannot load 10 rows into provenance table hushedEvents in " + url
            + ": timed out, the database did not answer within the sink timeout of 2 s"), e.getMessage());

        SQLException connect = assertTimeoutPreemptively(FAILURE_BOUND, () -> assertThrows(SQLTimeoutException.class,
            () -> ProvenanceSink.open(url, userOnly(), SINK_TIMEOUT).close()));
        assertTrue(connect.getMessage().startsWith("cannot connect to provenance database " + url
            + ": timed out, the database did not answer within the sink timeout of 2 s"), connect.getMessage());
      }
      proxy.restore();
      try (Connection direct = DriverManager.getConnection(schema.url(), PostgresTestSchema.props())) {
        assertEquals(0, SinkChecks.queryLong(direct, "SELECT COUNT(*) FROM hushedEvents"));
      }
    }
  }

  /**
   * A live database that keeps a load waiting (here on a lock) says nothing meanwhile; with a socket timeout of the
   * user's own far longer than the sink timeout, the statement timeout is what ends the load, and only the sink's
   * own transaction has it: the session keeps its setting for other queries on the connection.
   */
  @Test
  void aLoadWaitingOnALockFailsWithinTheTimeoutAndTheRowsLoadOnceItIsReleased() throws Exception {
    ProvenanceTable table = SinkChecks.typedTable("locked");
    Properties props = userOnly();
    props.setProperty("socketTimeout", "60");
    try (PostgresTestSchema schema = new PostgresTestSchema();
         ProvenanceSink sink = ProvenanceSink.open(schema.url(), props, SINK_TIMEOUT)) {
      sink.ensureTable(table);
      try (Connection holder = DriverManager.getConnection(schema.url(), PostgresTestSchema.props());
           java.sql.Statement lock = holder.createStatement()) {
        holder.setAutoCommit(false);
        lock.execute("LOCK TABLE lockedEvents IN ACCESS EXCLUSIVE MODE");
        SQLException e = assertTimeoutPreemptively(FAILURE_BOUND, () -> assertThrows(SQLTimeoutException.class,
            () -> sink.load(table, SinkChecks.typedRows(table, 0, 10, "v"))));
        assertTrue(e.getMessage().contains("sink timeout of 2 s"), e.getMessage());
        assertEquals("57014", e.getSQLState(), "cancelled by statement_timeout: " + e.getMessage());
        holder.rollback();
      }
      assertEquals("0", queryText(sink.connection(), "SHOW statement_timeout"));
      sink.connection().rollback();
      sink.load(table, SinkChecks.typedRows(table, 0, 10, "v"));
      SinkChecks.assertStored(sink, table, SinkChecks.typedRows(table, 0, 10, "v"));
    }
  }

  /** A statement_timeout the user gave (here a longer one) applies to the sink's statements instead of its own. */
  @Test
  void aStatementTimeoutOfTheUsersOwnIsKept() throws Exception {
    ProvenanceTable table = SinkChecks.typedTable("patient");
    Properties props = userOnly();
    props.setProperty("options", "-c statement_timeout=3500");
    props.setProperty("socketTimeout", "60");
    try (PostgresTestSchema schema = new PostgresTestSchema();
         ProvenanceSink sink = ProvenanceSink.open(schema.url(), props, SINK_TIMEOUT)) {
      sink.ensureTable(table);
      try (Connection holder = DriverManager.getConnection(schema.url(), PostgresTestSchema.props());
           java.sql.Statement lock = holder.createStatement()) {
        holder.setAutoCommit(false);
        lock.execute("LOCK TABLE patientEvents IN ACCESS EXCLUSIVE MODE");
        long started = System.nanoTime();
        SQLException e = assertTimeoutPreemptively(FAILURE_BOUND, () -> assertThrows(SQLException.class,
            () -> sink.load(table, SinkChecks.typedRows(table, 0, 3, "v"))));
        Duration waited = Duration.ofNanos(System.nanoTime() - started);
        holder.rollback();
        assertEquals("57014", e.getSQLState(), e.getMessage());
        assertTrue(waited.compareTo(Duration.ofMillis(3400)) >= 0, "cancelled after " + waited
            + ", before the user's statement_timeout of 3.5 s: " + e.getMessage());
      }
      assertEquals("3500ms", queryText(sink.connection(), "SHOW statement_timeout"));
      sink.connection().rollback();
    }
  }

  private static String queryText(Connection connection, String sql) throws SQLException {
    try (java.sql.Statement statement = connection.createStatement();
         java.sql.ResultSet result = statement.executeQuery(sql)) {
      assertTrue(result.next(), sql);
      return result.getString(1);
    }
  }

  /** Connection properties with no timeout of the user's own: the sink must bring them. */
  private static Properties userOnly() {
    Properties props = new Properties();
    props.setProperty("user", "postgres");
    return props;
  }

  /** Polls the spooler's stats until the condition holds; fails, showing where the loader is, after {@code bound}. */
  private static SpoolerStats await(ProvenanceSpooler spooler, Predicate<SpoolerStats> condition, Duration bound,
                                    String what) throws InterruptedException {
    long deadline = System.nanoTime() + bound.toNanos();
    while (true) {
      SpoolerStats stats = spooler.stats();
      if (condition.test(stats)) {
        return stats;
      }
      if (System.nanoTime() - deadline > 0) {
        fail("waited " + bound.toSeconds() + " s for " + what + "; the loader seems stuck: " + stats
            + loaderStack());
      }
      Thread.sleep(20);
    }
  }

  /** Where the spooler's thread is, for a failure message. */
  private static String loaderStack() {
    StringBuilder text = new StringBuilder();
    Thread.getAllStackTraces().forEach((thread, frames) -> {
      if (thread.getName().equals("apiary-provenance-spooler")) {
        text.append("\nspooler thread (").append(thread.getState()).append("):");
        for (int i = 0; i < Math.min(frames.length, 12); i++) {
          text.append("\n  at ").append(frames[i]);
        }
      }
    });
    return text.toString();
  }
}
