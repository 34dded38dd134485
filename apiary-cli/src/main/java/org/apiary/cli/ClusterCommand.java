package org.apiary.cli;

import java.io.PrintStream;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apiary.DatabaseException;
import org.apiary.database.ClusterConfig;
import org.apiary.database.DatabaseConfig;
import org.apiary.database.LocalCluster;
import org.apiary.database.ProvenanceConfig;
import org.apiary.journal.JournalMode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code apiary cluster start|stop}: a VoltDB cluster of server processes on this machine. */
@Command(name = "cluster", mixinStandardHelpOptions = true,
    description = {"A VoltDB cluster of server processes on this machine, each node with its own ports and its own "
        + "root under DIR, for `apiary frontend --database ...`, `apiary deploy --database ...`, `apiary status "
        + "--database ...` and `apiary executions ... --database ...`.",
        "`cluster start` returns once every node accepts clients and leaves the servers running in the background "
            + "(their output goes to DIR/nodeN.log); `cluster stop` stops them."},
    subcommands = {ClusterCommand.Start.class, ClusterCommand.Stop.class})
public final class ClusterCommand implements Runnable {
  /** The directory both subcommands use when not given one. */
  static final String DEFAULT_DIRECTORY = "apiary-cluster";

  @Spec
  CommandSpec spec;

  @Override
  public void run() {
    throw new ParameterException(spec.commandLine(), "name a subcommand: apiary cluster start, or apiary cluster stop");
  }

  /** Starts the servers, writes {@value ClusterDirectory#STATE} and returns; the servers keep running. */
  @Command(name = "start", mixinStandardHelpOptions = true,
      description = {"Start a VoltDB cluster of N server processes on this machine (on loopback) and return once every "
          + "node accepts clients; the servers keep running in the background after this command exits. Prints the "
          + "--database list to give `apiary frontend`, `deploy`, `status` and `executions`, and writes it, with "
          + "each node's process ID and ports, to DIR/" + ClusterDirectory.STATE + ".",
          "The data stays in DIR: an automatic snapshot every --snapshot-interval-s, one more on `apiary cluster "
              + "stop`, restored by the next `cluster start --data DIR`. With --kfactor 1 or more every partition "
              + "has a replica on another node, so the cluster survives one node's death without losing a committed "
              + "transaction. The first start on DIR fixes the nodes, k-factor, sites and snapshot interval; later "
              + "starts keep them. A cluster already running on DIR is not started twice.",
          "With --sink every node captures provenance (the writes of application tables, the reads and every "
              + "function execution) into one JDBC sink that every node reaches (PostgreSQL or Vertica); each node "
              + "spills to a directory of its own under DIR/provenance-spill while the sink is away, and loads it "
              + "when it restarts. A DuckDB file is one process's, so it is refused for more than one node unless "
              + "the nodes load through one `apiary loader` (--loader), which also takes the loading's CPU off the "
              + "nodes."})
  static final class Start implements Callable<Integer> {
    @Option(names = "--nodes", paramLabel = "N", description = "Server processes (default 3); fixed by the first "
        + "start on DIR.")
    Integer nodes;

    @Option(names = "--kfactor", paramLabel = "K", description = "Replicas of each partition beyond the first, less "
        + "than N (default 1); fixed by the first start on DIR.")
    Integer kfactor;

    @Option(names = "--sites-per-host", paramLabel = "S", description = "Partitions per node (default 2; the cluster "
        + "has N * S / (K + 1) partitions); fixed by the first start on DIR.")
    Integer sitesPerHost;

    @Option(names = "--data", paramLabel = "DIR", defaultValue = DEFAULT_DIRECTORY,
        description = "The cluster's directory (default ./${DEFAULT-VALUE}; created if missing).")
    Path data;

    @Option(names = "--snapshot-interval-s", paramLabel = "S", description = "Seconds between automatic snapshots, "
        + "the most losing every node at once can lose (default " + DatabaseConfig.DEFAULT_SNAPSHOT_INTERVAL_SECONDS
        + "); fixed by the first start on DIR.")
    Long snapshotIntervalSeconds;

