package org.apiary.runtime.provenance;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import org.apiary.provenance.BatchSink;
import org.apiary.provenance.DiskSpaceGuard;
import org.apiary.provenance.ProvenanceRow;
import org.apiary.provenance.ProvenanceSchema;
import org.apiary.provenance.ProvenanceSink;
import org.apiary.provenance.ProvenanceSpooler;
import org.apiary.provenance.ProvenanceTable;
import org.apiary.provenance.SpoolerConfig;
import org.apiary.provenance.loader.LoaderClient;

/**
 * Provenance capture inside one database server process: the spooler that buffers function executions and reads
 * in this server's memory and loads them into the analytical database, and the loader that writes captured
 * writes (handed over by VoltDB's export) straight into it.
 *
 * <p>One per server process, held statically: VoltDB creates procedures and export connectors itself, so this is
 * where they find it. It is started by {@link ProvenanceExporter} from the deployment's export properties, which
 * are the only configuration a server has.
 *
 * <p>A full disk. Every captured write passes through VoltDB's export overflow on disk, and VoltDB exits when it
 * cannot write there ("Unable to write to export overflow"), ending the service; DuckDB's log, the spill files and
 * the journal usually share the volume. So the server keeps a reserve ({@code disk.reserve.bytes}, see
 * {@link org.apiary.database.ProvenanceConfig#diskReserveBytes()}) usable on the volumes it writes, measured by one
 * {@link DiskSpaceGuard}, and below it stops writing there before anything fails for want of space:
 * <ul>
 *   <li>the volume of the VoltDB root, its export overflow, its snapshots or the journal: functions that write are
 *       refused before they run ({@link #refusal}), with the reason; reads go on;</li>
 *   <li>the spill directory's volume: no spill file is written; with durable capture every function execution is
 *       refused (its provenance could not be kept), otherwise rows beyond the spooler's memory are dropped and
 *       counted ({@link org.apiary.provenance.SpoolerStats#rowsDropped()});</li>
 *   <li>the volume of a DuckDB sink's file: loading pauses, both the spooler's and that of captured writes (VoltDB
 *       keeps those in its export overflow and offers them again).</li>
 * </ul>
 * Each resumes by itself once the volume has the reserve and a quarter usable again.
 */
public final class ServerProvenance implements AutoCloseable {
  private static final Logger LOG = System.getLogger(ServerProvenance.class.getName());
  private static volatile ServerProvenance current;
  private static boolean stopsWithTheProcess;

  /** What the deployment's export properties say. */
  record Settings(String sinkUrl, String user, String password, Duration flushInterval, Path spillDirectory,
                  boolean durable, boolean captureReads, long diskReserveBytes, String loader,
                  String loaderSecret) {
    static Settings from(Properties p) {
      String url = p.getProperty("sink.url");
      if (url == null || url.isBlank()) {
        throw new IllegalArgumentException("Apiary's provenance export target needs the property sink.url");
      }
      return new Settings(url, p.getProperty("sink.user"), p.getProperty("sink.password"),
          Duration.ofMillis(Long.parseLong(p.getProperty("flush.ms", "250"))),
          Path.of(p.getProperty("spill.dir", System.getProperty("java.io.tmpdir") + "/apiary-provenance-spill")),
          Boolean.parseBoolean(p.getProperty("durable", "false")),
          Boolean.parseBoolean(p.getProperty("reads", "true")),
          // A deployment written before the guard existed has no reserve: it gets the default.
          Long.parseLong(p.getProperty("disk.reserve.bytes", String.valueOf(DiskSpaceGuard.DEFAULT_RESERVE_BYTES))),
          blankToNull(p.getProperty("loader")), blankToNull(p.getProperty("loader.secret")));
    }

    private static String blankToNull(String value) {
      return value == null || value.isBlank() ? null : value.strip();
    }

    /** Where this server's capture goes: the loader's address, or the sink's URL (without a password). */
    String destination() {
      return loader != null ? "the provenance loader at " + loader + " (loading into "
          + ProvenanceSink.redact(sinkUrl) + ")" : ProvenanceSink.redact(sinkUrl);
    }

    /** The password is never shown. */
    @Override
    public String toString() {
      return "Settings[" + destination() + ", user=" + user + ", flushInterval=" + flushInterval + ", spillDirectory="
          + spillDirectory + ", durable=" + durable + "]";
    }

    Properties sinkProperties() {
      return ProvenanceSink.credentials(user, password);
    }
  }

