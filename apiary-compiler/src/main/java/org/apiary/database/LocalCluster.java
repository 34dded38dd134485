package org.apiary.database;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apiary.DatabaseException;

/**
 * A VoltDB cluster of separate server processes on this machine, on loopback: the path from the embedded default
 * to a real multi-node deployment, and what failure tests kill. Each node is a {@code java org.voltdb.VoltDB}
 * process with its own root directory and ports; with {@code kfactor} 1 every partition has a replica on another
 * node, so the cluster survives one node's death.
 *
 * <p>The server processes run with this JVM's classpath (so Apiary's runtime and Jackson are available to the
 * procedures) and the JVM flags VoltDB needs on Java 17.
 */
public final class LocalCluster implements AutoCloseable {
  /** JVM flags VoltDB needs on Java 17; without them its network layer fails. */
  public static final List<String> VOLTDB_JVM_FLAGS = List.of(
      "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens", "java.base/java.nio=ALL-UNNAMED",
      "--add-opens", "java.base/java.lang=ALL-UNNAMED", "--add-opens", "java.base/java.util=ALL-UNNAMED",
      "--add-opens", "java.base/java.io=ALL-UNNAMED",
      "--add-opens", "java.base/java.net=ALL-UNNAMED", "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
      "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
      // VoltDB installs Apache Felix's URL handler factory JVM-wide, which cannot reach the JDK's own handlers
      // without these: new URL("http://...") fails with "unknown protocol" in a process that embeds VoltDB.
      "--add-opens", "java.base/sun.net.www.protocol.http=ALL-UNNAMED",
      "--add-opens", "java.base/sun.net.www.protocol.https=ALL-UNNAMED");

  /** One server process. */
  public static final class Node {
    private final int index;
    private final int clientPort;
    private final int adminPort;
    private final int internalPort;
    private final Path root;
    private final Path log;
    private Process process;

    Node(int index, int clientPort, int adminPort, int internalPort, Path root, Path log) {
      this.index = index;
      this.clientPort = clientPort;
      this.adminPort = adminPort;
      this.internalPort = internalPort;
      this.root = root;
      this.log = log;
    }

    /** Where the other nodes reach this one ({@code 127.0.0.1:port}): a node that rejoins meshes with it. */
    public String internalAddress() {
      return "127.0.0.1:" + internalPort;
    }

    public int index() {
      return index;
    }

    public String clientAddress() {
      return "127.0.0.1:" + clientPort;
    }

    public boolean isAlive() {
      return process != null && process.isAlive();
    }

    /** Kills the node with SIGKILL, as a crash would, and waits for it to die. */
    public void kill() throws InterruptedException {
      if (process != null) {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
      }
    }

    public Path log() {
      return log;
    }

    /** The server process's ID, or -1 if it was not started. */
    public long pid() {
      return process == null ? -1 : process.pid();
    }

    /** The admin address, {@code 127.0.0.1:port}: where a clean stop pauses, snapshots and shuts the node down. */
    public String adminAddress() {
      return "127.0.0.1:" + adminPort;
    }

    /** The node's root directory (its {@code voltdbroot/} and snapshots). */
    public Path root() {
      return root;
    }
  }

  private final Path directory;
  private final List<Node> nodes;
  private final ClusterConfig config;
  /** The cluster's journal, once recovery opened the cluster; {@code null} for a cluster without one. */
  private ClusterJournal journal;

  private LocalCluster(Path directory, List<Node> nodes, ClusterConfig config) {
    this.directory = directory;
    this.nodes = nodes;
    this.config = config;
  }

  /**
   * Starts a cluster in a temporary directory and waits until every node accepts clients.
   *
   * @param hosts number of server processes
   * @param sitesPerHost partitions per process
   * @param kfactor replicas of each partition beyond the first (0 or 1 here)
   * @param timeout how long to wait for the cluster to come up
   * @throws DatabaseException with the tail of the failing node's log if it does not start
   */
  public static LocalCluster start(int hosts, int sitesPerHost, int kfactor, Duration timeout) {
    return start(hosts, sitesPerHost, kfactor, null, timeout);
  }