    @Option(names = "--journal", paramLabel = "MODE", description = "On the first start: none (the default: a crash "
        + "of every node at once loses what came after the last snapshot) or asynchronous (every node journals every "
        + "committed write and fsyncs at least every 100 ms, so such a crash loses at most that; checkpoints replace "
        + "the automatic snapshots) or synchronous (the same, and a reply waits until every node has it on disk, so "
        + "such a crash loses nothing acknowledged). Fixed by the first start on DIR.")
    String journal;

    @Option(names = "--secure", description = "VoltDB's security on (the default since issue 41: see --insecure), "
        + "kept for scripts that say so.")
    boolean secure;

    @Option(names = "--insecure", description = "On the first start: VoltDB's security off, so any process that "
        + "reaches a node's port may read and change everything, and no API key is made. Without it the first start "
        + "turns security on, with an administrator and a least-privileged frontends' user whose random passwords go "
        + "to DIR/" + ServiceDirectory.DATABASE_USERS + " (readable by you only), and the frontends' alone to DIR/"
        + ServiceDirectory.FRONTEND_DATABASE_USER + " (give that one to `apiary frontend --database-users`, the first "
        + "to the other commands), and creates the admin API key in DIR/" + ServiceDirectory.ADMIN_KEY
        + " (printed once; give it to `invoke --credential-file`). Fixed by the first start on DIR.")
    boolean insecure;

    @Option(names = "--sink", paramLabel = "JDBC-URL", description = "On the first start: capture provenance on "
        + "every node into this sink (jdbc:postgresql://..., jdbc:vertica://...; jdbc:duckdb:FILE for one node "
        + "only). Fixed by the first start on DIR.")
    String sink;

    @Option(names = "--sink-user", paramLabel = "USER", description = "The sink's user (with --sink).")
    String sinkUser;

    @Option(names = "--sink-password-file", paramLabel = "FILE", description = "A file whose first line is the "
        + "sink user's password (with --sink; never on the command line, where other users could read it).")
    Path sinkPasswordFile;

    @Option(names = "--loader", paramLabel = "HOST:PORT", description = "With --sink, on the first start: the nodes "
        + "send their capture to the provenance loader at HOST:PORT (`apiary loader --sink URL --listen HOST:PORT`, "
        + "started first, on any host), which loads it into the sink, instead of loading it themselves. The sink's "
        + "user and password then go to the loader, not here; a DuckDB sink may then serve several nodes.")
    String loader;

    @Option(names = "--loader-secret-file", paramLabel = "FILE", description = "With --loader: a file whose first "
        + "line is the secret the loader was started with (`apiary loader --secret-file`); the nodes present it.")
    Path loaderSecretFile;

    @Option(names = "--durable-capture", description = "With --sink: every function execution's provenance is "
        + "forced to the node's disk before it commits, so a node's crash loses none of it (a disk flush per "
        + "execution).")
    boolean durableCapture;

    @Option(names = "--timeout-s", paramLabel = "S", defaultValue = "120",
        description = "Seconds to wait for every node to accept clients (default ${DEFAULT-VALUE}); the servers are "
            + "killed if they are not ready by then.")
    long timeoutSeconds;

    private final PrintStream out = System.out;

