package org.apiary.database;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.apiary.DatabaseException;
import org.apiary.runtime.provenance.ServerProvenance;
import org.voltdb.ServerThread;
import org.voltdb.VoltDB;

/** A VoltDB server running inside this JVM, listening on loopback only. */
final class EmbeddedServer implements AutoCloseable {
  // VoltDB keeps its server in a process-wide singleton, so one process can run only one embedded server at a time.
  // Once it has stopped, another can start (checked on 9.3.2, with create and with probe starts).
  private static final AtomicBoolean RUNNING = new AtomicBoolean();
  // The server thread of the latest start, so a start that failed after it began does not free RUNNING too early.
  private static volatile Thread latest;
  // Set once a stop hung: VoltDB's singleton is then half torn down and a start would wait out its whole timeout.
  private static volatile boolean shutdownHung;

  /** How long {@link #close()} waits for VoltDB to stop. */
  static final java.time.Duration SHUTDOWN_TIMEOUT = java.time.Duration.ofSeconds(20);

  private final ServerThread thread;
  private final Path root;
  private final boolean deleteRoot;
  private final int clientPort;
  private final int adminPort;
  /** The journal, for a journaled database (set once recovery has opened the database). */
  private DatabaseJournal journal;

  private EmbeddedServer(ServerThread thread, Path root, boolean deleteRoot, int clientPort, int adminPort) {
    this.thread = thread;
    this.root = root;
    this.deleteRoot = deleteRoot;
    this.clientPort = clientPort;
    this.adminPort = adminPort;
  }

  static EmbeddedServer start(DatabaseConfig config) {
    if (shutdownHung) {
      throw new DatabaseException("an earlier embedded VoltDB in this process did not finish stopping (its shutdown "
          + "hung; see the warning logged then), and VoltDB cannot start again in this process: start a new process, "
          + "or connect with DatabaseConfig.external(...)");
    }
    if (!RUNNING.compareAndSet(false, true)) {
      throw new DatabaseException("an embedded VoltDB is already running in this process, and VoltDB runs at most one "
          + "per process: share that ApiaryDatabase (or close it first), or connect with DatabaseConfig.external(...)");
    }
    try {
      return config.isDurable() ? startDurable(config) : startTemporary(config);
    } catch (IOException | RuntimeException e) {
      Thread t = latest;
      if (t == null || !t.isAlive()) {
        RUNNING.set(false);
      }
      throw new DatabaseException("could not start the embedded VoltDB: " + e.getMessage(), e);
    }
  }

  /** Today's default: a fresh database in a temporary directory, created with VoltDB's legacy {@code create}. */
  private static EmbeddedServer startTemporary(DatabaseConfig config) throws IOException {
    Path root = Files.createTempDirectory("apiary-voltdb-");
    Path deployment = root.resolve("apiary-deployment.xml");
    Deployments.write(deployment, Deployments.inRoot(Deployments.singleNode(config.partitions(), config.provenance(),
        root.resolve("provenance-spill"), null, config.users()), root));

    int[] ports = LocalCluster.freePorts(4);
    int clientPort = config.clientPort() == 0 ? ports[0] : config.clientPort();
    VoltDB.Configuration vc = new VoltDB.Configuration();
    vc.m_voltdbRoot = new File(root.toString());
    vc.m_pathToDeployment = deployment.toString();
    vc.m_forceVoltdbCreate = true;
    vc.m_port = clientPort;
    vc.m_clientInterface = "127.0.0.1";
    vc.m_adminPort = ports[1];
    vc.m_adminInterface = "127.0.0.1";
    vc.m_internalPort = ports[2];
    vc.m_internalInterface = "127.0.0.1";
    vc.m_zkInterface = "127.0.0.1:" + ports[3];
    vc.m_httpPort = org.voltdb.common.Constants.HTTP_PORT_DISABLED; // 0 would start it on every interface
    vc.m_pathToLicense = root.resolve("license.xml").toString();
    vc.m_leader = "127.0.0.1";
    vc.m_coordinators = new java.util.TreeSet<>(java.util.List.of("127.0.0.1:" + vc.m_internalPort));
    ServerThread thread = new ServerThread(vc);
    return run(thread, config, root, true, clientPort, vc.m_adminPort);
  }