  /**
   * Starts a cluster whose servers capture provenance into {@code provenance}'s sink (each server runs Apiary's
   * export connector and spooler); {@code null} for none.
   */
  public static LocalCluster start(int hosts, int sitesPerHost, int kfactor, ProvenanceConfig provenance,
                                   Duration timeout) {
    return start(ClusterConfig.of(hosts, sitesPerHost, kfactor).withProvenance(provenance).withStartTimeout(timeout));
  }

  /**
   * Starts a cluster as {@code config} says and waits until every node accepts clients. With a data directory that
   * an earlier cluster left, the nodes start on their existing roots and VoltDB restores the newest complete
   * snapshot before accepting clients.
   *
   * @throws DatabaseException with the tail of the failing node's log if it does not start, or if the data
   *     directory holds a cluster of another size
   */
  public static LocalCluster start(ClusterConfig config) {
    try {
      return startOnce(config);
    } catch (NodeExited e) {
      // Ports are picked free and then handed to the servers, so another process may bind one in between.
      System.getLogger(LocalCluster.class.getName()).log(System.Logger.Level.WARNING, "a VoltDB node exited while "
          + "the cluster started; starting it again on new ports: " + e.failure.getMessage());
      try {
        return startOnce(config);
      } catch (NodeExited again) {
        throw again.failure;
      }
    }
  }

  /** The cluster did not start because a node process exited (for example, a port it was given was taken). */
  private static final class NodeExited extends RuntimeException {
    final DatabaseException failure;

    NodeExited(DatabaseException failure) {
      super(failure.getMessage(), failure, false, false);
      this.failure = failure;
    }
  }

  private static LocalCluster startOnce(ClusterConfig config) {
    int hosts = config.hosts();
    if (config.isJournaled() && !config.isDurable()) {
      throw new IllegalArgumentException("a journaled cluster needs a data directory");
    }
    Path dir;
    boolean initialized;
    try {
      dir = config.isDurable() ? config.dataDirectory().toAbsolutePath() : Files.createTempDirectory("apiary-cluster-");
      // Owner-only: the nodes' roots hold the deployment VoltDB copies (the users' passwords) and the snapshots.
      OwnerOnlyFile.createDirectory(dir);
      OwnerOnlyFile.restrictTree(dir);
      initialized = initializedNodes(dir, hosts);
      if (!initialized) {
        // A journaled cluster checkpoints itself; VoltDB's automatic snapshots would carry no checkpoint marker.
        Deployments.write(dir.resolve("deployment.xml"), Deployments.cluster(hosts, config.sitesPerHost(),
            config.kfactor(), config.provenance(), dir.resolve("provenance-spill"),
            config.isDurable() && !config.isJournaled() ? config.snapshotInterval() : null, config.users()));
      } else {
        checkJournalAsBefore(dir, config);
      }
    } catch (IOException e) {
      throw new DatabaseException("cannot prepare a directory for the cluster: " + e.getMessage(), e);
    }
    Duration timeout = config.startTimeout();
    // Every node's five ports at once, before any node starts: see freePorts.
    int[] ports = freePorts(5 * hosts);
    List<Node> nodes = new ArrayList<>();
    LocalCluster cluster = new LocalCluster(dir, nodes, config);
    try {
      for (int i = 0; i < hosts && !initialized; i++) {
        Path root = dir.resolve("node" + i);
        OwnerOnlyFile.createDirectory(root);
        run(List.of("initialize", "voltdbroot", root.toString(), "deployment",
            dir.resolve("deployment.xml").toString(), "force"), dir.resolve("node" + i + "-init.log"), timeout);
      }
      for (int i = 0; i < hosts; i++) {
        Node node = new Node(i, ports[5 * i + 1], ports[5 * i + 2], ports[5 * i], dir.resolve("node" + i),
            dir.resolve("node" + i + ".log"));
        List<String> args = new ArrayList<>(loopbackArguments(node, List.of("127.0.0.1:" + ports[0]), hosts,
            ports[5 * i + 3], ports[5 * i + 4]));
        if (config.isJournaled()) {
          args.add("paused"); // clients wait until the journals' replay is done
        }
        node.process = launch(args, node.log, config);
        nodes.add(node);
      }
      cluster.awaitReady(timeout);
      if (config.isJournaled()) {
        cluster.journal = ClusterJournal.recover(config, nodes.stream().map(Node::root).toList(),
            nodes.get(0).adminAddress(), DatabaseUsers.adminOf(config.users()));
      }
      OwnerOnlyFile.restrictTree(dir);
      return cluster;
    } catch (IOException | RuntimeException e) {
      String logs = nodes.stream().map(n -> "\n--- node " + n.index + " log tail:\n" + tail(n.log)).reduce("", String::concat);
      boolean exited = nodes.stream().anyMatch(n -> n.process != null && !n.process.isAlive());
      cluster.killAndClean();
      String message = "the VoltDB cluster did not start: " + e.getMessage() + logs;
      DatabaseException failure = new DatabaseException(message, e);
      throw exited ? new NodeExited(failure) : failure;
    }
  }