    @Override
    public Integer call() {
      if (timeoutSeconds < 1) {
        throw new CliException("--timeout-s must be at least 1, not " + timeoutSeconds, 2, null);
      }
      ClusterDirectory dir = new ClusterDirectory(data);
      FileLock lock = dir.lock().orElseThrow(() -> new CliException("another `apiary cluster start` or `apiary "
          + "cluster stop` is under way on " + dir.root() + ": wait for it to finish"));
      try {
        Optional<ClusterDirectory.State> running = dir.readState();
        if (running.isPresent() && !running.get().alive().isEmpty()
            && running.get().alive().size() < running.get().nodes().size()) {
          return rejoin(dir, running.get());
        }
        refuseIfRunning(dir);
        if (secure && insecure) {
          throw new CliException("give --secure or --insecure, not both", 2, null);
        }
        boolean firstStart = dir.readSettings().isEmpty();
        ClusterDirectory.Settings settings = settings(dir);
        if (!insecure && firstStart) {
          org.apiary.database.DatabaseUsers.generate().writeTo(dir.databaseUsers());
        } else if (secure && dir.readDatabaseUsers().isEmpty()) {
          throw new CliException("the cluster in " + dir.root() + " was first started with --insecure, and VoltDB "
              + "keeps its users in its node roots: start it without --secure, or use a new directory");
        } else if (insecure && !firstStart && dir.readDatabaseUsers().isPresent()) {
          throw new CliException("the cluster in " + dir.root() + " was first started secure, and VoltDB keeps its "
              + "users in its node roots: start it without --insecure, or use a new directory", 2, null);
        }
        java.util.Optional<org.apiary.database.DatabaseUsers> users = dir.readDatabaseUsers();
        if (users.isPresent() && !java.nio.file.Files.exists(dir.frontendDatabaseUser())) {
          users.get().writeFrontendTo(dir.frontendDatabaseUser()); // frontends need not hold the admin's password
        }
        ClusterConfig config = ClusterConfig.of(settings.nodes(), settings.sitesPerHost(), settings.kfactor())
            .withProvenance(firstStart ? provenance(settings) : null)
            .withUsers(users.orElse(null))
            .withDataDirectory(dir.root())
            .withSnapshotInterval(Duration.ofSeconds(settings.snapshotIntervalSeconds()))
            .withStartTimeout(Duration.ofSeconds(timeoutSeconds))
            .withJournal(settings.journalMode());
        out.println("apiary cluster: starting " + settings.nodes() + " VoltDB node(s) in " + dir.root() + " (k-factor "
            + settings.kfactor() + ", " + settings.sitesPerHost() + " sites per node, "
            + (settings.journalMode() == JournalMode.NONE ? "a snapshot" : "journaled, a checkpoint") + " every "
            + settings.snapshotIntervalSeconds() + " s; provenance " + (settings.provenance() == null
            ? "not captured" : "captured into " + settings.provenance()
            + (firstStart && loader != null ? " through the loader at " + loader : "")) + ")");
        out.flush();
        LocalCluster cluster;
        try {
          cluster = LocalCluster.start(config);
        } catch (DatabaseException e) {
          throw new CliException("the cluster in " + dir.root() + " did not start (every node it started is killed; "
              + "their logs are " + dir.root() + "/nodeN.log): " + e.getMessage(), e);
        }
        try (org.apiary.database.ApiaryDatabase admin = org.apiary.database.ApiaryDatabase.open(cluster.config())) {
          // Apiary's system tables, as the administrator: frontends (perhaps least privileged) may start at once.
          org.apiary.runtime.SystemSchema.ensure(admin);
          if (users.isPresent()) {
            ensureAdminKey(admin, dir);
          }
        } catch (DatabaseException e) {
          cluster.close();
          throw new CliException("the cluster in " + dir.root() + " started, but Apiary's system tables could not be "
              + "created (" + e.getMessage() + "); it was stopped again", e);
        }
        ClusterDirectory.State state = state(dir, cluster, settings);
        try {
          dir.writeState(state);
        } catch (RuntimeException e) {
          cluster.close(); // nobody could find or stop the servers without the state file
          throw new CliException("could not write " + dir.stateFile() + " (" + e.getMessage() + "); the cluster was "
              + "stopped again", e);
        }
        // The servers are separate processes: they outlive this JVM, which neither closes nor kills them.
        out.println("apiary cluster: ready: " + settings.nodes() + " node(s), data in " + dir.root());
        for (ClusterDirectory.Node n : state.nodes()) {
          out.println("  node " + n.index() + ": pid " + n.pid() + ", client " + n.clientAddress() + ", log "
              + n.log());
        }
        out.println("  --database " + state.database());
        String login = users.isPresent() ? " --database-users " + dir.frontendDatabaseUser() : "";
        if (users.isPresent()) {
          out.println("  VoltDB's security is on: users and passwords in " + dir.databaseUsers() + " (for deploy, "
              + "status, executions, credentials), the frontends' alone in " + dir.frontendDatabaseUser()
              + "; the admin API key in " + dir.adminKey() + " (invoke --credential-file)");
        } else {
          out.println("  VoltDB's security is OFF (first started with --insecure): any process that reaches a "
              + "node's port may read and change everything");
        }
        out.println("  run a frontend with: apiary frontend --database " + state.database() + login);
        out.println("  stop with: apiary cluster stop --data " + dir.root());
        out.flush();
        return 0;
      } finally {
        ClusterDirectory.release(lock);
      }
    }

