package org.apiary.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.apiary.DatabaseException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What spill files may never do (issue 11, items 3 to 5): load rows of an offer that failed (its transaction aborted),
 * stall on a table nobody registers after a restart, or drop intact rows behind a damaged one.
 */
class SpillSafetyTest {
  @TempDir
  Path dir;

  private final AtomicBoolean sinkDown = new AtomicBoolean();

  private Path spillDirectory() {
    return dir.resolve("spill");
  }

  private SpoolerConfig config() {
    return SpoolerConfig.defaults().withSpillDirectory(spillDirectory()).withInitialBackoff(Duration.ofMillis(10))
        .withMaxBackoff(Duration.ofMillis(100)).withCloseTimeout(Duration.ofSeconds(5));
  }

  private String url() {
    return "jdbc:duckdb:" + dir.resolve("provenance.db");
  }

  /** While closed, the loader waits in its first connection attempt: it then cannot close the open spill file. */
  private final java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);

  private void holdTheLoader(ProvenanceSpooler spooler, ProvenanceTable table) throws InterruptedException {
    gateClosed = true;
    spooler.offer(SinkChecks.typedRows(table, 1_000_000, 1_000_001, "gate"));
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
    while (!loaderWaiting && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertTrue(loaderWaiting, "the loader never tried to connect");
  }

  private volatile boolean gateClosed;
  private volatile boolean loaderWaiting;

  private Supplier<ProvenanceSink> sinks() {
    Supplier<ProvenanceSink> opener = ProvenanceSink.opener(url(), new Properties());
    return () -> {
      if (gateClosed) {
        loaderWaiting = true;
        try {
          gate.await(30, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        gateClosed = false;
      }
      if (sinkDown.get()) {
        throw new DatabaseException("provenance database down for the test");
      }
      return opener.get();
    };
  }

  /**
   * A durable offer is all or nothing. If it throws, the function's transaction aborts and none of its rows may ever
   * be loaded, by this spooler or after a restart; if it returns, all of them are loaded. Here the file system
   * refuses every new spill file while the offer has more rows than the open file has room for.
   */
  @Test
  void aDurableOfferIsLoadedWhollyOrNotAtAll() throws Exception {
    ProvenanceTable table = SinkChecks.typedTable("aborted");
    SpoolerConfig config = config().withMaxBatchRows(10);
    boolean offerFailed;
    try (ProvenanceSpooler spooler = ProvenanceSpooler.start(config, sinks())) {
      spooler.register(table);
      holdTheLoader(spooler, table); // the memory segment 0
      spooler.offerDurably(SinkChecks.typedRows(table, 0, 4, "v")); // committed, waits in spill file 1
      List<Path> blocked = new ArrayList<>();
      for (long id = 2; id < 10; id++) { // every spill file it could open next exists already, as a directory
        blocked.add(Files.createDirectory(SpillFile.path(spillDirectory(), id)));
      }
      try {
        spooler.offerDurably(SinkChecks.typedRows(table, 4, 26, "v"));
        offerFailed = false;
      } catch (UncheckedIOException e) {
        offerFailed = true; // the function's transaction aborts
      }
      for (Path b : blocked) {
        Files.delete(b);
      }
      spooler.offerDurably(SinkChecks.typedRows(table, 30, 33, "v")); // committed after it
      gate.countDown();
      assertTrue(spooler.flush(Duration.ofSeconds(30)), spooler.stats().toString());
    }
    try (ProvenanceSpooler restarted = ProvenanceSpooler.start(config, sinks())) {
      restarted.register(table);
      assertTrue(restarted.flush(Duration.ofSeconds(30)), restarted.stats().toString());
    }
    List<ProvenanceRow> committed = new ArrayList<>(SinkChecks.typedRows(table, 1_000_000, 1_000_001, "gate"));
    committed.addAll(SinkChecks.typedRows(table, 0, 4, "v"));
    if (!offerFailed) {
      committed.addAll(SinkChecks.typedRows(table, 4, 26, "v"));
    }
    committed.addAll(SinkChecks.typedRows(table, 30, 33, "v"));
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      assertEquals(committed.size(), SinkChecks.count(sink, table), (offerFailed ? "the offer failed" : "the offer "
          + "succeeded") + " but the sink holds another number of rows");
      SinkChecks.assertStored(sink, table, committed);
    }
  }

  /**
   * A durable offer whose flush fails throws (the transaction aborts), and its rows are taken out of the file again;
   * if the file cannot be cut back, the unit is marked damaged instead; if the disk refuses that too, this process
   * never loads it and durable capture stops, so no later execution commits without its provenance.
   */
  @Test
  void aDurableOfferWhoseFlushFailsIsNeverLoaded() throws Exception {
    ProvenanceTable table = SinkChecks.typedTable("unflushed");
    FailingChannels disk = new FailingChannels();
    SpoolerConfig config = config().withMaxBatchRows(1000);
    try (ProvenanceSpooler spooler = ProvenanceSpooler.start(config, sinks(), disk)) {
      spooler.register(table);
      holdTheLoader(spooler, table);
      spooler.offerDurably(SinkChecks.typedRows(table, 0, 3, "v"));

      disk.forceFailures.set(1); // the flush fails; cutting the unit off works
      assertThrows(UncheckedIOException.class, () -> spooler.offerDurably(SinkChecks.typedRows(table, 100, 105, "v")));
      spooler.offerDurably(SinkChecks.typedRows(table, 3, 6, "v"));

      disk.forceFailures.set(1); // the flush fails and so does the cut: the unit's first byte is overwritten
      disk.failTruncate = true;
      assertThrows(UncheckedIOException.class, () -> spooler.offerDurably(SinkChecks.typedRows(table, 200, 205, "v")));
      disk.failTruncate = false;
      spooler.offerDurably(SinkChecks.typedRows(table, 6, 9, "v"));

      disk.forceFailures.set(1_000); // nothing works any more
      disk.failTruncate = true;
      disk.failOverwrite = true;
      UncheckedIOException tainted = assertThrows(UncheckedIOException.class,
          () -> spooler.offerDurably(SinkChecks.typedRows(table, 300, 305, "v")));
      assertTrue(tainted.getMessage().contains("may still hold"), tainted.getMessage());
      disk.forceFailures.set(0);
      disk.failTruncate = false;
      disk.failOverwrite = false;
      UncheckedIOException stopped = assertThrows(UncheckedIOException.class,
          () -> spooler.offerDurably(SinkChecks.typedRows(table, 9, 12, "v")));
      assertTrue(stopped.getMessage().contains("durable provenance capture has stopped"), stopped.getMessage());
      assertTrue(spooler.stats().lastError().contains("may still hold"), spooler.stats().lastError());
      gate.countDown();
      assertTrue(spooler.flush(Duration.ofSeconds(30)), spooler.stats().toString());
    }
    List<ProvenanceRow> committed = new ArrayList<>(SinkChecks.typedRows(table, 1_000_000, 1_000_001, "gate"));
    committed.addAll(SinkChecks.typedRows(table, 0, 9, "v"));
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      assertEquals(committed.size(), SinkChecks.count(sink, table), "rows of failed offers were loaded");
      SinkChecks.assertStored(sink, table, committed);
    }
    // After a restart the first two failed offers stay out; the third may be read back (documented in
    // docs/provenance.md).
    try (ProvenanceSpooler restarted = ProvenanceSpooler.start(config, sinks())) {
      assertTrue(restarted.flush(Duration.ofSeconds(30)), restarted.stats().toString());
    }
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      assertEquals(0, SinkChecks.queryLong(sink.connection(), "SELECT count(*) FROM " + table.name()
          + " WHERE event_seq >= 100 AND event_seq < 300"));
    }
  }

  /** Rows spilled before a restart load even if nothing registers their table again (it may no longer be used). */
  @Test
  void spilledRowsLoadAfterARestartWithoutTheirTableBeingRegisteredAgain() throws Exception {
    ProvenanceTable table = SinkChecks.typedTable("retired");
    sinkDown.set(true);
    try (ProvenanceSpooler first = ProvenanceSpooler.start(config().withMaxMemoryRows(100).withMaxBatchRows(50),
        sinks())) {
      first.register(table);
      first.offer(SinkChecks.typedRows(table, 0, 300, "v"));
    }
    sinkDown.set(false);
    try (ProvenanceSpooler second = ProvenanceSpooler.start(config(), sinks())) {
      assertTrue(second.flush(Duration.ofSeconds(10)), "recovered rows stalled: " + second.stats());
      assertEquals(300, second.stats().rowsLoaded());
    }
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      SinkChecks.assertStored(sink, table, SinkChecks.typedRows(table, 0, 300, "v"));
    }
  }

  /** A damaged stretch in the middle of a spill file costs the rows written with it, not every row after it. */
  @Test
  void damageInTheMiddleOfASpillFileLosesOnlyTheRowsWrittenWithIt() throws Exception {
    ProvenanceTable table = SinkChecks.typedTable("damaged");
    SpoolerConfig config = config().withMaxBatchRows(1000).withCloseTimeout(Duration.ofMillis(200));
    sinkDown.set(true);
    try (ProvenanceSpooler first = ProvenanceSpooler.start(config, sinks())) {
      first.register(table);
      holdTheLoader(first, table);
      for (int from = 0; from < 400; from += 20) {
        first.offerDurably(SinkChecks.typedRows(table, from, from + 20, "v")); // 20 offers of 20 rows, one file
      }
      gate.countDown(); // the sink is still down: nothing loads
    }
    List<Path> files = spillFiles();
    Path durable = files.stream().filter(f -> f.getFileName().toString().endsWith("1.spill")).findFirst()
        .orElseThrow(() -> new AssertionError("no spill file 1 among " + files));
    byte[] bytes = Files.readAllBytes(durable);
    bytes[bytes.length / 2] ^= 0x5a;
    Files.write(durable, bytes);

    sinkDown.set(false);
    long loaded;
    try (ProvenanceSpooler second = ProvenanceSpooler.start(config, sinks())) {
      second.register(table);
      assertTrue(second.flush(Duration.ofSeconds(30)), second.stats().toString());
      loaded = second.stats().rowsLoaded();
    }
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      long stored = SinkChecks.count(sink, table);
      assertEquals(loaded, stored);
      assertEquals(381, stored, "only the 20 rows of the damaged offer may be lost (the gate's row is loaded too)");
      assertEquals(100, SinkChecks.queryLong(sink.connection(), "SELECT count(*) FROM " + table.name()
          + " WHERE event_seq >= 300 AND event_seq < 400"), "rows offered well after the damaged ones are loaded");
    }
  }

  private List<Path> spillFiles() throws IOException {
    try (Stream<Path> files = Files.list(spillDirectory())) {
      return files.filter(f -> SpillFile.idOf(f).isPresent()).sorted().toList();
    }
  }
}