  /**
   * Refuses to start a cluster directory with a journal setting other than its first start's: without its journal
   * a journaled cluster would silently lose what its journals hold past the last checkpoint; with one, a cluster
   * whose deployment takes automatic snapshots would restore snapshots that name no checkpoint.
   */
  private static void checkJournalAsBefore(Path dir, ClusterConfig config) {
    for (int i = 0; i < config.hosts(); i++) {
      Path root = dir.resolve("node" + i);
      if (config.isJournaled()) {
        DatabaseJournal.checkNoAutomaticSnapshots(root);
      } else if (org.apiary.journal.JournalDirectory.holdsSegments(ClusterJournal.directoryOf(root))) {
        throw new DatabaseException(dir + " holds a journaled cluster (node " + i + " has a journal): start it with "
            + "its journal, or its journaled work since the last checkpoint would be lost");
      }
    }
  }

  /** {@code org.voltdb.VoltDB}'s arguments for a node on loopback that meshes with the nodes at {@code mesh}. */
  private static List<String> loopbackArguments(Node node, List<String> mesh, int hosts, int zkPort,
                                                int replicationPort) {
    return List.of("probe", "voltdbroot", node.root.toString(),
        "mesh", String.join(",", mesh), "hostcount", String.valueOf(hosts),
        "port", "127.0.0.1:" + node.clientPort, "adminport", "127.0.0.1:" + node.adminPort,
        "internalport", String.valueOf(node.internalPort), "internalinterface", "127.0.0.1",
        "externalinterface", "127.0.0.1", "zkport", "127.0.0.1:" + zkPort,
        // No "httpport": given one, VoltDB serves HTTP on every interface despite <httpd enabled="false"/>.
        "replicationport", String.valueOf(replicationPort));
  }

