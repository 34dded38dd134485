package org.apiary.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The spooler against the machine's PostgreSQL server, in a schema of the test's own. */
class PostgresSpoolerTest {
  @TempDir
  Path spillDirectory;

  private PostgresTestSchema schema;

  @BeforeEach
  void createSchema() throws SQLException {
    schema = new PostgresTestSchema();
  }

  @AfterEach
  void dropSchema() throws SQLException {
    schema.close();
  }

  /**
   * A row the database rejects blocks the rows behind it, spilled or newer, without being dropped; once the database
   * accepts it everything loads exactly once.
   */
  @Test
  void aRejectedRowHoldsBackLaterRowsUntilTheDatabaseAcceptsIt() throws Exception {
    ProvenanceTable typed = SinkChecks.typedTable("guarded");
    try (ProvenanceSink sink = ProvenanceSink.open(schema.url(), PostgresTestSchema.props())) {
      sink.ensureTable(typed);
    }
    execute("ALTER TABLE guardedEvents ADD CONSTRAINT no_seq_700 CHECK (event_seq <> 700)");

    SpoolerConfig config = SpoolerConfig.defaults().withSpillDirectory(spillDirectory).withMaxMemoryRows(500)
        .withMaxBatchRows(250).withInitialBackoff(Duration.ofMillis(10)).withMaxBackoff(Duration.ofMillis(50))
        .withOfferWait(Duration.ZERO); // the rows beyond memory spill at once rather than wait for loads
    try (ProvenanceSpooler spooler = ProvenanceSpooler.start(config,
        ProvenanceSink.opener(schema.url(), PostgresTestSchema.props()))) {
      spooler.register(typed);
      spooler.offer(SinkChecks.typedRows(typed, 0, 1500, "v")); // 500 to memory, 1000 to four spill files
      assertEquals(1000, spooler.stats().rowsSpilled());
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (spooler.stats().failedLoadAttempts() < 3 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      SpoolerStats blocked = spooler.stats();
      assertTrue(blocked.failedLoadAttempts() >= 3, blocked.toString());
      assertTrue(blocked.lastError().contains("no_seq_700"), blocked.lastError());
      spooler.offer(SinkChecks.typedRows(typed, 1500, 1600, "v")); // newer rows, in memory behind the spill files

      Thread.sleep(100);
      try (Connection direct = DriverManager.getConnection(schema.url(), PostgresTestSchema.props())) {
        assertEquals(500, SinkChecks.queryLong(direct, "SELECT COUNT(*) FROM guardedEvents"),
            "only the rows ahead of the rejected batch are loaded");
        assertEquals(499, SinkChecks.queryLong(direct, "SELECT MAX(event_seq) FROM guardedEvents"));
      }
      assertEquals(100, spooler.stats().rowsInMemory());
      assertEquals(1000, spooler.stats().rowsOnDisk());

      execute("ALTER TABLE guardedEvents DROP CONSTRAINT no_seq_700");
      assertTrue(spooler.flush(Duration.ofSeconds(20)), "flush timed out: " + spooler.stats());
      assertEquals(1600, spooler.stats().rowsLoaded());
    }
    try (ProvenanceSink sink = ProvenanceSink.open(schema.url(), PostgresTestSchema.props())) {
      List<ProvenanceRow> expected = new ArrayList<>(SinkChecks.typedRows(typed, 0, 1600, "v"));
      SinkChecks.assertStored(sink, typed, expected);
    }
  }

  private void execute(String sql) throws SQLException {
    try (Connection direct = DriverManager.getConnection(schema.url(), PostgresTestSchema.props());
         Statement statement = direct.createStatement()) {
      statement.execute(sql);
    }
  }
}