  /**
   * A database kept in the configured data directory: initialized there on first use (a {@code voltdb initialize}
   * child process, since VoltDB's in-process initialization ends by exiting), then started with {@code probe}, which
   * restores the newest complete snapshot in the directory before it accepts clients.
   */
  private static EmbeddedServer startDurable(DatabaseConfig config) throws IOException {
    Path root = config.dataDirectory().toAbsolutePath();
    // Owner-only before VoltDB writes into it: VoltDB copies the deployment (the users' passwords) under it with the
    // umask's modes, and this JVM cannot change its own umask.
    OwnerOnlyFile.createDirectory(root);
    OwnerOnlyFile.restrictTree(root);
    // The journal is locked and read before VoltDB starts: a second server, or a damaged journal, stops the start.
    DatabaseJournal journal = DatabaseJournal.journals(config.journal()) ? DatabaseJournal.open(root, config) : null;
    try {
      EmbeddedServer server = startDurable(config, root, journal != null);
      if (journal != null) {
        try {
          journal.recover(server.adminPort);
        } catch (RuntimeException e) {
          server.close();
          throw e;
        }
        server.journal = journal;
      }
      return server;
    } catch (IOException | RuntimeException e) {
      if (journal != null) {
        journal.close();
      }
      throw e;
    }
  }

  private static EmbeddedServer startDurable(DatabaseConfig config, Path root, boolean journaled) throws IOException {
    if (!Snapshots.isInitialized(root)) {
      Path deployment = root.resolve("apiary-deployment.xml");
      // A journaled database checkpoints itself; VoltDB's automatic snapshots would carry no checkpoint marker.
      Deployments.write(deployment, Deployments.singleNode(config.partitions(), config.provenance(),
          root.resolve("provenance-spill"), journaled ? null : config.snapshotInterval(), config.users()));
      LocalCluster.run(List.of("initialize", "voltdbroot", root.toString(), "deployment", deployment.toString()),
          root.resolve("initialize.log"), config.connectTimeout());
    } else if (journaled) {
      DatabaseJournal.checkNoAutomaticSnapshots(root);
    }
    int sites = Snapshots.initializedSites(root);
    if (sites != -1 && sites != config.partitions()) {
      throw new DatabaseException(root + " holds a database with " + sites + " partitions, not the " + config.partitions()
          + " configured: open it with DatabaseConfig.embedded(" + sites + ")");
    }
    int[] ports = LocalCluster.freePorts(5);
    int clientPort = config.clientPort() == 0 ? ports[0] : config.clientPort();
    int internalPort = ports[1];
    int adminPort = ports[2];
    List<String> args = new java.util.ArrayList<>(List.of(
        "probe", "voltdbroot", root.toString(), "mesh", "127.0.0.1:" + internalPort, "hostcount", "1",
        "port", "127.0.0.1:" + clientPort, "adminport", "127.0.0.1:" + adminPort,
        "internalport", String.valueOf(internalPort), "internalinterface", "127.0.0.1",
        "externalinterface", "127.0.0.1", "zkport", "127.0.0.1:" + ports[3],
        // No "httpport": given one, VoltDB starts its HTTP server on every interface despite the deployment's
        // <httpd enabled="false"/>.
        "replicationport", String.valueOf(ports[4])));
    if (journaled) {
      args.add("paused"); // clients wait until the journal's replay is done
    }
    VoltDB.Configuration vc = new VoltDB.Configuration(args.toArray(new String[0]));
    vc.m_pathToLicense = root.resolve("license.xml").toString();
    ServerThread thread = new ServerThread(vc);
    // ServerThread's constructor sets m_forceVoltdbCreate, which makes a start ignore (and wipe) the data in the root;
    // the server reads the flag only when the thread runs, so clearing it here keeps the data and its snapshots.
    vc.m_forceVoltdbCreate = false;
    return run(thread, config, root, false, clientPort, adminPort);
  }

  private static EmbeddedServer run(ServerThread thread, DatabaseConfig config, Path root, boolean temporary,
                                    int clientPort, int adminPort) {
    EmbeddedLog.quietUntrueWarnings();
    thread.setName("apiary-embedded-voltdb");
    thread.setDaemon(true);
    latest = thread;
    thread.start();
    // The server thread returns once VoltDB is up, so only the port says whether it is serving. VoltDB opens the
    // client port only after it has restored its snapshot, so a client sees the restored data from its first call.
    awaitListening(clientPort, config.connectTimeout(), "the embedded VoltDB", () -> true);
    OwnerOnlyFile.restrictTree(root); // what VoltDB created (0644, 0755); the 0700 root already hid it
    restrictSpillDirectory(config);
    return new EmbeddedServer(thread, root, temporary, clientPort, adminPort);
  }