  /**
   * Starts node {@code index} of a running durable cluster again after it died: a server on new loopback ports,
   * on the node's own root, meshing with the live nodes at {@code liveInternalAddresses}. VoltDB then rejoins it
   * (Community Edition's blocking rejoin): the node takes copies of the partitions it held from their live replicas
   * and the cluster holds its k-factor again, without a stop. Waits until the node takes a client's login. A node of
   * a journaled cluster journals again from its first transaction after the rejoin, continuing the timeline the live
   * nodes write ({@link JournaledNode#startWritingForRejoin}).
   *
   * @param config the cluster's configuration (its data directory, hosts, users, journal and start timeout)
   * @param index the node to start, one that is not running
   * @param liveInternalAddresses the {@link Node#internalAddress() internal addresses} of nodes that run
   * @return the node, running
   * @throws DatabaseException with the tail of the node's log if it does not rejoin within the start timeout
   */
  public static Node rejoin(ClusterConfig config, int index, List<String> liveInternalAddresses) {
    if (!config.isDurable()) {
      throw new IllegalArgumentException("only a cluster with a data directory can have a node rejoin");
    }
    if (index < 0 || index >= config.hosts() || liveInternalAddresses.isEmpty()) {
      throw new IllegalArgumentException("node " + index + " of " + config.hosts() + " rejoining "
          + liveInternalAddresses);
    }
    Path dir = config.dataDirectory().toAbsolutePath();
    int[] ports = freePorts(5);
    Node node = new Node(index, ports[1], ports[2], ports[0], dir.resolve("node" + index),
        dir.resolve("node" + index + ".log"));
    if (!Snapshots.isInitialized(node.root)) {
      throw new DatabaseException(node.root + " holds no initialized VoltDB node: it cannot rejoin");
    }
    List<String> rejoinFlags = config.isJournaled()
        ? List.of("-D" + JournaledNode.REJOIN_TIMELINE_PROPERTY + "=" + Long.toHexString(writtenTimeline(dir, index,
            config.hosts())))
        : List.of();
    try {
      if (Files.exists(node.log)) { // what the node said before it died, kept beside the new log
        Files.move(node.log, node.log.resolveSibling(node.log.getFileName() + ".previous"),
            java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      }
      node.process = launch(loopbackArguments(node, liveInternalAddresses, config.hosts(), ports[3], ports[4]),
          node.log, config, rejoinFlags);
      Duration timeout = config.startTimeout();
      EmbeddedServer.awaitListening(node.clientPort, timeout, "VoltDB node " + index, node.process::isAlive);
      awaitLogin(node, System.nanoTime() + timeout.toNanos(), timeout, DatabaseUsers.adminOf(config.users()));
      return node;
    } catch (IOException | RuntimeException e) {
      try {
        node.kill();
      } catch (InterruptedException interrupted) {
        Thread.currentThread().interrupt();
      }
      throw new DatabaseException("VoltDB node " + index + " did not rejoin the cluster: " + e.getMessage()
          + "\n--- node " + index + " log tail:\n" + tail(node.log), e);
    }
  }

  /**
   * The timeline the running nodes of a journaled cluster write (a rejoining node continues it): each node keeps the
   * segments of the timeline it writes only, once recovery has opened the cluster.
   *
   * @throws DatabaseException if the other nodes' journals do not name one timeline (recovery has not finished)
   */
  private static long writtenTimeline(Path dir, int rejoining, int hosts) {
    java.util.Set<Long> timelines = new java.util.TreeSet<>();
    for (int i = 0; i < hosts; i++) {
      Path journal = ClusterJournal.directoryOf(dir.resolve("node" + i));
      if (i != rejoining && Files.isDirectory(journal)) {
        timelines.addAll(org.apiary.journal.JournalReader.scan(journal, true).keySet());
      }
    }
    if (timelines.size() != 1) {
      throw new DatabaseException("the running nodes' journals in " + dir + " do not name one timeline ("
          + timelines.size() + " found): the cluster has not finished its recovery; a node rejoins once it has");
    }
    return timelines.iterator().next();
  }

  /**
   * {@link #rejoin(ClusterConfig, int, List)} for a node of this cluster that died (killed by a test, say): it
   * replaces the dead node in {@link #nodes()}.
   */
  public Node rejoin(int index) {
    Node dead = nodes.get(index);
    if (dead.isAlive()) {
      throw new IllegalStateException("node " + index + " runs");
    }
    List<String> live = nodes.stream().filter(Node::isAlive).map(Node::internalAddress).toList();
    Node node = rejoin(config, index, live);
    nodes.set(index, node);
    return node;
  }

  /**
   * Whether {@code dir} holds an initialized cluster of {@code hosts} nodes (to be started as it is), or none (to
   * be initialized); anything else is refused rather than overwritten.
   */
  private static boolean initializedNodes(Path dir, int hosts) {
    int found = 0;
    while (Snapshots.isInitialized(dir.resolve("node" + found))) {
      found++;
    }
    if (found != 0 && found != hosts) {
      throw new DatabaseException(dir + " holds a cluster of " + found + " nodes, not the " + hosts
          + " configured: start it with " + found + " hosts, or use another directory");
    }
    return found == hosts;
  }

  /**
   * Waits until every node takes a client's login, not only a socket: a node restoring a snapshot may listen before
   * it accepts clients.
   */
  private void awaitReady(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    for (Node n : nodes) {
      EmbeddedServer.awaitListening(n.clientPort, timeout, "VoltDB node " + n.index, n.process::isAlive);
      awaitLogin(n, deadline, timeout, adminLogin());
    }
  }

  /** The administrator's login where the cluster's security is on, else {@code null}. */
  private DatabaseLogin adminLogin() {
    return DatabaseUsers.adminOf(config.users());
  }

  private static void awaitLogin(Node n, long deadline, Duration timeout, DatabaseLogin login) {
    Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
    try {
      ApiaryDatabase.connect(List.of(n.clientAddress()), left, Duration.ofSeconds(5), login).close();
    } catch (DatabaseException e) {
      throw new DatabaseException("VoltDB node " + n.index + " listened on port " + n.clientPort + " but did not "
          + "take a client's login within " + timeout + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DatabaseException("interrupted while waiting for VoltDB node " + n.index, e);
    }
  }

  /** Runs one {@code voltdb} command to completion in its own JVM, within {@code timeout}, its output in {@code log}. */
  static void run(List<String> voltArgs, Path log, Duration timeout) throws IOException {
    Process p = launch(voltArgs, log);
    try {
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        throw new DatabaseException("'voltdb " + voltArgs.get(0) + "' did not finish within " + timeout);
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new DatabaseException("interrupted during 'voltdb " + voltArgs.get(0) + "'", e);
    }
    if (p.exitValue() != 0) {
      throw new DatabaseException("'voltdb " + voltArgs.get(0) + "' failed with exit code " + p.exitValue() + ":\n" + tail(log));
    }
  }

  /**
   * Starts a VoltDB server process whose files are its owner's only: through {@code /bin/sh} with umask 077 where
   * there is one (a process inherits its umask, and Java cannot set a child's).
   */
  private static Process launch(List<String> voltArgs, Path log) throws IOException {
    return new ProcessBuilder(serverCommand(voltArgs, "1g")).redirectErrorStream(true).redirectOutput(log.toFile())
        .start();
  }

  /** {@link #launch(List, Path)} for a node of a cluster configured as {@code config} (journaled or not). */
  private static Process launch(List<String> voltArgs, Path log, ClusterConfig config) throws IOException {
    return launch(voltArgs, log, config, List.of());
  }

  /** As {@link #launch(List, Path, ClusterConfig)}, with {@code journalFlags} added to a journaled node's JVM's. */
  private static Process launch(List<String> voltArgs, Path log, ClusterConfig config, List<String> journalFlags)
      throws IOException {
    if (!config.isJournaled()) {
      return launch(voltArgs, log);
    }
    Path root = Path.of(voltArgs.get(voltArgs.indexOf("voltdbroot") + 1));
    List<String> cmd = serverCommand(voltArgs, "1g");
    int main = cmd.indexOf("org.voltdb.VoltDB");
    cmd.set(main, JournaledNode.class.getName());
    Path users = null;
    if (config.users() != null) {
      users = root.resolveSibling("cluster-users.properties");
      if (!Files.exists(users)) {
        config.users().writeTo(users); // owner-only: each node's checkpointer connects as the administrator
      }
    }
    List<String> flags = new ArrayList<>(ClusterJournal.nodeJvmFlags(root, config, users));
    flags.addAll(journalFlags);
    cmd.addAll(main, flags);
    return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
  }

  /**
   * The command that runs {@code org.voltdb.VoltDB} with {@code voltArgs}: this JVM's {@code java} and class path
   * (Apiary's runtime and Jackson for the procedures), {@link #VOLTDB_JVM_FLAGS} and {@code -Xmx} {@code maxHeap}
   * ({@code "1g"}, {@code "384m"}), through {@code /bin/sh} with umask 077 where there is one, so the server's files
   * are its owner's only. For a launcher that runs the server elsewhere (another network namespace: prefix the
   * command with {@code ip netns exec NAME}). Every server it starts runs on this machine, under this machine's one
   * clock: what VoltDB measures as clock skew between them when they join is only scheduling delay, which a loaded
   * machine pushed past VoltDB's 200-ms limit (a joining node exited with "Clock skew is 221 which is > than the 200
   * millisecond limit"), so the limit is raised to {@value #SAME_CLOCK_SKEW_LIMIT_MS} ms. Servers on hosts with
   * clocks of their own must keep VoltDB's limit.
   */
  public static List<String> serverCommand(List<String> voltArgs, String maxHeap) {
    List<String> cmd = new ArrayList<>();
    if (Files.isExecutable(Path.of("/bin/sh"))) {
      cmd.addAll(List.of("/bin/sh", "-c", "umask 077 && exec \"$0\" \"$@\""));
    }
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(VOLTDB_JVM_FLAGS);
    cmd.add("-DMAX_CLOCKSKEW=" + SAME_CLOCK_SKEW_LIMIT_MS);
    cmd.add("-Xmx" + maxHeap);
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add("org.voltdb.VoltDB");
    cmd.addAll(voltArgs);
    return cmd;
  }

  /** The join's clock-skew limit for servers that share this machine's clock (VoltDB's {@code MAX_CLOCKSKEW}). */
  static final int SAME_CLOCK_SKEW_LIMIT_MS = 2_000;

  /** VoltDB's default client port; a node on a host of its own listens on it at its host's address. */
  public static final int CLIENT_PORT = 21212;
  /** VoltDB's default admin port (system procedures such as {@code @Pause}, {@code @Shutdown}). */
  public static final int ADMIN_PORT = 21211;
  /** VoltDB's default internal port: the nodes' mesh, and where a starting node finds the leader. */
  public static final int INTERNAL_PORT = 3021;
  /** VoltDB's default ZooKeeper port (the node's own agreement service). */
  public static final int ZOOKEEPER_PORT = 7181;
  /** VoltDB's default replication port (database replication; Community Edition does not use it). */
  public static final int REPLICATION_PORT = 5555;

  /**
   * The arguments of {@code org.voltdb.VoltDB} that start one node of a cluster whose hosts have addresses of their
   * own, every listener on {@code address} and nothing on another interface: what VoltDB 9.3's
   * {@code voltdb start --dir ROOT --host LEADER --count N --internalinterface ADDRESS --externalinterface ADDRESS
   * --publicinterface ADDRESS} passes, with VoltDB's default ports ({@link #CLIENT_PORT}, {@link #ADMIN_PORT},
   * {@link #INTERNAL_PORT}, {@link #ZOOKEEPER_PORT}, {@link #REPLICATION_PORT}) on {@code address}. No HTTP port
   * (given one, VoltDB serves HTTP on every interface despite {@code <httpd enabled="false"/>}).
   *
   * @param root the node's root, initialized with {@link #initialize(Path, Path, Path, Duration)}
   * @param leader the address of the host every node meshes with (VoltDB's {@code --host}), the same on every node;
   *     its {@link #INTERNAL_PORT} is implied
   * @param hostCount the cluster's hosts (VoltDB's {@code --count}), as in the deployment
   * @param address this host's own address: the one the other nodes, the frontends and the clients reach it at
   */
  public static List<String> hostArguments(Path root, String leader, int hostCount, String address) {
    if (hostCount < 1) {
      throw new IllegalArgumentException("hostCount must be at least 1, not " + hostCount);
    }
    return List.of("probe", "voltdbroot", root.toString(),
        "mesh", leader + ":" + INTERNAL_PORT, "hostcount", String.valueOf(hostCount),
        "internalinterface", address, "externalinterface", address, "publicinterface", address,
        "port", address + ":" + CLIENT_PORT, "adminport", address + ":" + ADMIN_PORT,
        "internalport", String.valueOf(INTERNAL_PORT), "zkport", address + ":" + ZOOKEEPER_PORT,
        "replicationport", String.valueOf(REPLICATION_PORT));
  }

  /**
   * Initializes a node's root with {@code deployment} ({@code voltdb init --dir ROOT --config DEPLOYMENT --force}),
   * within {@code timeout}, its output in {@code log}; the same deployment on every node of a cluster
   * ({@link Deployments#cluster}). Touches no network.
   *
   * @throws DatabaseException with the log's tail if it fails or takes longer
   */
  public static void initialize(Path root, Path deployment, Path log, Duration timeout) {
    try {
      OwnerOnlyFile.createDirectory(root);
      run(List.of("initialize", "voltdbroot", root.toString(), "deployment", deployment.toString(), "force"), log,
          timeout);
    } catch (IOException e) {
      throw new DatabaseException("cannot initialize " + root + ": " + e.getMessage(), e);
    }
  }

  private static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 25), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  public List<Node> nodes() {
    return java.util.Collections.unmodifiableList(nodes);
  }

  /** Client addresses of every node. */
  public List<String> clientAddresses() {
    return nodes.stream().map(Node::clientAddress).toList();
  }

  /** A configuration that connects to this cluster (as its administrator where its security is on). */
  public DatabaseConfig config() {
    return DatabaseConfig.external(clientAddresses().toArray(String[]::new)).withProvenance(config.provenance())
        .withLogin(adminLogin());
  }

  /** The cluster's journal ({@code null} if it has none), for tests. */
  ClusterJournal journal() {
    return journal;
  }

  /** What this cluster was started with. */
  public ClusterConfig clusterConfig() {
    return config;
  }

  /**
   * Stops the cluster. With a data directory the stop is clean: client writes are paused, a snapshot with every
   * committed transaction is saved on every node, and the servers shut down (the next start on the directory
   * restores that snapshot); nodes already dead are left as they are, and if none is alive nothing is saved (the
   * next start restores the newest automatic snapshot). Without one, every node is killed and the directory deleted.
   *
   * @throws DatabaseException if the stop snapshot or the shutdown failed; every node is stopped all the same
   */
  @Override
  public void close() {
    if (!config.isDurable() || nodes.stream().noneMatch(Node::isAlive)) {
      killAndClean();
      return;
    }
    try {
      stopCleanly();
    } finally {
      killAndClean();
    }
  }

  private void stopCleanly() {
    List<String> alive = nodes.stream().filter(Node::isAlive).map(n -> "127.0.0.1:" + n.adminPort).toList();
    Duration timeout = config.startTimeout();
    if (journal != null) {
      // A last checkpoint holds everything; a stop snapshot besides it would name no checkpoint.
      try {
        journal.checkpointForStop();
      } finally {
        journal.close();
        journal = null;
      }
      Snapshots.shutdown(alive, timeout, adminLogin());
      awaitExit(timeout);
      return;
    }
    String nonce = Snapshots.saveForStop(alive, timeout, timeout, true, adminLogin());
    awaitExit(timeout);
    for (Node n : nodes) {
      Snapshots.deleteOtherStopSnapshots(Snapshots.snapshotDirectory(n.root), nonce);
    }
  }

  private void awaitExit(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    for (Node n : nodes) {
      if (n.process == null) {
        continue;
      }
      try {
        if (!n.process.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
          throw new DatabaseException("VoltDB node " + n.index + " did not exit within " + timeout
              + " of @Shutdown; it is killed");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new DatabaseException("interrupted while waiting for the cluster to shut down", e);
      }
    }
  }

  /**
   * The clean stop of a durable cluster whose server processes this JVM may not have started (another process ran
   * {@link #start(ClusterConfig)} and left them running): pauses client writes, saves a snapshot with every committed
   * transaction on every node and asks the servers to shut down, without waiting for them to exit. Once they have
   * exited, call {@link #keepOnlyStopSnapshot(Path, String)} for each node's root.
   *
   * @param adminAddresses the live nodes' {@link Node#adminAddress() admin addresses}
   * @param timeout how long to wait to connect, and for each call (the snapshot is one)
   * @param login the administrator's login where the cluster's security is on, else {@code null}
   * @return the stop snapshot's nonce
   * @throws DatabaseException if the nodes cannot be reached or paused, or the snapshot failed (the cluster is then
   *     not asked to shut down; the next start restores the newest automatic snapshot)
   */
  public static String snapshotAndShutdown(List<String> adminAddresses, Duration timeout, DatabaseLogin login) {
    return Snapshots.saveForStop(adminAddresses, timeout, timeout, true, login);
  }

  /**
   * The clean stop of a journaled cluster whose server processes this JVM may not have started (see
   * {@link #snapshotAndShutdown}): pauses client writes, has the cluster take a last checkpoint (a stop snapshot
   * beside it would name no checkpoint) and asks the servers to shut down, without waiting for them to exit.
   *
   * @throws DatabaseException if the nodes cannot be reached or paused, or no checkpoint completed within
   *     {@code timeout} (the cluster is then not asked to shut down; its journals hold everything since the last one)
   */
  public static void checkpointAndShutdown(List<String> adminAddresses, Duration timeout, DatabaseLogin login) {
    org.voltdb.client.Client admin = ApiaryDatabase.connect(adminAddresses, timeout, timeout, login);
    try {
      ClusterJournal.checkpointForStop(admin, timeout);
    } finally {
      try {
        admin.close();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    Snapshots.shutdown(adminAddresses, timeout, login);
  }

  /**
   * Deletes a stopped node's older stop snapshots, keeping the one {@code nonce} names (VoltDB's own retention
   * covers automatic snapshots only). The node must have exited.
   */
  public static void keepOnlyStopSnapshot(Path nodeRoot, String nonce) {
    Snapshots.deleteOtherStopSnapshots(Snapshots.snapshotDirectory(nodeRoot), nonce);
  }

  /** Kills every node still alive; deletes the directory unless it is the configured data directory. */
  private void killAndClean() {
    if (journal != null) {
      journal.close();
      journal = null;
    }
    for (Node n : nodes) {
      try {
        n.kill();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (!config.isDurable()) {
      EmbeddedServer.deleteTree(directory);
    }
  }

  /** The cluster's directory: deployment file, node roots and logs. */
  public File directory() {
    return directory.toFile();
  }

  /**
   * {@code count} distinct free ports on loopback, all held open while they are chosen: a port picked earlier but
   * not yet bound by the server it was picked for is otherwise free to be picked again (two nodes of a cluster got
   * the same admin port that way, and the second died with "Address already in use"). For every process a test or
   * benchmark starts on this machine with ports chosen in advance.
   */
  public static int[] freePorts(int count) {
    List<ServerSocket> held = new ArrayList<>();
    try {
      int[] ports = new int[count];
      for (int i = 0; i < count; i++) {
        ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
        held.add(s);
        ports[i] = s.getLocalPort();
      }
      return ports;
    } catch (IOException e) {
      throw new UncheckedIOException("no " + count + " free TCP ports on loopback", e);
    } finally {
      for (ServerSocket s : held) {
        try {
          s.close();
        } catch (IOException e) {
          throw new UncheckedIOException("cannot release a probed port on loopback", e);
        }
      }
    }
  }
}