    /**
     * A cluster that runs with some of its nodes dead: each dead node's server is started again and rejoins the live
     * ones (VoltDB's rejoin), restoring the k-factor without stopping the survivors; the state file then names the
     * new processes.
     */
    private int rejoin(ClusterDirectory dir, ClusterDirectory.State state) {
      ClusterDirectory.Settings settings = dir.readSettings().orElseThrow(() -> new CliException(dir.root()
          + " has a running cluster's state but no " + ClusterDirectory.SETTINGS + ": cannot tell how it was started"));
      if (nodes != null || kfactor != null || sitesPerHost != null || snapshotIntervalSeconds != null || sink != null
          || secure || insecure || journal != null) {
        throw new CliException("the cluster in " + dir.root() + " runs with node(s) down: `cluster start --data "
            + dir.root() + "` alone starts them again (they rejoin); it takes no other option", 2, null);
      }
      List<ClusterDirectory.Node> alive = state.alive();
      if (alive.stream().anyMatch(n -> n.internalAddress() == null)) {
        throw new CliException("the cluster in " + dir.root() + " was started by a release that did not record its "
            + "nodes' internal addresses, so a node cannot rejoin it: stop it with `apiary cluster stop --data "
            + dir.root() + "` and start it again");
      }
      List<String> mesh = alive.stream().map(ClusterDirectory.Node::internalAddress).toList();
      ClusterConfig config = ClusterConfig.of(settings.nodes(), settings.sitesPerHost(), settings.kfactor())
          .withUsers(dir.readDatabaseUsers().orElse(null))
          .withDataDirectory(dir.root())
          .withSnapshotInterval(Duration.ofSeconds(settings.snapshotIntervalSeconds()))
          .withStartTimeout(Duration.ofSeconds(timeoutSeconds));
      List<ClusterDirectory.Node> nodesNow = new ArrayList<>(state.nodes());
      for (int i = 0; i < nodesNow.size(); i++) {
        ClusterDirectory.Node n = nodesNow.get(i);
        if (n.process().isPresent()) {
          continue;
        }
        out.println("apiary cluster: node " + n.index() + " (pid " + n.pid() + ") is not running; starting it again "
            + "to rejoin the " + alive.size() + " live node(s)");
        out.flush();
        LocalCluster.Node rejoined;
        try {
          rejoined = LocalCluster.rejoin(config.withJournal(settings.journalMode()), n.index(), mesh);
        } catch (UnsupportedOperationException e) {
          throw new CliException("node " + n.index() + " of the cluster in " + dir.root() + " cannot rejoin: "
              + e.getMessage() + " (`apiary cluster stop --data " + dir.root() + "`, then `apiary cluster start --data "
              + dir.root() + "`)", e);
        } catch (DatabaseException e) {
          throw new CliException("node " + n.index() + " did not rejoin the cluster in " + dir.root() + " (the live "
              + "nodes run on; its log is " + n.log() + "): " + e.getMessage(), e);
        }
        nodesNow.set(i, node(rejoined));
        // Written after each node, so a later failure leaves the state of the nodes that did rejoin.
        dir.writeState(new ClusterDirectory.State(state.dataDirectory(), List.copyOf(nodesNow), String.join(",",
            nodesNow.stream().map(ClusterDirectory.Node::clientAddress).toList()), state.kfactor(),
            state.sitesPerHost(), state.startedAt()));
        out.println("apiary cluster: node " + n.index() + " rejoined: pid " + rejoined.pid() + ", client "
            + rejoined.clientAddress());
      }
      ClusterDirectory.State now = dir.readState().orElseThrow();
      out.println("apiary cluster: " + now.alive().size() + " of " + now.nodes().size() + " node(s) running");
      out.println("  --database " + now.database());
      out.flush();
      return 0;
    }

