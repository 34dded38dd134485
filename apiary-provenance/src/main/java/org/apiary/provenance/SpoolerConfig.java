package org.apiary.provenance;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * How a {@link ProvenanceSpooler} batches, buffers and retries. Immutable; {@link #defaults()} and the
 * {@code with...} methods make new instances.
 *
 * @param flushInterval how often the spooler's thread loads what is waiting; default 250 ms. It also wakes early
 *     once {@code maxBatchRows} rows wait in memory. Each load has a fixed cost in the sink (about 1 ms of CPU per
 *     table for DuckDB's appender, however few its rows), so a short interval costs CPU at every load level.
 * @param maxBatchRows the most rows of one table loaded in one transaction, and the most rows in one spill file;
 *     default 20,000. Fewer, larger loads cost the sink less per row (DuckDB: its per-load costs and its log; held
 *     far above capacity, the counter's spooler spent about 12% less CPU per row than with 5,000)
 * @param maxMemoryRows how many rows may wait in memory; default 200,000. An offer that finds memory full waits
 *     for room while the spooler's thread keeps loading (up to {@code offerWait}); rows that still find no room go
 *     to spill files. Zero spills every row.
 * @param spillDirectory where spill files go, created if missing; one spooler at a time may use it (a lock file
 *     enforces this). A spooler started on a directory holding spill files loads them first. Default
 *     {@code <java.io.tmpdir>/apiary-provenance-spool}, the same path for every process of the machine's user, so a
 *     restarted process picks up what the previous one left; give each concurrently running spooler its own.
 * @param initialBackoff the wait after a failed load, doubled after each further consecutive failure; default 50 ms
 * @param maxBackoff the longest wait between attempts; default 5 s. At least {@code initialBackoff}.
 * @param closeTimeout how long {@link ProvenanceSpooler#close()} lets the final load run before it spills what is
 *     left; default 10 s
 * @param recovery what the spill files found at start are a copy of, which decides which of their writing executions
 *     are loaded; default {@link Recovery#ONLY_COPY}
 * @param offerWait the longest an offer waits for room in memory while the spooler's thread is loading (each load
 *     frees up to {@code maxBatchRows}); default 1 s. Offers do not wait while loads fail, while rows wait in spill
 *     files, or after a wait has run out, until a load completes again: a sink that is only slow paces the offering
 *     threads, one that is down or hung costs one offer this wait and the rest spill. Zero never waits.
 * @param diskReserveBytes the space kept usable on the volume of the spill directory, and on that of the sink's file
 *     for a sink that is one (DuckDB); default {@link DiskSpaceGuard#DEFAULT_RESERVE_BYTES} (64 MiB), zero for none.
 *     Below it (see {@link DiskSpaceGuard}) no spill file is written (durable offers fail; rows memory cannot hold
 *     are dropped and counted) and loading into such a sink pauses, each saying why in
 *     {@link SpoolerStats#lastError()}, until the volume has room again: a full disk fails whatever else writes
 *     there, and the embedded VoltDB exits when it cannot write its export overflow.
 */
public record SpoolerConfig(Duration flushInterval, int maxBatchRows, int maxMemoryRows, Path spillDirectory,
                            Duration initialBackoff, Duration maxBackoff, Duration closeTimeout, Recovery recovery,
                            Duration offerWait, long diskReserveBytes) {
  /**
   * What the spill files a spooler finds at start are a copy of. Rows are offered while a function's transaction runs,
   * before it commits; a server that dies in between leaves the rows of a transaction that may never have committed.
   */
  public enum Recovery {
    /**
     * The files are the only copy of what they hold (a single server, or every server of a cluster, restarting):
     * everything in them is loaded. The last single-partition writer of each partition may have been in flight when
     * the server died; nothing can tell whether it committed (without a command log the restarted database has lost
     * it either way, together with every transaction since its last snapshot), so it is loaded like the rest.
     */
    ONLY_COPY,
    /**
     * The files belong to a server whose k-safe cluster ran on without it (a rejoining server, or a dead server's
     * directory loaded by hand). Every single-partition writer that committed ran on a live replica too, which
     * captured and loads the same rows itself, while one the server ran but no replica received never committed (a
     * leader runs transactions before its replicas acknowledge them). So every single-partition writer's rows are set
     * aside, in {@code unconfirmed-*.spill} files of the spill directory that no spooler loads (an operator can read
     * them); read-only and multi-partition executions, which ran only there, are loaded.
     */
    REPLICATED
  }

  /** Validates every setting. */
  public SpoolerConfig {
    Objects.requireNonNull(flushInterval, "flushInterval");
    Objects.requireNonNull(spillDirectory, "spillDirectory");
    Objects.requireNonNull(initialBackoff, "initialBackoff");
    Objects.requireNonNull(maxBackoff, "maxBackoff");
    Objects.requireNonNull(closeTimeout, "closeTimeout");
    Objects.requireNonNull(recovery, "recovery");
    Objects.requireNonNull(offerWait, "offerWait");
    if (offerWait.isNegative()) {
      throw new IllegalArgumentException("offerWait must not be negative, not " + offerWait);
    }
    requirePositive(flushInterval, "flushInterval");
    requirePositive(initialBackoff, "initialBackoff");
    if (maxBatchRows < 1) {
      throw new IllegalArgumentException("maxBatchRows must be at least 1, not " + maxBatchRows);
    }
    if (maxMemoryRows < 0) {
      throw new IllegalArgumentException("maxMemoryRows must not be negative, not " + maxMemoryRows);
    }
    if (maxBackoff.compareTo(initialBackoff) < 0) {
      throw new IllegalArgumentException("maxBackoff (" + maxBackoff + ") is shorter than initialBackoff ("
          + initialBackoff + ")");
    }
    if (closeTimeout.isNegative()) {
      throw new IllegalArgumentException("closeTimeout must not be negative, not " + closeTimeout);
    }
    if (diskReserveBytes < 0) {
      throw new IllegalArgumentException("diskReserveBytes must not be negative, not " + diskReserveBytes);
    }
  }

  /** The defaults listed on each setting. */
  public static SpoolerConfig defaults() {
    return new SpoolerConfig(Duration.ofMillis(250), 20_000, 200_000,
        Path.of(System.getProperty("java.io.tmpdir"), "apiary-provenance-spool"),
        Duration.ofMillis(50), Duration.ofSeconds(5), Duration.ofSeconds(10), Recovery.ONLY_COPY,
        Duration.ofSeconds(1), DiskSpaceGuard.DEFAULT_RESERVE_BYTES);
  }

  /** A copy with another {@link #flushInterval()}. */
  public SpoolerConfig withFlushInterval(Duration value) {
    return new SpoolerConfig(value, maxBatchRows, maxMemoryRows, spillDirectory, initialBackoff, maxBackoff,
        closeTimeout, recovery, offerWait, diskReserveBytes);
  }

  /** A copy with another {@link #maxBatchRows()}. */
  public SpoolerConfig withMaxBatchRows(int value) {
    return new SpoolerConfig(flushInterval, value, maxMemoryRows, spillDirectory, initialBackoff, maxBackoff,
        closeTimeout, recovery, offerWait, diskReserveBytes);
  }

  /** A copy with another {@link #maxMemoryRows()}. */
  public SpoolerConfig withMaxMemoryRows(int value) {
    return new SpoolerConfig(flushInterval, maxBatchRows, value, spillDirectory, initialBackoff, maxBackoff,
        closeTimeout, recovery, offerWait, diskReserveBytes);
  }

  /** A copy with another {@link #spillDirectory()}. */
  public SpoolerConfig withSpillDirectory(Path value) {
    return new SpoolerConfig(flushInterval, maxBatchRows, maxMemoryRows, value, initialBackoff, maxBackoff,
        closeTimeout, recovery, offerWait, diskReserveBytes);
  }

  /** A copy with another {@link #initialBackoff()}. */
  public SpoolerConfig withInitialBackoff(Duration value) {
    return new SpoolerConfig(flushInterval, maxBatchRows, maxMemoryRows, spillDirectory, value, maxBackoff,
        closeTimeout, recovery, offerWait, diskReserveBytes);
  }

  /** A copy with another {@link #maxBackoff()}. */
  public SpoolerConfig withMaxBackoff(Duration value) {
    return new SpoolerConfig(flushInterval, maxBatchRows, maxMemoryRows, spillDirectory, initialBackoff, value,
        closeTimeout, recovery, offerWait, diskReserveBytes);
  }

  /** A copy with another {@link #closeTimeout()}. */
  public SpoolerConfig withCloseTimeout(Duration value) {
    return new SpoolerConfig(flushInterval, maxBatchRows, maxMemoryRows, spillDirectory, initialBackoff, maxBackoff,
        value, recovery, offerWait, diskReserveBytes);
  }

  /** A copy with another {@link #recovery()}. */
  public SpoolerConfig withRecovery(Recovery value) {
    return new SpoolerConfig(flushInterval, maxBatchRows, maxMemoryRows, spillDirectory, initialBackoff, maxBackoff,
        closeTimeout, value, offerWait, diskReserveBytes);
  }

  /** A copy with another {@link #offerWait()}. */
  public SpoolerConfig withOfferWait(Duration value) {
    return new SpoolerConfig(flushInterval, maxBatchRows, maxMemoryRows, spillDirectory, initialBackoff, maxBackoff,
        closeTimeout, recovery, value, diskReserveBytes);
  }

  /** A copy with another {@link #diskReserveBytes()}. */
  public SpoolerConfig withDiskReserveBytes(long value) {
    return new SpoolerConfig(flushInterval, maxBatchRows, maxMemoryRows, spillDirectory, initialBackoff, maxBackoff,
        closeTimeout, recovery, offerWait, value);
  }

  private static void requirePositive(Duration value, String name) {
    if (value.isZero() || value.isNegative()) {
      throw new IllegalArgumentException(name + " must be positive, not " + value);
    }
  }
}
