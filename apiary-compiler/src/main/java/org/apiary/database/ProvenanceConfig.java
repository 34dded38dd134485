package org.apiary.database;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Where captured provenance goes and how it gets there (paper section 6). Writes are captured by VoltDB's change
 * data capture (export) on every application table; reads and function executions are buffered in each database
 * server's memory; a spooler in each server loads both into the analytical database at {@code sinkUrl}.
 *
 * @param sinkUrl the analytical database's JDBC URL: {@code jdbc:duckdb:<file>} (the zero-setup default),
 *     {@code jdbc:postgresql://...} or {@code jdbc:vertica://...}
 * @param sinkUser user for the sink, or {@code null}
 * @param sinkPassword password for the sink, or {@code null}; never shown by {@link #toString()} (nor one in the URL)
 * @param flushInterval how often the in-memory buffer is loaded into the sink (default 250 ms; earlier
 *     when a full batch waits). Shorter costs CPU at any load: each load has a fixed cost in the sink
 * @param exportFlushInterval how often VoltDB hands captured writes to the spooler (default 100 ms)
 * @param spillDirectory where rows wait on disk while the sink is unreachable and memory is full; {@code null}
 *     for a directory under the database's own
 * @param writeCaptureTables the application tables whose writes are captured, upper-case; {@code null} for all.
 *     Each captured table is a VoltDB export stream, and VoltDB Community Edition allows two per database.
 * @param durable whether captured reads and executions are written and forced to disk (the spill directory)
 *     before the function's transaction commits, so a server crash loses none of them (at the cost of a disk flush
 *     per function execution); by default they wait in memory for at most a flush interval
 * @param captureReads whether rows read are captured (the default); without it only writes and function executions
 *     are, which costs less
 * @param diskReserveBytes the space each database server keeps usable on the volumes it writes (default
 *     {@link org.apiary.provenance.DiskSpaceGuard#DEFAULT_RESERVE_BYTES}, 64 MiB; zero turns the guard off). VoltDB
 *     exits when it cannot write its export overflow, which holds every captured write until it is loaded, so below
 *     the reserve on the volume of the server's VoltDB root, export overflow, snapshots or journal, functions that
 *     write are refused before they run, saying why; below it on the spill directory's volume no spill file is
 *     written (durable capture then refuses every function execution; otherwise rows beyond the spooler's memory are
 *     dropped and counted); below it on the volume of a DuckDB sink's file, loading pauses. Each resumes once the
 *     volume has the reserve and a quarter usable again.
 * @param loaderAddress {@code host:port} of a provenance loader run apart ({@code apiary loader --sink URL}), which
 *     the servers send their capture to instead of loading it into {@code sinkUrl} themselves; {@code null} (the
 *     default) loads in each server's process. With a loader, {@code sinkUrl} is where the loader loads (what
 *     provenance queries read), and the servers need neither it nor its credentials. Each server keeps its spooler
 *     and spill files as without one; a batch leaves them only once the loader answers that it committed it, so
 *     durable capture keeps its guarantee while the loader or the link is down.
 * @param loaderSecret the secret the loader was started with ({@code apiary loader --secret-file}), which the servers
 *     present to it, or {@code null} for a loader without one; never shown by {@link #toString()}
 */
public record ProvenanceConfig(String sinkUrl, String sinkUser, String sinkPassword, Duration flushInterval,
                               Duration exportFlushInterval, Path spillDirectory,
                               java.util.Set<String> writeCaptureTables, boolean durable,
                               boolean captureReads, long diskReserveBytes, String loaderAddress,
                               String loaderSecret) {
  /** The export target name Apiary's deployment declares. */
  public static final String EXPORT_TARGET = "apiary_provenance";

  public ProvenanceConfig {
    Objects.requireNonNull(sinkUrl, "sinkUrl");
    if (!sinkUrl.startsWith("jdbc:")) {
      throw new IllegalArgumentException("the provenance sink must be a JDBC URL (jdbc:duckdb:..., jdbc:postgresql:..., "
          + "jdbc:vertica:...), not '" + sinkUrl + "'");
    }
    if (writeCaptureTables != null) {
      writeCaptureTables = writeCaptureTables.stream().map(t -> t.toUpperCase(java.util.Locale.ROOT))
          .collect(java.util.stream.Collectors.toUnmodifiableSet());
    }
    if (flushInterval.isNegative() || flushInterval.isZero() || exportFlushInterval.isNegative()
        || exportFlushInterval.isZero()) {
      throw new IllegalArgumentException("flush intervals must be positive");
    }
    if (diskReserveBytes < 0) {
      throw new IllegalArgumentException("diskReserveBytes must not be negative, not " + diskReserveBytes);
    }
    if (loaderAddress != null) {
      org.apiary.provenance.loader.LoaderProtocol.parseAddress(loaderAddress);
      loaderAddress = loaderAddress.strip();
    }
  }

  /** An embedded DuckDB file as the sink. */
  public static ProvenanceConfig duckdb(Path file) {
    return sink("jdbc:duckdb:" + file.toAbsolutePath());
  }

  /** Any JDBC sink, with default intervals. */
  public static ProvenanceConfig sink(String jdbcUrl) {
    return new ProvenanceConfig(jdbcUrl, null, null, Duration.ofMillis(250), Duration.ofMillis(100), null, null, false,
        true, org.apiary.provenance.DiskSpaceGuard.DEFAULT_RESERVE_BYTES, null, null);
  }

  /**
   * Capture sent to the provenance loader at {@code address} ({@code host:port}), which loads it into
   * {@code sinkUrl}, the URL the loader was started with ({@code apiary loader --sink URL}).
   */
  public static ProvenanceConfig loader(String address, String sinkUrl) {
    return sink(sinkUrl).withLoader(address);
  }

  /** The secret the servers present to the loader ({@code apiary loader --secret-file}); {@code null}: none. */
  public ProvenanceConfig withLoaderSecret(String secret) {
    return new ProvenanceConfig(sinkUrl, sinkUser, sinkPassword, flushInterval, exportFlushInterval, spillDirectory,
        writeCaptureTables, durable, captureReads, diskReserveBytes, loaderAddress, secret);
  }

  /** Capture sent to the provenance loader at {@code host:port}; {@code null}: loaded in each server's process. */
  public ProvenanceConfig withLoader(String address) {
    return new ProvenanceConfig(sinkUrl, sinkUser, sinkPassword, flushInterval, exportFlushInterval, spillDirectory,
        writeCaptureTables, durable, captureReads, diskReserveBytes, address, loaderSecret);
  }

  public ProvenanceConfig withCredentials(String user, String password) {
    return new ProvenanceConfig(sinkUrl, user, password, flushInterval, exportFlushInterval, spillDirectory,
        writeCaptureTables, durable, captureReads, diskReserveBytes, loaderAddress, loaderSecret);
  }

  public ProvenanceConfig withFlushInterval(Duration value) {
    return new ProvenanceConfig(sinkUrl, sinkUser, sinkPassword, value, exportFlushInterval, spillDirectory,
        writeCaptureTables, durable, captureReads, diskReserveBytes, loaderAddress, loaderSecret);
  }

  public ProvenanceConfig withSpillDirectory(Path value) {
    return new ProvenanceConfig(sinkUrl, sinkUser, sinkPassword, flushInterval, exportFlushInterval, value,
        writeCaptureTables, durable, captureReads, diskReserveBytes, loaderAddress, loaderSecret);
  }

  /** Captures the writes of these application tables only (reads and executions are captured everywhere). */
  public ProvenanceConfig withWriteCaptureOnly(String... tables) {
    return new ProvenanceConfig(sinkUrl, sinkUser, sinkPassword, flushInterval, exportFlushInterval, spillDirectory,
        java.util.Set.of(tables), durable, captureReads, diskReserveBytes, loaderAddress, loaderSecret);
  }

  /** Captured reads and executions forced to disk before each function's transaction commits. */
  public ProvenanceConfig withDurableCapture(boolean value) {
    return new ProvenanceConfig(sinkUrl, sinkUser, sinkPassword, flushInterval, exportFlushInterval, spillDirectory,
        writeCaptureTables, value, captureReads, diskReserveBytes, loaderAddress, loaderSecret);
  }

  /** Whether rows read are captured ({@code false}: writes and function executions only). */
  public ProvenanceConfig withReadCapture(boolean value) {
    return new ProvenanceConfig(sinkUrl, sinkUser, sinkPassword, flushInterval, exportFlushInterval, spillDirectory,
        writeCaptureTables, durable, value, diskReserveBytes, loaderAddress, loaderSecret);
  }

  /** The space each database server keeps usable on the volumes it writes; zero: no guard. See the record's doc. */
  public ProvenanceConfig withDiskReserveBytes(long value) {
    return new ProvenanceConfig(sinkUrl, sinkUser, sinkPassword, flushInterval, exportFlushInterval, spillDirectory,
        writeCaptureTables, durable, captureReads, value, loaderAddress, loaderSecret);
  }

  /** Whether writes of {@code table} are captured. */
  public boolean capturesWritesOf(String table) {
    return writeCaptureTables == null || writeCaptureTables.contains(table.toUpperCase(java.util.Locale.ROOT));
  }

  /** The configuration with the sink's password, given apart or in the URL, hidden. */
  @Override
  public String toString() {
    return "ProvenanceConfig[sinkUrl=" + org.apiary.provenance.ProvenanceSink.redact(sinkUrl) + ", sinkUser=" + sinkUser
        + ", sinkPassword=" + (sinkPassword == null ? "null" : "(hidden)") + ", flushInterval=" + flushInterval
        + ", exportFlushInterval=" + exportFlushInterval + ", spillDirectory=" + spillDirectory
        + ", writeCaptureTables=" + writeCaptureTables + ", durable=" + durable + ", captureReads=" + captureReads
        + ", diskReserveBytes=" + diskReserveBytes + ", loaderAddress=" + loaderAddress + ", loaderSecret="
        + (loaderSecret == null ? "null" : "(hidden)") + "]";
  }
}