    /**
     * On a secure cluster's first start (no live key in the database), creates the admin API key, prints it once and
     * keeps it in {@code DIR/}{@value ServiceDirectory#ADMIN_KEY}, readable by its owner only, as {@code apiary start}
     * does: frontends require keys by default, so a cluster needs one to be called at all.
     */
    private void ensureAdminKey(org.apiary.database.ApiaryDatabase admin, ClusterDirectory dir) {
      if (org.apiary.frontend.Credentials.list(admin).stream().anyMatch(c -> !c.revoked())) {
        return;
      }
      org.apiary.frontend.Credentials.Issued key = org.apiary.frontend.Credentials.create(admin, "admin",
          java.util.Set.of(org.apiary.frontend.Credentials.ADMIN_ROLE));
      java.nio.file.Path file = dir.adminKey();
      try {
        org.apiary.database.OwnerOnlyFile.write(file, key.apiKey() + "\n");
      } catch (java.io.IOException e) {
        throw new CliException("could not keep the admin API key in " + file + ": " + e.getMessage(), e);
      }
      out.println("apiary cluster: created the admin API key (shown only now; also kept in " + file + ", readable by "
          + "you only): " + key.apiKey());
    }

    private static void refuseIfRunning(ClusterDirectory dir) {
      Optional<ClusterDirectory.State> previous = dir.readState();
      if (previous.isEmpty()) {
        return;
      }
      List<ClusterDirectory.Node> alive = previous.get().alive();
      if (!alive.isEmpty()) {
        throw new CliException(dir.root() + " is in use by a running cluster (pids " + String.join(", ",
            alive.stream().map(n -> String.valueOf(n.pid())).toList()) + ", --database " + previous.get().database()
            + "): one cluster runs on a directory at a time. Stop it first with: apiary cluster stop --data "
            + dir.root());
      }
      System.err.println("apiary cluster: the cluster that last ran in " + dir.root() + " (pids " + previous.get().pids()
          + ") ended without `apiary cluster stop` (killed or crashed): starting from its newest automatic snapshot");
      dir.deleteState();
    }

    /** The mode {@code --journal} names (none if not given). */
    private JournalMode journalMode() {
      JournalMode mode;
      try {
        mode = journal == null ? JournalMode.NONE : JournalMode.parse(journal);
      } catch (IllegalArgumentException e) {
        throw new CliException("--journal: " + e.getMessage(), 2, null);
      }
      return mode;
    }

