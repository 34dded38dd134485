package org.apiary.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.DatabaseConfig;
import org.apiary.database.DatabaseUsers;
import org.apiary.database.ProvenanceConfig;
import org.apiary.frontend.Credentials;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.FrontendServer;
import org.apiary.runtime.SystemSchema;
import picocli.CommandLine.Command;
import org.apiary.journal.JournalMode;
import org.apiary.runtime.journal.JournalStatusReport;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Apiary as a service, in the foreground: an embedded VoltDB keeping its data in a directory, a frontend, and
 * provenance captured into DuckDB in the same directory. Ready once it prints its one line and writes
 * {@value ServiceDirectory#STATE}; SIGTERM (or {@code apiary stop}) stops it cleanly.
 */
@Command(name = "start", mixinStandardHelpOptions = true,
    description = {
        "Run Apiary as a service in the foreground: an embedded VoltDB that keeps its data in DIR, a frontend for "
            + "clients, and provenance captured into DIR/" + ServiceDirectory.PROVENANCE + ".",
        "When ready it writes DIR/" + ServiceDirectory.STATE + " and prints one line saying where it listens. "
            + "Stop it with `apiary stop --data DIR` (or SIGTERM, Ctrl-C): it takes a snapshot, and the next start "
            + "on DIR restores every committed row, the deployed functions and the registered graphs. After a crash "
            + "(SIGKILL, power loss) what committed after the last automatic snapshot is lost.",
        "The first start fixes the partitions, the snapshot interval and whether provenance is captured; later starts "
            + "on DIR keep them."})
public final class StartCommand implements Callable<Integer> {
  /** How long a stop waits for a start that is still under way before closing what it opened. */
  private static final Duration STARTUP_WAIT = DatabaseConfig.DEFAULT_CONNECT_TIMEOUT.plusSeconds(30);

  @Option(names = "--data", required = true, paramLabel = "DIR",
      description = "The data directory (created if missing). Only one Apiary runs on a directory at a time.")
  Path data;

  @Option(names = "--port", defaultValue = "0", paramLabel = "P",
      description = "The frontend's TCP port; 0 picks a free one (default). Clients find it in DIR/"
          + ServiceDirectory.STATE + ".")
  int port;

  @Option(names = "--bind", defaultValue = "127.0.0.1", paramLabel = "ADDRESS",
      description = "The address the frontend listens on (default ${DEFAULT-VALUE}). The database listens on "
          + "loopback only.")
  String bind;

  @Option(names = "--database-port", defaultValue = "0", paramLabel = "P",
      description = "The database's client port, on loopback; 0 picks a free one (default).")
  int databasePort;

  @Option(names = "--partitions", paramLabel = "N",
      description = "Partitions of the database (default " + DatabaseConfig.DEFAULT_PARTITIONS + "); fixed by the "
          + "first start on DIR.")
  Integer partitions;

  @Option(names = "--snapshot-interval-s", paramLabel = "S",
      description = "Seconds between automatic snapshots, the most a crash can lose (default "
          + DatabaseConfig.DEFAULT_SNAPSHOT_INTERVAL_SECONDS + "); fixed by the first start on DIR.")
  Long snapshotIntervalSeconds;

  @Option(names = "--no-credentials", description = "Serve without requiring API keys: anyone who reaches the "
      + "frontend may call any graph. By default every call needs a key; the first start creates the admin key, "
      + "prints it once and keeps it in DIR/" + ServiceDirectory.ADMIN_KEY + " (readable by you only).")
  boolean noCredentials;

  @Option(names = "--provenance", negatable = true,
      description = "Capture provenance into DIR/" + ServiceDirectory.PROVENANCE + " (default: on; "
          + "--no-provenance: off). VoltDB Community Edition captures the writes of at most 2 tables. Fixed by the "
          + "first start on DIR.")
  Boolean provenance;

  @Option(names = "--journal", paramLabel = "MODE",
      description = "The journal of committed writes, replayed after a crash: synchronous (the default: a reply "
          + "leaves only once what it reports is on disk, so a crash loses nothing acknowledged), asynchronous "
          + "(fsynced every 100 ms: a crash loses at most that much), or none (a crash loses what committed after the "
          + "last snapshot). Whether DIR is journaled is fixed by its first start; synchronous and asynchronous may "
          + "change from one start to the next.")
  String journal;

  @Option(names = "--accept-journal-loss", description = "Start even if the journal is damaged before its tail, "
      + "from what precedes the damage (the start reports what it dropped). Without it such a start fails, naming the "
      + "file and offset.")
  boolean acceptJournalLoss;

  @Option(names = "--console-port", defaultValue = "0", paramLabel = "P",
      description = "The console's port on loopback: its JSON API (executions, graphs, the cluster, provenance "
          + "queries) for an admin key, which `apiary provenance ... --data DIR` and `apiary executions show --data "
          + "DIR` ask while the service holds its provenance sink; 0 picks a free one (default).")
  int consolePort;

  @Option(names = "--no-console", description = "Serve no console. The provenance commands then answer for DIR only "
      + "after the service stopped (DuckDB lets one process open its file).")
  boolean noConsole;

  @Mixin
  WireOptions wireOptions = new WireOptions();

  @Mixin
  MetricsOptions metricsOptions = new MetricsOptions();

  private final PrintStream out = System.out;
  private final PrintStream err = System.err;

  @Override
  public Integer call() throws InterruptedException {
    ServiceDirectory dir = new ServiceDirectory(data);
    FileLock lock = dir.lock().orElseThrow(() -> inUse(dir));
    ServiceDirectory.Settings settings;
    try {
      settings = settings(dir);
    } catch (RuntimeException e) {
      release(lock);
      throw e;
    }
    Service service = new Service(dir, lock);
    Tracing.installFromEnvironment(out); // before the frontend starts: it takes its tracer then
    // SIGTERM (apiary stop) and Ctrl-C stop the service cleanly and `start` then exits 0 (1 if a step of the stop
    // failed): handled here, not by the JVM's default, which exits 143 or 130 whatever the stop did. The shutdown
    // hook stays for any other end of the JVM.
    Runtime.getRuntime().addShutdownHook(new Thread(service::stopOnSignal, "apiary-stop"));
    service.handleStopSignals();
    Optional<ServiceDirectory.State> ready = service.open(settings, port, bind, databasePort);
    if (ready.isEmpty()) {
      return 1; // stopped while starting; the stop has closed what was opened
    }
    service.handleStopSignals(); // again, in case the embedded database installed handlers of its own
    ServiceDirectory.State state = ready.get();
    out.println("apiary: ready: frontend " + state.frontend() + ", database " + state.database() + ", data in "
        + dir.root() + " (pid " + state.pid() + "); stop with: apiary stop --data " + dir.root());
    FrontendServer serving = service.frontend();
    if (state.console() != null) {
      out.println("apiary: console at " + state.console() + "/api/ (an admin API key as Authorization: Bearer KEY; "
          + "loopback only)");
    }
    serving.metricsUrl().ifPresent(url -> out.println("apiary: metrics, health and readiness at " + url
        + "/metrics, /health, /ready (no API key; " + (metricsOptions.bind.equals("127.0.0.1") ? "loopback only)"
        : "listening on " + metricsOptions.bind + ")")));
    out.flush();
    // A frontend that stops itself (its socket thread failed) stops the service, which then exits with status 1.
    serving.stopped().thenRun(() -> serving.failure().ifPresent(e -> {
      err.println("apiary: the frontend stopped: its socket thread or JeroMQ's I/O thread failed (" + e + "); "
          + "stopping the service");
      service.close();
    }));
    service.awaitStopped(); // the service's life: until SIGTERM, Ctrl-C, `apiary stop` or a failed frontend
    return serving.failure().isPresent() || !service.stoppedCleanly() ? 1 : 0;
  }

  private CliException inUse(ServiceDirectory dir) {
    Optional<Long> holder = dir.holder();
    String who = holder.filter(pid -> pid > 0 && dir.staleState(pid).isEmpty()).flatMap(pid -> dir.readState())
        .map(s -> "pid " + s.pid() + ", frontend " + s.frontend())
        .orElseGet(() -> holder.map(pid -> "pid " + pid + ", still starting").orElse("another process"));
    return new CliException(dir.root() + " is in use by a running Apiary (" + who + "): only one runs on a data "
        + "directory at a time. Stop it first with: apiary stop --data " + dir.root());
  }

  /** The settings of this start: the directory's own if it has been started before, after checking the options. */
  private ServiceDirectory.Settings settings(ServiceDirectory dir) {
    Optional<ServiceDirectory.Settings> existing = dir.readSettings();
    if (existing.isPresent()) {
      ServiceDirectory.Settings s = existing.get();
      checkSame("--partitions", partitions == null ? null : (long) partitions, s.partitions(), dir);
      checkSame("--snapshot-interval-s", snapshotIntervalSeconds, s.snapshotIntervalSeconds(), dir);
      if (provenance != null && provenance != s.provenance()) {
        throw new CliException(dir.root() + " was first started " + (s.provenance() ? "with" : "without")
            + " provenance, and VoltDB keeps that in the directory: start it without "
            + (provenance ? "--provenance" : "--no-provenance") + ", or use a new directory");
      }
      return s;
    }
    ServiceDirectory.Settings s = new ServiceDirectory.Settings(
        partitions == null ? DatabaseConfig.DEFAULT_PARTITIONS : partitions,
        snapshotIntervalSeconds == null ? DatabaseConfig.DEFAULT_SNAPSHOT_INTERVAL_SECONDS : snapshotIntervalSeconds,
        provenance == null || provenance,
        givenJournal().orElse(JournalMode.SYNCHRONOUS).name().toLowerCase(java.util.Locale.ROOT));
    if (s.partitions() < 1) {
      throw new CliException("--partitions must be at least 1, not " + s.partitions(), 2, null);
    }
    if (s.snapshotIntervalSeconds() < 1) {
      throw new CliException("--snapshot-interval-s must be at least 1, not " + s.snapshotIntervalSeconds(), 2, null);
    }
    dir.writeSettings(s);
    return s;
  }

  private Optional<JournalMode> givenJournal() {
    try {
      return Optional.ofNullable(journal).map(JournalMode::parse);
    } catch (IllegalArgumentException e) {
      throw new CliException("--journal: " + e.getMessage(), 2, null);
    }
  }

  /**
   * This start's journal mode: the one given, if the directory's first start agrees on whether there is a journal
   * (VoltDB's automatic snapshots are set up by the first start, and a journaled directory has none), else the first
   * start's.
   */
  private JournalMode journalMode(ServiceDirectory.Settings settings) {
    JournalMode kept = settings.journalMode();
    JournalMode given = givenJournal().orElse(kept);
    if ((given == JournalMode.NONE) != (kept == JournalMode.NONE)) {
      throw new CliException(data + " was first started " + (kept == JournalMode.NONE ? "without a journal" : "with a "
          + "journal") + ", and that is fixed by its first start: start it " + (kept == JournalMode.NONE
          ? "with --journal none" : "with --journal synchronous or asynchronous") + ", or use a new directory", 2, null);
    }
    return given;
  }

  private static void checkSame(String option, Long given, long kept, ServiceDirectory dir) {
    if (given != null && given != kept) {
      throw new CliException(dir.root() + " holds a database first started with " + option + " " + kept
          + ", and VoltDB keeps that in the directory: start it without " + option + " (or with " + option + " "
          + kept + "), or use a new directory");
    }
  }

  private static void release(FileLock lock) {
    try {
      lock.release();
      lock.channel().close();
    } catch (IOException e) {
      // the lock goes with the process anyway
    }
  }

  /**
   * The running service: opened by the main thread, closed exactly once, by the shutdown hook (SIGTERM, Ctrl-C) or by
   * the main thread if the start fails.
   */
  private final class Service {
    private final ServiceDirectory dir;
    private final FileLock lock;
    private final CountDownLatch startupDone = new CountDownLatch(1);
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile boolean stopping;
    private volatile boolean cleanStop;
    private boolean closed;
    private ApiaryDatabase db;
    private ApiaryDatabase frontendDb;
    private FrontendServer frontend;
    private org.apiary.console.ConsoleServer console;
    private ScheduledExecutorService journalReporter;

    Service(ServiceDirectory dir, FileLock lock) {
      this.dir = dir;
      this.lock = lock;
    }

    /** Starts everything; empty if a stop came first. Closes what it opened if a step fails. */
    Optional<ServiceDirectory.State> open(ServiceDirectory.Settings settings, int frontendPort, String bindAddress,
                                          int clientPort) {
      try {
        // This process holds the lock, so a state file here was written by another: a run that did not stop cleanly.
        dir.staleState(ProcessHandle.current().pid()).ifPresent(stale -> {
          String what = stale.startsWith("stale ") ? "the " + stale.replace(" from pid ", " of pid ") : stale;
          out.println("apiary: replaced " + what + ": that run ended without a "
              + "clean stop (killed, crashed or stopped by a full disk); this start restores its data");
          out.flush();
        });
        dir.deleteState();
        dir.deleteJournalStatus();
        DatabaseUsers users = databaseUsers();
        JournalMode journalMode = journalMode(settings);
        DatabaseConfig config = DatabaseConfig.embedded(settings.partitions())
            .withDataDirectory(dir.database())
            .withUsers(users)
            .withSnapshotInterval(Duration.ofSeconds(settings.snapshotIntervalSeconds()))
            .withClientPort(clientPort)
            .withProvenance(settings.provenance() ? ProvenanceConfig.duckdb(dir.provenance()) : null)
            .withJournal(journalMode)
            .withAcceptJournalLoss(acceptJournalLoss);
        out.println("apiary: starting the database in " + dir.database() + " (" + settings.partitions()
            + " partitions, a snapshot every " + settings.snapshotIntervalSeconds() + " s, journal "
            + journalMode.name().toLowerCase(java.util.Locale.ROOT)
            + (settings.provenance() ? ", provenance into " + dir.provenance() : ", no provenance") + ")");
        out.flush();
        ApiaryDatabase opened = ApiaryDatabase.open(config);
        synchronized (this) {
          db = opened;
        }
        if (stopping) {
          return Optional.empty();
        }
        SystemSchema.ensure(opened);
        if (!noCredentials) {
          ensureAdminKey(opened);
        }
        ApiaryDatabase forFrontend = opened;
        if (users != null) { // the frontend connects as the frontends' user, with only the permissions it needs
          forFrontend = ApiaryDatabase.open(DatabaseConfig.external(opened.clientAddresses().get(0))
              .withProvenance(config.provenance()).withLogin(users.frontend()));
          synchronized (this) {
            frontendDb = forFrontend;
          }
        }
        FrontendServer server = FrontendServer.start(forFrontend, FrontendConfig.defaults()
            .withBindAddress(bindAddress).withPort(frontendPort).withCredentialsRequired(!noCredentials)
            .withWire(wireOptions.wire()).withMetrics(metricsOptions.metrics()));
        synchronized (this) {
          frontend = server;
        }
        if (stopping) {
          return Optional.empty();
        }
        if (config.capturesProvenance()) {
          server.reportProvenanceBacklog(dir.provenanceSpill());
        }
        String sink = config.capturesProvenance() ? config.provenance().sinkUrl() : null;
        if (!noConsole) {
          // The sink's DuckDB database is open in this process (the capture loads it), so the console shares it.
          org.apiary.console.ConsoleServer started;
          try {
            started = org.apiary.console.ConsoleServer.start(forFrontend, org.apiary.console.ConsoleConfig
                .defaults(consolePort).withSink(sink).withSinkInProcess(true).withCredentialsRequired(!noCredentials)
                .withSpillRoot(config.capturesProvenance() ? dir.provenanceSpill() : null));
          } catch (IOException e) {
            throw new CliException("could not serve the console on 127.0.0.1:" + consolePort + ": " + e.getMessage()
                + " (choose another --console-port, or --no-console)", 2, e);
          }
          synchronized (this) {
            console = started;
          }
        }
        ServiceDirectory.State state = new ServiceDirectory.State(ProcessHandle.current().pid(),
            dir.root().toString(), opened.clientAddresses().get(0), server.endpoint(), port(server.endpoint()),
            settings.partitions(), sink, Instant.now().toString(), console == null ? null : console.url());
        dir.writeState(state);
        if (settings.provenance()) {
          reportJournal();
        }
        return Optional.of(state);
      } catch (RuntimeException e) {
        close();
        throw new CliException("could not start Apiary in " + dir.root() + ": " + e.getMessage(), e);
      } finally {
        startupDone.countDown();
      }
    }

    /**
     * The database's VoltDB users: on the first start, new ones with random passwords, kept in
     * {@value ServiceDirectory#DATABASE_USERS} (readable by its owner only) before the database is created; later,
     * those of that file. A database created before Apiary gave it users has none and stays open (said once here).
     */
    private DatabaseUsers databaseUsers() {
      Optional<DatabaseUsers> kept = dir.readDatabaseUsers();
      if (kept.isPresent()) {
        return kept.get();
      }
      if (Files.exists(dir.database())) {
        out.println("apiary: the database in " + dir.database() + " was created without VoltDB users, so anyone who "
            + "reaches its loopback port may use it; a new data directory gets users");
        return null;
      }
      DatabaseUsers users = DatabaseUsers.generate();
      users.writeTo(dir.databaseUsers());
      out.println("apiary: the database runs with VoltDB's security: users " + DatabaseUsers.ADMIN_USER + " and "
          + DatabaseUsers.FRONTEND_USER + " (the frontend's, least privileged), passwords in " + dir.databaseUsers()
          + ", readable by you only");
      return users;
    }

    /**
     * On the first start (no live key in the database), creates the admin API key, prints it once and keeps it in
     * the data directory for this machine's commands ({@code apiary invoke --data DIR}).
     */
    private void ensureAdminKey(ApiaryDatabase opened) {
      if (Credentials.list(opened).stream().anyMatch(c -> !c.revoked())) {
        return;
      }
      Credentials.Issued admin = Credentials.create(opened, "admin", java.util.Set.of(Credentials.ADMIN_ROLE));
      Path file = dir.adminKey();
      try {
        org.apiary.database.OwnerOnlyFile.write(file, admin.apiKey() + "\n");
      } catch (IOException e) {
        throw new CliException("could not keep the admin API key in " + file + ": " + e.getMessage(), e);
      }
      out.println("apiary: created the admin API key (shown only now; also kept in " + file + ", readable by you "
          + "only): " + admin.apiKey());
      out.flush();
    }

    /**
     * Writes the journal's status ({@link JournalStatusReport}) every {@link JournalStatusReport#INTERVAL}: its writer runs in this process (the embedded database's), so this is
     * how {@code apiary status} can tell. (The provenance backlog is reported by the database server itself.)
     */
    private void reportJournal() {
      ScheduledExecutorService reporter = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "apiary-journal-status-reporter");
        t.setDaemon(true);
        return t;
      });
      synchronized (this) {
        journalReporter = reporter;
      }
      long every = JournalStatusReport.INTERVAL.toMillis();
      String[] lastFailure = new String[1]; // said once until it changes: a full disk would repeat it every 2 s
      reporter.scheduleWithFixedDelay(() -> {
        String failure = null;
        try {
          JournalStatusReport.of(org.apiary.runtime.journal.ServerJournal.current())
              .ifPresent(r -> r.writeTo(dir.root()));
        } catch (RuntimeException e) {
          failure = "apiary: could not report the journal's status in " + dir.root() + ": " + e.getMessage();
        }
        if (failure != null && !failure.equals(lastFailure[0])) {
          err.println(failure + " (said again only if it changes)");
        } else if (failure == null && lastFailure[0] != null) {
          err.println("apiary: the status files in " + dir.root() + " are written again");
        }
        lastFailure[0] = failure;
      }, 0, every, TimeUnit.MILLISECONDS);
    }

    /** Handles SIGTERM and SIGINT by stopping the service on a thread of its own; the main thread then returns. */
    void handleStopSignals() {
      for (String name : new String[] {"TERM", "INT"}) {
        try {
          sun.misc.Signal.handle(new sun.misc.Signal(name),
              signal -> new Thread(this::stopOnSignal, "apiary-stop-" + name.toLowerCase(java.util.Locale.ROOT)).start());
        } catch (IllegalArgumentException e) {
          // The JVM was started with -Xrs or the signal is in use: the shutdown hook stops the service instead.
          err.println("apiary: cannot handle SIG" + name + " (" + e.getMessage() + "); a stop then exits with "
              + "the JVM's status for the signal");
        }
      }
    }

    /** Whether the service was closed and every step of closing it worked. */
    boolean stoppedCleanly() {
      return cleanStop;
    }

    /** The stop on a signal (or the shutdown hook): waits (bounded) for a start under way, then closes everything. */
    void stopOnSignal() {
      stopping = true;
      try {
        if (!startupDone.await(STARTUP_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
          err.println("apiary: stopping while the start has not finished after " + STARTUP_WAIT.toSeconds()
              + " s; closing what is open");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      close();
    }

    /**
     * Closes the frontend, then the database (which takes the clean-stop snapshot), removes the state file if both
     * worked and releases the directory. Runs once; later calls do nothing.
     *
     * @return whether this call closed it and every step worked (a failure is reported on stderr)
     */
    synchronized boolean close() {
      if (closed) {
        return false;
      }
      closed = true;
      boolean clean = true;
      if (journalReporter != null) {
        journalReporter.shutdownNow();
        try {
          if (!journalReporter.awaitTermination(5, TimeUnit.SECONDS)) {
            err.println("apiary: the provenance backlog reporter did not stop within 5 s");
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      try {
        if (console != null) {
          console.close();
        }
      } catch (RuntimeException e) {
        clean = false;
        err.println("apiary: closing the console failed: " + e.getMessage());
      }
      try {
        if (frontend != null) {
          out.println("apiary: stopping: closing the frontend");
          out.flush();
          frontend.close();
        }
      } catch (RuntimeException e) {
        clean = false;
        err.println("apiary: closing the frontend failed: " + e.getMessage());
      }
      try {
        if (frontendDb != null) {
          frontendDb.close();
        }
      } catch (RuntimeException e) {
        clean = false;
        err.println("apiary: closing the frontend's database connection failed: " + e.getMessage());
      }
      try {
        if (db != null) {
          out.println("apiary: stopping: taking a snapshot and stopping the database");
          out.flush();
          db.close();
        }
      } catch (RuntimeException e) {
        clean = false;
        err.println("apiary: stopping the database failed: " + e.getMessage() + "; the next start restores the last "
            + "automatic snapshot");
      }
      try {
        dir.deleteJournalStatus(); // counts of a writer that is gone
        if (clean) {
          dir.deleteState(); // kept otherwise, so `apiary stop` can tell that the stop was not clean
        }
      } catch (RuntimeException e) {
        clean = false;
        err.println("apiary: " + e.getMessage());
      }
      release(lock);
      err.flush();
      cleanStop = clean;
      if (clean && stopping) { // before the main thread is let go: it may end the JVM at once
        out.println("apiary: stopped cleanly; the data is in " + dir.root());
        out.flush();
      }
      stopped.countDown();
      return clean;
    }

    synchronized FrontendServer frontend() {
      return frontend;
    }

    void awaitStopped() throws InterruptedException {
      stopped.await();
    }
  }

  private static int port(String endpoint) {
    return Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
  }
}
