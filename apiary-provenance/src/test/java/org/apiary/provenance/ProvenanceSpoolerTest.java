package org.apiary.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.apiary.DatabaseException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The spooler against DuckDB, with a sink factory the test can make fail. */
class ProvenanceSpoolerTest {
  @TempDir
  Path dir;

  private final AtomicBoolean sinkDown = new AtomicBoolean();

  private String url() {
    return "jdbc:duckdb:" + dir.resolve("provenance.db");
  }

  private Path spillDirectory() {
    return dir.resolve("spill");
  }

  private SpoolerConfig config() {
    return SpoolerConfig.defaults().withSpillDirectory(spillDirectory()).withInitialBackoff(Duration.ofMillis(10))
        .withMaxBackoff(Duration.ofMillis(100)).withCloseTimeout(Duration.ofSeconds(5));
  }

  /** Opens DuckDB sinks, or fails as a database that cannot be reached while {@link #sinkDown} is set. */
  private Supplier<ProvenanceSink> sinks() {
    Supplier<ProvenanceSink> opener = ProvenanceSink.opener(url(), new Properties());
    return () -> {
      if (sinkDown.get()) {
        throw new DatabaseException("provenance database down for the test");
      }
      return opener.get();
    };
  }

  /**
   * Rows offered while a load runs wait for the next flush interval instead of starting another load at once: a
   * load's fixed cost in the sink is about 1 ms of CPU, and a loader that loaded whatever arrived during its last
   * load ran back to back under steady load (measured: 33 loads per second per table at a 250 ms interval, a third
   * of a core at 1,000 executions per second).
   */
  @Test
  void steadyOffersAreLoadedOncePerFlushIntervalNotBackToBack() throws Exception {
    ProvenanceTable times = ProvenanceSchema.functionExecTimes();
    Duration interval = Duration.ofMillis(400);
    long offeredFor = TimeUnit.SECONDS.toNanos(3);
    try (ProvenanceSpooler spooler = ProvenanceSpooler.start(config().withFlushInterval(interval), sinks())) {
      spooler.register(times);
      long started = System.nanoTime();
      long tx = 0;
      while (System.nanoTime() - started < offeredFor) {
        List<ProvenanceRow> rows = new ArrayList<>();
        for (int i = 0; i < 5; i++, tx++) {
          rows.add(new ProvenanceRow(times.name(), List.of(Instant.EPOCH.plusSeconds(tx), Long.toString(tx), tx, tx)));
        }
        spooler.offer(rows);
        Thread.sleep(1);
      }
      long batches = spooler.stats().batchesLoaded();
      assertTrue(spooler.flush(Duration.ofSeconds(30)), "flush timed out: " + spooler.stats());
      assertEquals(tx, spooler.stats().rowsLoaded());
      // 3 s at 400 ms is 7 or 8 intervals; one load each, and a few more if the machine stalls a wake-up.
      assertTrue(batches <= 12, batches + " loads of " + tx + " rows in 3 s at a 400 ms flush interval: " + spooler.stats());
    }
  }