    private ClusterDirectory.Settings settings(ClusterDirectory dir) {
      Optional<ClusterDirectory.Settings> existing = dir.readSettings();
      if (existing.isPresent()) {
        ClusterDirectory.Settings s = existing.get();
        same("--nodes", nodes, s.nodes(), dir);
        same("--kfactor", kfactor, s.kfactor(), dir);
        same("--sites-per-host", sitesPerHost, s.sitesPerHost(), dir);
        same("--snapshot-interval-s", snapshotIntervalSeconds, s.snapshotIntervalSeconds(), dir);
        if (journal != null && journalMode() != s.journalMode()) {
          throw new CliException(dir.root() + " holds a cluster first started with journal "
              + s.journalMode().name().toLowerCase(java.util.Locale.ROOT) + ": start it without --journal, or use a "
              + "new directory", 2, null);
        }
        if (sink != null && !sink.equals(s.provenance())) {
          throw new CliException(dir.root() + " holds a cluster first started with provenance " + (s.provenance()
              == null ? "not captured" : "captured into " + s.provenance()) + ", and VoltDB keeps that in its node "
              + "roots: start it without --sink, or use a new directory");
        }
        return s;
      }
      if (sink == null && (sinkUser != null || sinkPasswordFile != null || durableCapture || loader != null)) {
        throw new CliException("--sink-user, --sink-password-file, --durable-capture and --loader go with --sink", 2,
            null);
      }
      if (loader == null && loaderSecretFile != null) {
        throw new CliException("--loader-secret-file goes with --loader", 2, null);
      }
      if (loader != null && (sinkUser != null || sinkPasswordFile != null)) {
        throw new CliException("with --loader the nodes never connect to the sink: give --sink-user and "
            + "--sink-password-file to `apiary loader`", 2, null);
      }
      if (loader != null) {
        try {
          org.apiary.provenance.loader.LoaderProtocol.parseAddress(loader);
        } catch (IllegalArgumentException e) {
          throw new CliException("--loader: " + e.getMessage(), 2, e);
        }
      }
      if (sink != null && !sink.startsWith("jdbc:")) {
        throw new CliException("--sink takes a JDBC URL (jdbc:postgresql://HOST:PORT/DB, jdbc:vertica://..., "
            + "jdbc:duckdb:FILE), not " + sink, 2, null);
      }
      ClusterDirectory.Settings s = new ClusterDirectory.Settings(nodes == null ? 3 : nodes,
          kfactor == null ? 1 : kfactor, sitesPerHost == null ? 2 : sitesPerHost,
          snapshotIntervalSeconds == null ? DatabaseConfig.DEFAULT_SNAPSHOT_INTERVAL_SECONDS : snapshotIntervalSeconds,
          sink, journalMode().name().toLowerCase(java.util.Locale.ROOT));
      if (sink != null && sink.startsWith("jdbc:duckdb:") && s.nodes() > 1 && loader == null) {
        throw new CliException("a DuckDB file is one process's, and every node of a cluster loads into the sink: "
            + "give --sink a PostgreSQL or Vertica URL for " + s.nodes() + " nodes, or load through one "
            + "`apiary loader` (--loader)", 2, null);
      }
      if (s.nodes() < 1 || s.sitesPerHost() < 1 || s.kfactor() < 0 || s.kfactor() >= s.nodes()) {
        throw new CliException("need --nodes >= 1, --sites-per-host >= 1 and 0 <= --kfactor < --nodes, not --nodes "
            + s.nodes() + " --kfactor " + s.kfactor() + " --sites-per-host " + s.sitesPerHost(), 2, null);
      }
      if (s.snapshotIntervalSeconds() < 1) {
        throw new CliException("--snapshot-interval-s must be at least 1, not " + s.snapshotIntervalSeconds(), 2, null);
      }
      dir.writeSettings(s);
      return s;
    }

    /** The provenance every node captures, as the first start configures it into the nodes' deployment. */
    private ProvenanceConfig provenance(ClusterDirectory.Settings settings) {
      if (settings.provenance() == null) {
        return null;
      }
      String password = null;
      if (sinkPasswordFile != null) {
        try {
          password = java.nio.file.Files.readAllLines(sinkPasswordFile).stream().findFirst().orElse("");
        } catch (java.io.IOException e) {
          throw new CliException("cannot read --sink-password-file " + sinkPasswordFile + ": " + e.getMessage(), 2,
              e);
        }
      }
      return ProvenanceConfig.sink(settings.provenance()).withCredentials(sinkUser, password)
          .withDurableCapture(durableCapture).withLoader(loader)
          .withLoaderSecret(loaderSecretFile == null ? null : LoaderCommand.firstLine(loaderSecretFile,
              "--loader-secret-file"));
    }

    private static void same(String option, Number given, long kept, ClusterDirectory dir) {
      if (given != null && given.longValue() != kept) {
        throw new CliException(dir.root() + " holds a cluster first started with " + option + " " + kept
            + ", and VoltDB keeps that in its node roots: start it without " + option + " (or with " + option + " "
            + kept + "), or use a new directory");
      }
    }

    private static ClusterDirectory.Node node(LocalCluster.Node n) {
      return new ClusterDirectory.Node(n.index(), n.pid(), n.clientAddress(), n.adminAddress(), n.root().toString(),
          n.log().toString(), ClusterDirectory.Node.startOf(n.pid()), n.internalAddress());
    }

    private static ClusterDirectory.State state(ClusterDirectory dir, LocalCluster cluster,
                                                ClusterDirectory.Settings settings) {
      List<ClusterDirectory.Node> nodes = new ArrayList<>();
      for (LocalCluster.Node n : cluster.nodes()) {
        nodes.add(node(n));
      }
      return new ClusterDirectory.State(dir.root().toString(), nodes, String.join(",", cluster.clientAddresses()),
          settings.kfactor(), settings.sitesPerHost(), Instant.now().toString());
    }
  }

