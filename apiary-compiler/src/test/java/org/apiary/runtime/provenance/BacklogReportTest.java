package org.apiary.runtime.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.apiary.provenance.ColumnType;
import org.apiary.provenance.ProvenanceColumn;
import org.apiary.provenance.ProvenanceRow;
import org.apiary.provenance.ProvenanceSink;
import org.apiary.provenance.ProvenanceSpooler;
import org.apiary.provenance.ProvenanceTable;
import org.apiary.provenance.SpoolerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server's backlog report carries its spooler's spill bytes, the age of its oldest unloaded row and whether the
 * sink answered (issue 43), as {@code apiary status}, the console and {@code /metrics} read it back from the file.
 */
class BacklogReportTest {
  private static final ProvenanceTable TABLE = new ProvenanceTable("LagRows",
      List.of(new ProvenanceColumn("id", ColumnType.BIGINT), new ProvenanceColumn("note", ColumnType.VARCHAR)),
      List.of("id"), List.of());

  @TempDir
  Path dir;

  /**
   * A real DuckDB sink, cut: its URL names a file under a path that is a regular file until the test puts a
   * directory there. The report written while it is cut shows spilled bytes, a growing age and an unreachable sink;
   * the one written after the rows are loaded, 0 bytes, age 0 and a reachable sink.
   */
  @Test
  void theReportCarriesSpillBytesTheOldestRowsAgeAndWhetherTheSinkAnswered() throws Exception {
    Path blocker = dir.resolve("sink");
    Files.writeString(blocker, "not a directory");
    Path serverDirectory = dir.resolve("spill").resolve("server-a");
    SpoolerConfig config = SpoolerConfig.defaults().withSpillDirectory(serverDirectory).withMaxMemoryRows(50)
        .withMaxBatchRows(50).withOfferWait(Duration.ZERO).withInitialBackoff(Duration.ofMillis(10))
        .withMaxBackoff(Duration.ofMillis(100)).withCloseTimeout(Duration.ofSeconds(5));
    try (ProvenanceSpooler spooler = ProvenanceSpooler.start(config,
        ProvenanceSink.opener("jdbc:duckdb:" + blocker.resolve("provenance.duckdb"), new Properties()))) {
      spooler.register(TABLE);
      spooler.offer(rows(0, 50));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (spooler.stats().failedLoadAttempts() < 1 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      spooler.offer(rows(50, 200)); // memory is full: these spill
      Thread.sleep(200);
      BacklogReport.of("/srv/a", 7, spooler.stats(), null, false, Instant.now()).writeTo(serverDirectory);
      BacklogReport cut = BacklogReport.readAll(dir.resolve("spill")).get(0);
      assertEquals(150, cut.rowsOnDisk(), cut.toString());
      assertTrue(cut.spillBytes() > 150, cut.toString());
      assertTrue(cut.oldestUnloadedSeconds() >= 0.2, cut.toString());
      assertEquals(Boolean.FALSE, cut.sinkReachable(), cut.toString());
      assertTrue(cut.lastError().contains("provenance.duckdb"), cut.toString());

      Files.delete(blocker);
      Files.createDirectory(blocker);
      assertTrue(spooler.flush(Duration.ofSeconds(20)), spooler.stats().toString());
      BacklogReport.of("/srv/a", 7, spooler.stats(), null, false, Instant.now()).writeTo(serverDirectory);
      BacklogReport back = BacklogReport.readAll(dir.resolve("spill")).get(0);
      assertEquals(0, back.rowsWaiting(), back.toString());
      assertEquals(0L, back.spillBytes(), back.toString());
      assertEquals(0.0, back.oldestUnloadedSeconds(), back.toString());
      assertEquals(Boolean.TRUE, back.sinkReachable(), back.toString());
    }
  }

  /** A report written by a server from before these fields were reported still reads, with them null. */
  @Test
  void anOlderReportWithoutTheNewFieldsStillReads() throws Exception {
    Path server = Files.createDirectories(dir.resolve("server-old"));
    Files.writeString(server.resolve(BacklogReport.FILE), "{\"server\":\"/srv/old\",\"pid\":3,\"rowsInMemory\":1,"
        + "\"rowsOnDisk\":2,\"rowsLoaded\":3,\"rowsDropped\":0,\"lastError\":null,\"refusing\":null,"
        + "\"stopped\":false,\"at\":\"2026-01-01T00:00:00Z\"}");
    BacklogReport old = BacklogReport.readAll(dir).get(0);
    assertEquals(3, old.rowsWaiting());
    assertNull(old.spillBytes());
    assertNull(old.oldestUnloadedSeconds());
    assertNull(old.sinkReachable());
  }

  private static List<ProvenanceRow> rows(long from, long to) {
    return LongStream.range(from, to).mapToObj(i -> new ProvenanceRow(TABLE.name(), List.of(i, "row " + i)))
        .toList();
  }
}