  /**
   * A loader that is only slower than the offers (its loads succeed) gets room by making the offering threads wait
   * for it rather than by spilling: under CPU saturation spilling cost VoltDB's sites more per row than waiting, and
   * the loader then read every spilled row back from disk, so the capture fell further behind the more it spilled.
   * Here every load (a DuckDB commit of 100 rows) takes far longer than an offer of 10 rows, so memory fills at once.
   */
  @Test
  void offersWaitForALoaderThatKeepsLoadingInsteadOfSpilling() throws Exception {
    ProvenanceTable typed = SinkChecks.typedTable("paced");
    SpoolerConfig config = config().withMaxMemoryRows(200).withMaxBatchRows(100).withOfferWait(Duration.ofSeconds(5));
    try (ProvenanceSpooler spooler = ProvenanceSpooler.start(config, sinks())) {
      spooler.register(typed);
      for (int from = 0; from < 20_000; from += 10) {
        spooler.offer(SinkChecks.typedRows(typed, from, from + 10, "v"));
      }
      assertTrue(spooler.flush(Duration.ofSeconds(60)), "flush timed out: " + spooler.stats());
      SpoolerStats stats = spooler.stats();
      assertEquals(20_000, stats.rowsLoaded(), stats.toString());
      assertEquals(0, stats.rowsSpilled(), "rows spilled while every load succeeded: " + stats);
    }
    assertEquals(List.of(), spillFiles());
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      assertLoadedInOfferOrder(sink, typed, 20_000);
    }
  }

  /**
   * A loader that makes no progress (its sink hangs) holds up one offer for at most the offer wait; later offers
   * spill at once until a load completes again, so a hung sink never holds every transaction for the whole wait.
   */
  @Test
  void aHungLoaderHoldsUpOneOfferForTheOfferWaitAndLaterOffersSpillAtOnce() throws Exception {
    ProvenanceTable typed = SinkChecks.typedTable("hung");
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Supplier<ProvenanceSink> opener = sinks();
    Supplier<ProvenanceSink> hangingOnce = () -> {
      if (entered.getCount() > 0) {
        entered.countDown();
        try {
          release.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return opener.get();
    };
    SpoolerConfig config = config().withMaxMemoryRows(100).withMaxBatchRows(50).withOfferWait(Duration.ofMillis(300));
    try (ProvenanceSpooler spooler = ProvenanceSpooler.start(config, hangingOnce)) {
      spooler.register(typed);
      spooler.offer(SinkChecks.typedRows(typed, 0, 100, "v"));
      assertTrue(entered.await(10, TimeUnit.SECONDS), "the loader never started a load");
      long start = System.nanoTime();
      for (int from = 100; from < 2100; from += 10) { // 200 offers with memory full
        spooler.offer(SinkChecks.typedRows(typed, from, from + 10, "v"));
      }
      long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertTrue(elapsedMillis < 5_000, "200 offers to a hung loader took " + elapsedMillis + " ms");
      assertEquals(2000, spooler.stats().rowsSpilled(), spooler.stats().toString());
      release.countDown();
      assertTrue(spooler.flush(Duration.ofSeconds(30)), "flush timed out: " + spooler.stats());
      assertEquals(2100, spooler.stats().rowsLoaded());
    }
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      assertLoadedInOfferOrder(sink, typed, 2100);
    }
  }

  @Test
  void loadsOfferedRowsOfSeveralTables() throws SQLException, IOException {
    ProvenanceTable typed = SinkChecks.typedTable("alpha");
    ProvenanceTable times = ProvenanceSchema.functionExecTimes();
    try (ProvenanceSpooler spooler = ProvenanceSpooler.start(config().withMaxBatchRows(700), sinks())) {
      spooler.register(typed);
      spooler.register(times);
      spooler.register(times); // the same definition again is fine
      for (int chunk = 0; chunk < 12; chunk++) {
        List<ProvenanceRow> rows = new ArrayList<>(SinkChecks.typedRows(typed, chunk * 500L, chunk * 500L + 500, "v"));
        for (long tx = chunk * 500L; tx < chunk * 500L + 500; tx++) {
          rows.add(new ProvenanceRow(times.name(), List.of(Instant.EPOCH.plusSeconds(tx), Long.toString(tx), tx, tx * 3)));
        }
        spooler.offer(rows);
      }
      assertTrue(spooler.flush(Duration.ofSeconds(30)), "flush timed out: " + spooler.stats());
      SpoolerStats stats = spooler.stats();
      assertEquals(new SpoolerStats(12_000, 0, 12_000, 0, 0, 0, 0, 0, 0, stats.batchesLoaded(), 0, null, 0,
          Duration.ZERO, true), stats);
    }
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      SinkChecks.assertStored(sink, typed, SinkChecks.typedRows(typed, 0, 6000, "v"));
      assertEquals(6000, SinkChecks.count(sink, times));
      assertEquals(6000 * 5999 / 2 * 3, SinkChecks.queryLong(sink.connection(),
          "SELECT SUM(latency_us) FROM FunctionExecTimes"));
    }
    assertEquals(List.of(), spillFiles());
  }

  @Test
  void refusesMisuseWithMessagesNamingTheCall() {
    ProvenanceTable typed = SinkChecks.typedTable("strict");
    ProvenanceSpooler spooler = ProvenanceSpooler.start(config(), sinks());
    try {
      IllegalArgumentException unregistered = assertThrows(IllegalArgumentException.class,
          () -> spooler.offer(SinkChecks.typedRows(typed, 0, 1, "v")));
      assertTrue(unregistered.getMessage().contains("strictEvents is not registered"), unregistered.getMessage());

      spooler.register(typed);
      List<Object> values = new ArrayList<>(SinkChecks.typedRow(typed, 1, "v").values());
      values.set(8, "not an integer"); // c_int
      List<ProvenanceRow> mixed = List.of(SinkChecks.typedRow(typed, 0, "v"), new ProvenanceRow(typed.name(), values));
      assertThrows(IllegalArgumentException.class, () -> spooler.offer(mixed));
      assertEquals(0, spooler.stats().rowsOffered(), "a rejected offer takes none of its rows");

      ProvenanceTable other = ProvenanceSchema.eventsTable("strict", SinkChecks.TYPED_COLUMNS.subList(0, 2),
          List.of("id"));
      assertThrows(IllegalArgumentException.class, () -> spooler.register(other));

      IllegalStateException sameDirectory = assertThrows(IllegalStateException.class,
          () -> ProvenanceSpooler.start(config(), sinks()));
      assertTrue(sameDirectory.getMessage().contains("in use"), sameDirectory.getMessage());
    } finally {
      spooler.close();
    }
    assertThrows(IllegalStateException.class, () -> spooler.offer(SinkChecks.typedRows(typed, 0, 1, "v")));
    assertThrows(IllegalStateException.class, () -> spooler.register(typed));
    spooler.close(); // a second close does nothing
  }

  @Test
  void spillFilesSurviveCloseWhileTheSinkIsDownAndTheNextSpoolerLoadsThem() throws Exception {
    ProvenanceTable typed = SinkChecks.typedTable("kept");
    SpoolerConfig config = config().withMaxMemoryRows(1000).withMaxBatchRows(500);
    sinkDown.set(true);
    ProvenanceSpooler first = ProvenanceSpooler.start(config, sinks());
    first.register(typed);
    for (int from = 0; from < 5000; from += 250) {
      first.offer(SinkChecks.typedRows(typed, from, from + 250, "v"));
    }
    assertFalse(first.flush(Duration.ofMillis(300)), "nothing can load while the sink is down");
    SpoolerStats down = first.stats();
    assertEquals(5000, down.rowsOffered());
    assertEquals(1000, down.rowsInMemory());
    assertEquals(4000, down.rowsOnDisk());
    assertEquals(4000, down.rowsSpilled());
    assertEquals(0, down.rowsLoaded());
    assertTrue(down.failedLoadAttempts() > 0, down.toString());
    assertTrue(down.lastError().contains("down for the test"), down.lastError());

    first.close();
    SpoolerStats closed = first.stats();
    assertEquals(0, closed.rowsInMemory());
    assertEquals(5000, closed.rowsOnDisk());
    assertEquals(5000, closed.rowsSpilled());
    assertFalse(first.flush(Duration.ofMillis(10)));
    List<Path> files = spillFiles();
    assertEquals(9, files.size(), "8 files of 500 spilled rows and one for the 1000 memory rows: " + files);
    long spilledRows = 0;
    for (Path file : files) {
      spilledRows += SpillFile.count(file);
    }
    assertEquals(5000, spilledRows);
    long spilledBytes = 0;
    for (Path file : files) {
      spilledBytes += Files.size(file);
    }
    assertEquals(spilledBytes, closed.bytesOnDisk(), "the rows in memory were spilled at close: " + closed);

    sinkDown.set(false);
    try (ProvenanceSpooler second = ProvenanceSpooler.start(config, sinks())) {
      assertEquals(5000, second.stats().rowsRecovered());
      assertEquals(5000, second.stats().rowsOnDisk());
      assertEquals(spilledBytes, second.stats().bytesOnDisk(), "the files found at start: " + second.stats());
      second.register(typed);
      second.offer(SinkChecks.typedRows(typed, 5000, 5100, "v"));
      assertTrue(second.flush(Duration.ofSeconds(30)), "flush timed out: " + second.stats());
      SpoolerStats stats = second.stats();
      assertEquals(5100, stats.rowsLoaded());
      assertEquals(0, stats.rowsOnDisk());
      assertEquals(0, stats.rowsInMemory());
      assertEquals(0, stats.bytesOnDisk());
      assertEquals(Duration.ZERO, stats.oldestWaiting());
    }
    assertEquals(List.of(), spillFiles(), "spill files are deleted once loaded");
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      SinkChecks.assertStored(sink, typed, SinkChecks.typedRows(typed, 0, 5100, "v"));
      assertLoadedInOfferOrder(sink, typed, 5100);
    }
  }

  @Test
  void rowsWaitingThroughAnOutageAreLoadedOnceInOfferOrder() throws Exception {
    ProvenanceTable typed = SinkChecks.typedTable("ordered");
    sinkDown.set(true);
    try (ProvenanceSpooler spooler = ProvenanceSpooler.start(config().withMaxMemoryRows(500).withMaxBatchRows(300),
        sinks())) {
      spooler.register(typed);
      for (int from = 0; from < 3000; from += 100) {
        spooler.offer(SinkChecks.typedRows(typed, from, from + 100, "v"));
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (spooler.stats().failedLoadAttempts() < 3 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertTrue(spooler.stats().failedLoadAttempts() >= 3, spooler.stats().toString());
      assertEquals(2500, spooler.stats().rowsOnDisk());
      sinkDown.set(false);
      // newer rows keep coming while the backlog loads: they go to memory once it has room, behind the spill files
      for (int from = 3000; from < 6000; from += 100) {
        spooler.offer(SinkChecks.typedRows(typed, from, from + 100, "v"));
        Thread.sleep(2);
      }
      assertTrue(spooler.flush(Duration.ofSeconds(30)), "flush timed out: " + spooler.stats());
      SpoolerStats stats = spooler.stats();
      assertEquals(6000, stats.rowsLoaded());
      assertTrue(stats.rowsSpilled() >= 2500, stats.toString());
    }
    assertEquals(List.of(), spillFiles());
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      assertEquals(6000, SinkChecks.count(sink, typed));
      assertEquals(6000, SinkChecks.countDistinctKeys(sink, typed));
      assertLoadedInOfferOrder(sink, typed, 6000);
    }
  }

  /**
   * A batch with rows of two tables loads them in two transactions. When the second fails after the first committed,
   * the retry loads the first table's rows again: they must not be stored twice (DuckDB's tables have no key index,
   * so only a first attempt may skip looking for present keys).
   */
  @Test
  void aRetriedBatchDoesNotRepeatTheRowsOfATableThatCommittedBeforeTheFailure() throws Exception {
    ProvenanceTable committed = SinkChecks.typedTable("committed");
    ProvenanceTable broken = SinkChecks.typedTable("broken");
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties());
         Statement s = sink.connection().createStatement()) {
      // text in a BIGINT column: every load of the second table fails until the test repairs it
      s.execute("CREATE TABLE " + broken.name() + " (" + SinkDialect.DUCKDB.columnDefinitions(broken)
          .replace("\"c_text\" VARCHAR", "\"c_text\" BIGINT") + ")");
      sink.connection().commit();
    }
    try (ProvenanceSpooler spooler = ProvenanceSpooler.start(config(), sinks())) {
      spooler.register(committed);
      spooler.register(broken);
      List<ProvenanceRow> rows = new ArrayList<>(SinkChecks.typedRows(committed, 0, 100, "v"));
      rows.addAll(SinkChecks.typedRows(broken, 0, 100, "v"));
      spooler.offer(rows);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (spooler.stats().failedLoadAttempts() < 2 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertTrue(spooler.stats().failedLoadAttempts() >= 2, spooler.stats().toString());
      try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
        assertEquals(100, SinkChecks.count(sink, committed), "the first table's load committed each attempt");
        try (Statement s = sink.connection().createStatement()) {
          s.execute("DROP TABLE " + broken.name()); // the spooler creates it again, right, on its next attempt
        }
        sink.connection().commit();
      }
      assertTrue(spooler.flush(Duration.ofSeconds(30)), "flush timed out: " + spooler.stats());
    }
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      SinkChecks.assertStored(sink, committed, SinkChecks.typedRows(committed, 0, 100, "v"));
      SinkChecks.assertStored(sink, broken, SinkChecks.typedRows(broken, 0, 100, "v"));
    }
  }

  /**
   * A spooler that died after loading a spill file but before deleting it leaves rows the sink already has: the
   * next spooler loads the file without storing them twice.
   */
  @Test
  void aSpillFileFoundAtStartDoesNotRepeatRowsTheSinkAlreadyHas() throws Exception {
    ProvenanceTable typed = SinkChecks.typedTable("recovered");
    List<ProvenanceRow> rows = SinkChecks.typedRows(typed, 0, 50, "v");
    Files.createDirectories(spillDirectory());
    try (SpillFile.Writer writer = SpillFile.Writer.create(SpillFile.path(spillDirectory(), 1))) {
      writer.append(rows, java.util.Map.of(typed.name(), typed));
    }
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      sink.ensureTable(typed);
      sink.append(typed, rows.subList(0, 30));
    }
    try (ProvenanceSpooler spooler = ProvenanceSpooler.start(config(), sinks())) {
      assertTrue(spooler.flush(Duration.ofSeconds(30)), "flush timed out: " + spooler.stats());
    }
    assertEquals(List.of(), spillFiles());
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      SinkChecks.assertStored(sink, typed, rows);
    }
  }

  @Test
  void closeIsBoundedWhenTheSinkHangsAndKeepsTheRowsOnDisk() throws Exception {
    ProvenanceTable typed = SinkChecks.typedTable("stuck");
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Supplier<ProvenanceSink> hanging = () -> {
      entered.countDown();
      try {
        release.await(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      throw new DatabaseException("released by the test");
    };
    ProvenanceSpooler spooler = ProvenanceSpooler.start(config().withCloseTimeout(Duration.ofMillis(300)), hanging);
    spooler.register(typed);
    spooler.offer(SinkChecks.typedRows(typed, 0, 10, "v"));
    assertTrue(entered.await(10, TimeUnit.SECONDS));
    long start = System.nanoTime();
    spooler.close();
    long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    release.countDown();
    assertTrue(elapsedMillis < 4000, "close took " + elapsedMillis + " ms");
    assertEquals(10, spooler.stats().rowsOnDisk());
    assertEquals(10, SpillFile.read(spillFiles().get(0)).rows().size());
  }

  /**
   * Issue 43: the age of the oldest unloaded row, the bytes in spill files and whether the sink answered, with a real
   * DuckDB sink cut off: its URL names a file under a path that is a regular file, so every open fails as a
   * connection would, until the test puts a directory there and the same URL opens. While cut the age grows and
   * spilled rows take bytes; once the sink is back and the rows are loaded the age and the bytes are 0.
   */
  @Test
  void theOldestUnloadedRowsAgeAndSpillBytesGrowWhileTheSinkIsCutAndReturnToZero() throws Exception {
    ProvenanceTable typed = SinkChecks.typedTable("lagging");
    Path blocker = dir.resolve("blocker");
    Files.writeString(blocker, "a file where the sink's directory should be");
    String cutUrl = "jdbc:duckdb:" + blocker.resolve("provenance.db");
    SpoolerConfig config = config().withMaxMemoryRows(200).withMaxBatchRows(100).withOfferWait(Duration.ZERO);
    try (ProvenanceSpooler spooler = ProvenanceSpooler.start(config, ProvenanceSink.opener(cutUrl, new Properties()))) {
      SpoolerStats idle = spooler.stats();
      assertEquals(Duration.ZERO, idle.oldestWaiting(), idle.toString());
      assertEquals(0, idle.bytesOnDisk());
      assertEquals(null, idle.sinkReachable(), "no load tried yet: " + idle);
      spooler.register(typed);
      spooler.offer(SinkChecks.typedRows(typed, 0, 100, "v"));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (spooler.stats().failedLoadAttempts() < 2 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      spooler.offer(SinkChecks.typedRows(typed, 100, 500, "v")); // memory holds 200: the rest spill
      SpoolerStats first = spooler.stats();
      assertTrue(first.failedLoadAttempts() >= 2, first.toString());
      assertEquals(Boolean.FALSE, first.sinkReachable(), first.toString());
      assertEquals(300, first.rowsOnDisk(), first.toString());
      long onDisk;
      try (Stream<Path> files = Files.list(spillDirectory())) {
        onDisk = files.filter(f -> SpillFile.idOf(f).isPresent()).mapToLong(f -> f.toFile().length()).sum();
      }
      assertTrue(first.bytesOnDisk() > 300 && first.bytesOnDisk() == onDisk, "the spill files' bytes, " + onDisk
          + ": " + first);
      Thread.sleep(300);
      SpoolerStats later = spooler.stats();
      assertTrue(later.oldestWaiting().compareTo(first.oldestWaiting().plusMillis(250)) >= 0,
          "the oldest row's age grows while nothing loads: " + first.oldestWaiting() + " then " + later.oldestWaiting());

      Files.delete(blocker);
      Files.createDirectory(blocker); // the sink is back, at the same URL
      assertTrue(spooler.flush(Duration.ofSeconds(20)), "flush timed out: " + spooler.stats());
      SpoolerStats loaded = spooler.stats();
      assertEquals(500, loaded.rowsLoaded(), loaded.toString());
      assertEquals(Duration.ZERO, loaded.oldestWaiting(), loaded.toString());
      assertEquals(0, loaded.bytesOnDisk(), loaded.toString());
      assertEquals(Boolean.TRUE, loaded.sinkReachable(), loaded.toString());
    }
  }

  /** DuckDB assigns rowids in insertion order: within the table, event_seq must rise with them. */
  private static void assertLoadedInOfferOrder(ProvenanceSink sink, ProvenanceTable table, int rows)
      throws SQLException {
    try (Statement statement = sink.connection().createStatement();
         ResultSet rs = statement.executeQuery("SELECT event_seq FROM " + table.name() + " ORDER BY rowid")) {
      long expected = 0;
      while (rs.next()) {
        assertEquals(expected++, rs.getLong(1), "rows loaded out of offer order");
      }
      assertEquals(rows, expected);
    }
    sink.connection().commit();
  }

  private List<Path> spillFiles() throws IOException {
    if (!Files.isDirectory(spillDirectory())) {
      return List.of();
    }
    try (Stream<Path> files = Files.list(spillDirectory())) {
      List<Path> found = files.filter(f -> SpillFile.idOf(f).isPresent()).sorted().toList();
      found.forEach(f -> assertNotNull(f.getFileName()));
      return found;
    }
  }
}