  private final Settings settings;
  private final DiskSpaceGuard disk;
  /** Where VoltDB writes on this server, and what each holds (for the reason of a refusal). */
  private final Map<Path, String> serverPaths;
  private final Path spillDirectory;
  /** This server's VoltDB root, naming it in its backlog report, or {@code null} if VoltDB cannot tell. */
  private final String server;
  private final ProvenanceSpooler spooler;
  private final Map<String, ProvenanceTable> eventsTables = new ConcurrentHashMap<>();
  private final Object loaderLock = new Object();
  private BatchSink loader;
  private final java.util.function.Supplier<? extends BatchSink> directSinks;
  private final java.util.concurrent.ScheduledExecutorService reporter;
  /** The last failure to write the backlog report, said once until it changes (a full disk would repeat it). */
  private String reportFailure;

  private ServerProvenance(Settings settings) {
    this.settings = settings;
    this.disk = DiskSpaceGuard.reserving(settings.diskReserveBytes());
    this.serverPaths = serverPaths();
    Path root = voltdbRoot();
    this.server = root == null ? null : root.toAbsolutePath().normalize().toString();
    this.spillDirectory = serverSpillDirectory(settings.spillDirectory(), root);
    this.spooler = ProvenanceSpooler.start(SpoolerConfig.defaults().withFlushInterval(settings.flushInterval())
        .withSpillDirectory(spillDirectory)
        .withRecovery(recovery()).withDiskReserveBytes(settings.diskReserveBytes()),
        sinks(settings, spillDirectory, "spooler"), disk);
    spooler.register(ProvenanceSchema.functionInvocations());
    spooler.register(ProvenanceSchema.deniedCalls());
    spooler.register(ProvenanceSchema.invocations());
    spooler.register(ProvenanceSchema.multiPartitionPositions());
    this.directSinks = sinks(settings, spillDirectory, "exports");
    this.reporter = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "apiary-provenance-backlog-report");
      t.setDaemon(true);
      return t;
    });
    reporter.scheduleWithFixedDelay(() -> report(false), 0, BacklogReport.INTERVAL.toMillis(),
        java.util.concurrent.TimeUnit.MILLISECONDS);
  }

  /**
   * Opens this server's connections for loading: to the sink itself, or to the loader run apart. A loader tells a
   * server's connections apart by {@code role} and by where the server keeps its spill files, which are this
   * server's alone and the same after a restart.
   */
  private static java.util.function.Supplier<? extends BatchSink> sinks(Settings settings, Path spillDirectory,
                                                                        String role) {
    if (settings.loader() == null) {
      return ProvenanceSink.opener(settings.sinkUrl(), settings.sinkProperties());
    }
    return LoaderClient.opener(settings.loader(), clientIdentity(spillDirectory, role), settings.loaderSecret(),
        LoaderClient.DEFAULT_TIMEOUT);
  }

  private static String clientIdentity(Path spillDirectory, String role) {
    String host;
    try {
      host = java.net.InetAddress.getLocalHost().getHostName();
    } catch (java.net.UnknownHostException e) {
      host = "unknown-host";
    }
    return host + ":" + spillDirectory.toAbsolutePath().normalize() + "#" + role;
  }

  /** Writes this server's {@link BacklogReport} to its spill directory, for commands in other processes. */
  private synchronized void report(boolean stopped) {
    try {
      org.apiary.provenance.SpoolerStats s = spooler.stats();
      BacklogReport.of(server == null ? spillDirectory.toString() : server, ProcessHandle.current().pid(), s,
          refusal(true).orElse(null), stopped, java.time.Instant.now()).writeTo(spillDirectory);
      if (reportFailure != null) {
        LOG.log(Level.INFO, "the provenance backlog report in " + spillDirectory + " is written again");
        reportFailure = null;
      }
    } catch (RuntimeException e) {
      String failure = String.valueOf(e.getMessage());
      if (!failure.equals(reportFailure)) {
        LOG.log(Level.WARNING, failure + " (`apiary status` shows the last report written; said again only if it "
            + "changes)");
        reportFailure = failure;
      }
    }
  }

  /**
   * The spill directory of one server: a subdirectory of the configured one named after the server's VoltDB root, so
   * servers that share a deployment (and a machine) never share spill files, and a server restarted on the same root
   * finds its own.
   */
  public static Path serverSpillDirectory(Path configured, Path voltdbRoot) {
    if (voltdbRoot == null) {
      return configured;
    }
    String path = voltdbRoot.toAbsolutePath().normalize().toString();
    String name = path.replaceAll("[^A-Za-z0-9._-]+", "_").replaceAll("^_+", "");
    if (name.length() > 96) { // keep the most specific end, and the whole path's hash against collisions
      name = name.substring(name.length() - 87) + "-" + String.format("%08x", path.hashCode());
    }
    return configured.resolve("server-" + name);
  }

  /** The directories VoltDB itself writes on this server (those it can name), with what each holds. */
  private static Map<Path, String> serverPaths() {
    Map<Path, String> paths = new java.util.LinkedHashMap<>();
    try {
      org.voltdb.VoltDBInterface voltdb = org.voltdb.VoltDB.instance();
      addPath(paths, voltdb.getExportOverflowPath(), "VoltDB's export overflow, every captured write until it is "
          + "loaded");
      addPath(paths, voltdb.getSnapshotPath(), "VoltDB's snapshots");
      addPath(paths, voltdb.getVoltDBRootPath(), "VoltDB's root");
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "cannot tell where this server's VoltDB writes (" + e + "); the space left there is not "
          + "watched, and a full disk there may stop the server");
    }
    return paths;
  }

  private static void addPath(Map<Path, String> paths, String path, String what) {
    if (path != null && !path.isBlank()) {
      paths.putIfAbsent(Path.of(path).toAbsolutePath().normalize(), what);
    }
  }

  private static Path voltdbRoot() {
    try {
      String root = org.voltdb.VoltDB.instance().getVoltDBRootPath();
      return root == null ? null : Path.of(root);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "cannot tell this server's VoltDB root (" + e + "); its provenance spill files go to the "
          + "configured directory itself, which no other server on this machine may use");
      return null;
    }
  }

  /**
   * What this server's spill files are a copy of: a server rejoining a running k-safe cluster finds its replicas
   * captured every writer that committed while it was gone (see {@link SpoolerConfig.Recovery#REPLICATED}).
   */
  private static SpoolerConfig.Recovery recovery() {
    try {
      return org.voltdb.VoltDB.instance().rejoining() ? SpoolerConfig.Recovery.REPLICATED
          : SpoolerConfig.Recovery.ONLY_COPY;
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "cannot tell whether this server rejoins a running cluster (" + e + "); its provenance "
          + "spill files are loaded whole, as a single server's would be");
      return SpoolerConfig.Recovery.ONLY_COPY;
    }
  }

  /** Starts capture in this process, or keeps the running one if its settings are the same. */
  static synchronized ServerProvenance start(Settings settings) {
    ServerProvenance running = current;
    if (running != null) {
      if (running.settings.equals(settings)) {
        return running;
      }
      running.close();
    }
    if (!stopsWithTheProcess) {
      // A server process ends with VoltDB's exit: its capture's rows in memory are loaded or spilled on the way out.
      Runtime.getRuntime().addShutdownHook(new Thread(ServerProvenance::stopActive, "apiary-provenance-stop"));
      stopsWithTheProcess = true;
    }
    current = new ServerProvenance(settings);
    LOG.log(Level.INFO, "provenance capture into " + settings.destination());
    return current;
  }

  /**
   * Why this server must not run a function now, or empty: below the disk reserve (see the class comment) on a
   * volume VoltDB or the journal writes, a function that writes is refused; below it on the spill directory's
   * volume, with durable capture, every function is. The reason names the volume, the space left and the reserve;
   * the caller aborts the transaction with it before the function runs. Cheap enough for every transaction.
   *
   * @param writes whether the function writes
   */
  public Optional<String> refusal(boolean writes) {
    if (writes) {
      for (Map.Entry<Path, String> path : serverPaths.entrySet()) {
        Optional<String> shortage = disk.shortage(path.getKey(), path.getValue());
        if (shortage.isPresent()) {
          return Optional.of("writes are refused until space is freed: " + shortage.get());
        }
      }
      org.apiary.runtime.journal.ServerJournal journal = org.apiary.runtime.journal.ServerJournal.current();
      Path journalDirectory = journal == null ? null : journal.directory();
      if (journalDirectory != null) {
        Optional<String> shortage = disk.shortage(journalDirectory, "the journal of committed writes");
        if (shortage.isPresent()) {
          return Optional.of("writes are refused until space is freed: " + shortage.get());
        }
      }
    }
    if (settings.durable()) {
      Optional<String> shortage = disk.shortage(spillDirectory, "durable provenance capture's "
          + "spill files");
      if (shortage.isPresent()) {
        return Optional.of("function executions are refused until space is freed (durable provenance capture "
            + "cannot keep their provenance): " + shortage.get());
      }
    }
    return Optional.empty();
  }

  /** Whether rows read are captured, or only writes and function executions. */
  public boolean capturesReads() {
    return settings.captureReads();
  }

  /** The capture of this process, if its deployment enables provenance. */
  public static Optional<ServerProvenance> active() {
    return Optional.ofNullable(current);
  }

  /** The events table of an application table (registered with the spooler on first use). */
  public Optional<ProvenanceTable> eventsTable(String applicationTable) {
    String key = applicationTable.toUpperCase(java.util.Locale.ROOT);
    ProvenanceTable known = eventsTables.get(key);
    if (known != null) {
      return Optional.of(known);
    }
    Optional<ProvenanceTable> described = CatalogTables.eventsTable(applicationTable);
    described.ifPresent(t -> {
      if (eventsTables.putIfAbsent(key, t) == null) {
        spooler.register(t);
      }
    });
    return described;
  }

  /**
   * Buffers rows of a function execution that is about to commit (reads, invocation); loaded within the flush
   * interval. In durable mode they are on disk when this returns.
   *
   * @throws java.io.UncheckedIOException in durable mode, if they could not be made durable: the function's
   *     transaction must then abort
   */
  public void offer(List<ProvenanceRow> rows) {
    if (settings.durable()) {
      spooler.offerDurably(rows);
    } else {
      spooler.offer(rows);
    }
  }

  /**
   * Loads captured writes synchronously (called by the export connector at the end of each block, which VoltDB
   * hands over again if this throws), so a committed write is in the sink before VoltDB forgets it.
   *
   * @param mayBeInSink whether some of the rows may have been loaded before (VoltDB offers a block again after a
   *     failed load, and after a restart every block it had not seen acknowledged): they are then loaded skipping
   *     present keys, else appended
   * @return how many rows were added, or -1 if the sink does not say (always for rows not {@code mayBeInSink})
   */
  int loadNow(ProvenanceTable table, List<ProvenanceRow> rows, boolean mayBeInSink) throws Exception {
    Optional<Path> file = settings.loader() != null ? Optional.empty() : ProvenanceSink.localFile(settings.sinkUrl());
    Optional<String> shortage = file.flatMap(f -> disk.shortage(f, "the provenance database"));
    if (shortage.isPresent()) {
      // VoltDB keeps the block in its export overflow and offers it again after a backoff.
      throw new java.io.IOException("loading captured writes paused: " + shortage.get());
    }
    synchronized (loaderLock) {
      try {
        if (loader == null) {
          loader = directSinks.get();
          if (loader instanceof ProvenanceSink sink) { // a loader apart ensures these itself
            sink.ensureTable(ProvenanceSchema.functionInvocations());
            sink.ensureView(ProvenanceSchema.FUNCTION_EXEC_TIMES_VIEW);
          }
        }
        loader.ensureTable(table);
        // The rows were built from VoltDB's export rows against the catalog's table (checked by the sink when local).
        if (loader instanceof ProvenanceSink sink) {
          if (!mayBeInSink) {
            sink.append(table, rows);
            return -1;
          }
          return sink.load(table, rows);
        }
        return loader.loadBatch(table, rows, !mayBeInSink);
      } catch (Exception e) {
        closeLoader();
        throw e;
      }
    }
  }

  /** How long after a failed direct load captured writes go through the spooler without trying the sink first. */
  private static final long SPOOL_AFTER_FAILURE_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
  private volatile long lastDirectLoadFailure;
  private volatile boolean directLoadHasFailed;

  /** Notes that loading a block of captured writes straight into the sink failed. */
  void directLoadFailed() {
    lastDirectLoadFailure = System.nanoTime();
    directLoadHasFailed = true;
  }

  /**
   * Whether captured writes should go to the spooler rather than straight into the sink: a direct load failed a
   * moment ago, or the spooler has rows waiting on disk (the sink is down or behind, and a direct load would wait).
   */
  boolean writesGoThroughSpool() {
    return keepsRefusedWrites() && ((directLoadHasFailed
        && System.nanoTime() - lastDirectLoadFailure < SPOOL_AFTER_FAILURE_NANOS) || spooler.stats().rowsOnDisk() > 0);
  }

  /**
   * Whether this server keeps captured writes the sink refused in its own spill files: only where it holds the only
   * copy (k-factor 0). On a k-safe cluster VoltDB keeps a block that was not acknowledged and a replica exports it if
   * this server dies, which spill files on a dead server's disk could not do (an acknowledged block is dropped on
   * the replicas too); there a stop while the sink is down still loses the writes' events still pending.
   */
  boolean keepsRefusedWrites() {
    try {
      return org.voltdb.VoltDB.instance().getKFactor() == 0;
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "cannot tell this cluster's k-factor (" + e + "); captured writes the sink refuses are "
          + "left to VoltDB, as on a k-safe cluster");
      return false;
    }
  }

  /**
   * Keeps a block of captured writes in this server's spill files, forced to disk, for the spooler to load (skipping
   * rows already present): once this returns, VoltDB may forget the block.
   *
   * @throws java.io.UncheckedIOException if the rows could not be made durable
   */
  void keepWrites(List<ProvenanceRow> rows) {
    spooler.offerDurably(rows);
  }

  private void closeLoader() {
    if (loader != null) {
      try {
        loader.close();
      } catch (Exception e) {
        LOG.log(Level.WARNING, "closing the provenance loader's connection failed: " + e.getMessage());
      }
      loader = null;
    }
  }

  /** Waits (bounded) until everything offered so far is in the sink. */
  public boolean flush(Duration timeout) {
    return spooler.flush(timeout);
  }

  /** The spooler (for statistics). */
  public ProvenanceSpooler spooler() {
    return spooler;
  }

  /**
   * Stops this process's capture, if one runs: called when the server stops (an embedded server's close, a server
   * process's exit). What the sink takes within the spooler's close timeout is loaded; every other row in memory is
   * written to this server's spill files, which its next start on the same root loads.
   */
  public static void stopActive() {
    ServerProvenance running;
    synchronized (ServerProvenance.class) {
      running = current;
    }
    if (running != null) {
      running.close();
    }
  }

  @Override
  public void close() {
    synchronized (ServerProvenance.class) {
      if (current == this) {
        current = null;
      }
    }
    reporter.shutdownNow();
    try {
      if (!reporter.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS)) {
        LOG.log(Level.WARNING, "the provenance backlog reporter did not stop within 5 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    spooler.close();
    synchronized (loaderLock) {
      closeLoader();
    }
    report(true); // what the next start loads: rows left in spill files
  }

  @Override
  public String toString() {
    return "ServerProvenance[" + Objects.toString(settings.destination()) + "]";
  }
}