  /** A spill directory configured outside the root: owner-only too (the spooler's files hold provenance rows). */
  static void restrictSpillDirectory(DatabaseConfig config) {
    if (config.provenance() != null && config.provenance().spillDirectory() != null) {
      try {
        OwnerOnlyFile.createDirectory(config.provenance().spillDirectory().toAbsolutePath());
      } catch (IOException e) {
        throw new UncheckedIOException("cannot make the provenance spill directory owner-only: " + e.getMessage(), e);
      }
    }
  }

  int clientPort() {
    return clientPort;
  }

  /** The admin port (loopback): system procedures such as {@code @Pause} are refused on the client port. */
  int adminPort() {
    return adminPort;
  }

  Path root() {
    return root;
  }

  /** The journal of a journaled database, else {@code null}. */
  DatabaseJournal journal() {
    return journal;
  }

  /** Whether the data outlives this server (a data directory, snapshots), so a stop takes a snapshot. */
  boolean durable() {
    return !deleteRoot;
  }

  /**
   * Stops the server, waiting at most {@link #SHUTDOWN_TIMEOUT}. VoltDB 9.3.2's shutdown now and then never returns:
   * a site thread stays blocked while its execution engine is destroyed (seen once in several stops of a service,
   * after the other site had finished), and {@code ServerThread.shutdown()} waits for it without a bound. The data
   * is safe by then (a durable database's stop snapshot is taken before this, and writes are paused), so after the
   * timeout this logs a warning and returns; the stuck thread ends with the process, and no other embedded VoltDB
   * can start in this process.
   */
  @Override
  public void close() {
    try {
      Thread stopper = new Thread(() -> {
        try {
          thread.shutdown();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }, "apiary-embedded-voltdb-stop");
      stopper.setDaemon(true);
      long deadline = System.nanoTime() + SHUTDOWN_TIMEOUT.toNanos();
      stopper.start();
      stopper.join(SHUTDOWN_TIMEOUT.toMillis());
      thread.join(Math.max(1, java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
      if (stopper.isAlive() || thread.isAlive()) {
        shutdownHung = true;
        System.getLogger(EmbeddedServer.class.getName()).log(System.Logger.Level.WARNING, "the embedded VoltDB in "
            + root + " did not finish stopping within " + SHUTDOWN_TIMEOUT.toSeconds() + " s (VoltDB's shutdown is "
            + "stuck); " + (deleteRoot ? "" : "its stop snapshot was taken before, so no committed data is lost; ")
            + "its threads end with this process, and no other embedded VoltDB can start in it");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DatabaseException("interrupted while stopping the embedded VoltDB", e);
    } finally {
      try {
        // The capture of this process belongs to the server: once VoltDB has stopped, nothing offers rows any more,
        // and what the sink has not taken goes to the spill files the next start on this root loads.
        ServerProvenance.stopActive();
        if (journal != null) {
          journal.close();
        }
        if (deleteRoot) {
          deleteTree(root);
        }
      } finally {
        if (!thread.isAlive()) {
          RUNNING.set(false);
        }
      }
    }
  }

  /**
   * Waits until something accepts connections on a loopback port.
   *
   * @param what names the server in error messages
   * @param alive false once the server is known dead, to stop waiting early
   */
  static void awaitListening(int port, java.time.Duration timeout, String what, java.util.function.BooleanSupplier alive) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      if (!alive.getAsBoolean()) {
        throw new DatabaseException(what + " exited while starting");
      }
      try (java.net.Socket s = new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), port)) {
        return;
      } catch (IOException notYet) {
        if (System.nanoTime() > deadline) {
          throw new DatabaseException(what + " did not accept clients on port " + port + " within " + timeout);
        }
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new DatabaseException("interrupted while waiting for " + what, e);
      }
    }
  }

  static void deleteTree(Path root) {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(root)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException("could not delete " + root, e);
    }
  }
}