  /** Stops every server of the cluster in a directory: a clean stop with its snapshot, then SIGTERM, then SIGKILL. */
  @Command(name = "stop", mixinStandardHelpOptions = true,
      description = {"Stop every server of the cluster `apiary cluster start --data DIR` started: pause it, save a "
          + "snapshot with every committed transaction, shut the nodes down and wait for them to exit. Nodes still "
          + "running after --timeout-s get SIGTERM, and SIGKILL " + Stop.TERM_WAIT_S + " s later. The next "
          + "`apiary cluster start --data DIR` restores the snapshot.",
          "Exit code 0 once every node has exited after a clean stop; 1 if no node ran there, the snapshot failed "
              + "(the next start restores the newest automatic snapshot) or a node had to be killed."})
  static final class Stop implements Callable<Integer> {
    static final long TERM_WAIT_S = 15;
    static final long KILL_WAIT_S = 10;

    @Option(names = "--data", paramLabel = "DIR", defaultValue = DEFAULT_DIRECTORY,
        description = "The cluster's directory (default ./${DEFAULT-VALUE}).")
    Path data;

    @Option(names = "--timeout-s", defaultValue = "60", paramLabel = "S",
        description = "Seconds for the clean stop: the snapshot and the nodes' exit (default ${DEFAULT-VALUE}).")
    long timeoutSeconds;

    private final PrintStream out = System.out;
    private final PrintStream err = System.err;

    @Override
    public Integer call() throws InterruptedException {
      if (timeoutSeconds < 1) {
        throw new CliException("--timeout-s must be at least 1, not " + timeoutSeconds, 2, null);
      }
      ClusterDirectory dir = new ClusterDirectory(data);
      if (!Files.isDirectory(dir.root())) {
        throw new CliException(dir.root() + " does not exist: no cluster runs there (start one with: apiary cluster "
            + "start --data " + dir.root() + ")");
      }
      FileLock lock = dir.lock().orElseThrow(() -> new CliException("another `apiary cluster start` or `apiary "
          + "cluster stop` is under way on " + dir.root() + ": wait for it to finish, then try again"));
      try {
        return stop(dir);
      } finally {
        ClusterDirectory.release(lock);
      }
    }

