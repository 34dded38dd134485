package org.apiary.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.apiary.DatabaseException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 45, finding 8: the spooler on a disk that is full. Rows that can be neither loaded nor spilled must not pile
 * up in memory without bound.
 */
class SpoolerDiskFullTest {
  @TempDir
  Path dir;

  private final AtomicBoolean sinkDown = new AtomicBoolean();

  private String url() {
    return "jdbc:duckdb:" + dir.resolve("provenance.db");
  }

  private SpoolerConfig config() {
    return SpoolerConfig.defaults().withSpillDirectory(dir.resolve("spill")).withInitialBackoff(Duration.ofMillis(10))
        .withMaxBackoff(Duration.ofMillis(100)).withCloseTimeout(Duration.ofSeconds(5));
  }

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
   * The sink is down and every spill write fails (a full disk): the rows memory cannot hold are dropped and counted,
   * never kept beyond {@code maxMemoryRows}, and the offers do not wait for a loader that makes no progress.
   */
  @Test
  void rowsThatCanBeNeitherLoadedNorSpilledAreDroppedAndCountedNotHeldInMemoryWithoutBound() throws Exception {
    ProvenanceTable table = SinkChecks.typedTable("bounded");
    FailingChannels channels = new FailingChannels();
    channels.failAppends = true;
    sinkDown.set(true);
    SpoolerConfig config = config().withMaxMemoryRows(100).withMaxBatchRows(50);
    try (ProvenanceSpooler spooler = ProvenanceSpooler.start(config, sinks(), channels)) {
      spooler.register(table);
      long started = System.nanoTime();
      for (int from = 0; from < 10_000; from += 10) {
        spooler.offer(SinkChecks.typedRows(table, from, from + 10, "v"));
      }
      long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
      SpoolerStats full = spooler.stats();
      assertTrue(full.rowsInMemory() <= 100, "rows held in memory beyond maxMemoryRows (100) while spill files "
          + "cannot be written: " + full);
      assertTrue(millis < 5_000, "1,000 offers took " + millis + " ms");
    }
  }
}