    private int stop(ClusterDirectory dir) throws InterruptedException {
      ClusterDirectory.State state = dir.readState().orElseThrow(() -> new CliException("no cluster is running in "
          + dir.root() + " (it has no " + ClusterDirectory.STATE + "): start one with: apiary cluster start --data "
          + dir.root()));
      List<ClusterDirectory.Node> alive = state.alive();
      if (alive.isEmpty()) {
        dir.deleteState();
        throw new CliException("no node of the cluster in " + dir.root() + " is running (pids " + state.pids()
            + " have exited: killed or crashed); removed its stale " + ClusterDirectory.STATE + ". The next start "
            + "restores the newest automatic snapshot");
      }
      out.println("apiary cluster stop: stopping " + alive.size() + " of " + state.nodes().size() + " node(s) in "
          + dir.root() + " (pids " + String.join(", ", alive.stream().map(n -> String.valueOf(n.pid())).toList())
          + ")");
      out.flush();
      Duration timeout = Duration.ofSeconds(timeoutSeconds);
      long startedNanos = System.nanoTime();
      List<String> problems = new ArrayList<>();
      String nonce = null;
      boolean journaled = dir.readSettings().map(ClusterDirectory.Settings::journalMode)
          .orElse(JournalMode.NONE) != JournalMode.NONE;
      try {
        List<String> admins = alive.stream().map(ClusterDirectory.Node::adminAddress).toList();
        org.apiary.database.DatabaseLogin login = dir.readDatabaseUsers()
            .map(org.apiary.database.DatabaseUsers::admin).orElse(null);
        if (journaled) {
          LocalCluster.checkpointAndShutdown(admins, timeout, login);
          nonce = "";
          out.println("apiary cluster stop: took the last checkpoint in " + secondsSince(startedNanos)
              + "; the nodes are shutting down");
        } else {
          nonce = LocalCluster.snapshotAndShutdown(admins, timeout, login);
          out.println("apiary cluster stop: saved the stop snapshot " + nonce + " in " + secondsSince(startedNanos)
              + "; the nodes are shutting down");
        }
        out.flush();
      } catch (DatabaseException e) {
        problems.add("the clean stop failed (" + e.getMessage() + "); the next start restores the newest automatic "
            + "snapshot");
        err.println("apiary cluster stop: " + problems.get(0) + "; stopping the nodes with SIGTERM");
        err.flush();
      }
      List<ProcessHandle> processes = alive.stream().map(ClusterDirectory.Node::process).flatMap(Optional::stream)
          .toList();
      // --timeout-s bounds the whole clean stop: the snapshot and the exits.
      Duration exitWait = nonce == null ? Duration.ZERO
          : timeout.minusNanos(System.nanoTime() - startedNanos);
      long shutdownNanos = System.nanoTime();
      List<ProcessHandle> left = awaitExit(processes, exitWait.isNegative() ? Duration.ZERO : exitWait);
      if (nonce != null && left.isEmpty()) {
        out.println("apiary cluster stop: every node exited " + secondsSince(shutdownNanos) + " after the shutdown");
      }
      if (!left.isEmpty()) {
        if (nonce != null) {
          problems.add("pids " + pids(left) + " had not exited " + timeout.toSeconds() + " s after the stop began ("
              + secondsSince(shutdownNanos) + " after the shutdown)");
        }
        left.forEach(ProcessHandle::destroy);
        left = awaitExit(left, Duration.ofSeconds(TERM_WAIT_S));
      }
      if (!left.isEmpty()) {
        problems.add("pids " + pids(left) + " did not exit within " + TERM_WAIT_S + " s of SIGTERM and were killed "
            + "(SIGKILL)");
        left.forEach(ProcessHandle::destroyForcibly);
        left = awaitExit(left, Duration.ofSeconds(KILL_WAIT_S));
      }
      if (!left.isEmpty()) {
        throw new CliException("pids " + pids(left) + " of the cluster in " + dir.root() + " are still alive " + KILL_WAIT_S
            + " s after SIGKILL; " + String.join("; ", problems) + ". Check them with: ps -p " + pids(left));
      }
      List<ClusterDirectory.Node> stillRunning = state.alive();
      if (!stillRunning.isEmpty()) {
        throw new CliException("node process(es) " + String.join(", ", stillRunning.stream()
            .map(n -> String.valueOf(n.pid())).toList()) + " of the cluster in " + dir.root() + " are still alive");
      }
      dir.deleteState();
      if (nonce != null && !journaled) {
        for (ClusterDirectory.Node n : state.nodes()) {
          LocalCluster.keepOnlyStopSnapshot(Path.of(n.root()), nonce);
        }
      }
      if (!problems.isEmpty()) {
        throw new CliException("the cluster in " + dir.root() + " is stopped, no server process is left, but not "
            + "cleanly: " + String.join("; ", problems));
      }
      out.println("apiary cluster stop: stopped cleanly; no server process is left; the data is in " + dir.root()
          + " (start it again with: apiary cluster start --data " + dir.root() + ")");
      return 0;
    }

    /** Waits, at most {@code timeout} in all, for every process to exit; returns those still alive. */
    private static List<ProcessHandle> awaitExit(List<ProcessHandle> processes, Duration timeout)
        throws InterruptedException {
      long deadline = System.nanoTime() + timeout.toNanos();
      for (ProcessHandle p : processes) {
        CompletableFuture<ProcessHandle> exit = p.onExit();
        try {
          exit.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
          break; // the rest are checked below
        } catch (ExecutionException e) {
          throw new CliException("waiting for pid " + p.pid() + " to exit failed: " + e.getCause().getMessage(), e);
        }
      }
      return processes.stream().filter(ProcessHandle::isAlive).toList();
    }

    private static String secondsSince(long startNanos) {
      return String.format(java.util.Locale.ROOT, "%.1f s", (System.nanoTime() - startNanos) / 1e9);
    }

    private static String pids(List<ProcessHandle> processes) {
      return String.join(",", processes.stream().map(p -> String.valueOf(p.pid())).toList());
    }
  }
}
