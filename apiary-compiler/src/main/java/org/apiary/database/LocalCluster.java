package org.apiary.database;

import java.io.File;
import java.io.IOException;
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
      "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED");

  /** One server process. */
  public static final class Node {
    private final int index;
    private final int clientPort;
    private final Path root;
    private final Path log;
    private Process process;

    Node(int index, int clientPort, Path root, Path log) {
      this.index = index;
      this.clientPort = clientPort;
      this.root = root;
      this.log = log;
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
  }

  private final Path directory;
  private final List<Node> nodes;

  private final ProvenanceConfig provenance;

  private LocalCluster(Path directory, List<Node> nodes, ProvenanceConfig provenance) {
    this.directory = directory;
    this.nodes = nodes;
    this.provenance = provenance;
  }

  /**
   * Starts a cluster and waits until every node accepts clients.
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
    if (hosts < 1 || kfactor < 0 || kfactor >= hosts) {
      throw new IllegalArgumentException("need hosts >= 1 and 0 <= kfactor < hosts, got hosts=" + hosts + " kfactor=" + kfactor);
    }
    try {
      return startOnce(hosts, sitesPerHost, kfactor, provenance, timeout);
    } catch (NodeExited e) {
      // Ports are picked free and then handed to the servers, so another process may bind one in between.
      System.getLogger(LocalCluster.class.getName()).log(System.Logger.Level.WARNING, "a VoltDB node exited while "
          + "the cluster started; starting it again on new ports: " + e.failure.getMessage());
      try {
        return startOnce(hosts, sitesPerHost, kfactor, provenance, timeout);
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

  private static LocalCluster startOnce(int hosts, int sitesPerHost, int kfactor, ProvenanceConfig provenance,
                                        Duration timeout) {
    Path dir;
    try {
      dir = Files.createTempDirectory("apiary-cluster-");
      Files.writeString(dir.resolve("deployment.xml"), Deployments.cluster(hosts, sitesPerHost, kfactor, provenance,
          dir.resolve("provenance-spill")));
    } catch (IOException e) {
      throw new DatabaseException("cannot prepare a directory for the cluster: " + e.getMessage(), e);
    }
    int[] internal = new int[hosts];
    for (int i = 0; i < hosts; i++) {
      internal[i] = EmbeddedServer.freePort();
    }
    List<Node> nodes = new ArrayList<>();
    LocalCluster cluster = new LocalCluster(dir, nodes, provenance);
    try {
      for (int i = 0; i < hosts; i++) {
        Path root = dir.resolve("node" + i);
        Path log = dir.resolve("node" + i + ".log");
        Files.createDirectories(root);
        run(List.of("initialize", "voltdbroot", root.toString(), "deployment", dir.resolve("deployment.xml").toString(),
            "force"), dir.resolve("node" + i + "-init.log"), timeout);
        Node node = new Node(i, EmbeddedServer.freePort(), root, log);
        List<String> args = List.of("probe", "voltdbroot", root.toString(),
            "mesh", "127.0.0.1:" + internal[0], "hostcount", String.valueOf(hosts),
            "port", "127.0.0.1:" + node.clientPort, "adminport", "127.0.0.1:" + EmbeddedServer.freePort(),
            "internalport", String.valueOf(internal[i]), "internalinterface", "127.0.0.1",
            "externalinterface", "127.0.0.1", "zkport", "127.0.0.1:" + EmbeddedServer.freePort(),
            "replicationport", String.valueOf(EmbeddedServer.freePort()),
            "httpport", String.valueOf(EmbeddedServer.freePort()));
        node.process = launch(args, log);
        nodes.add(node);
      }
      cluster.awaitReady(timeout);
      return cluster;
    } catch (IOException | RuntimeException e) {
      String logs = nodes.stream().map(n -> "\n--- node " + n.index + " log tail:\n" + tail(n.log)).reduce("", String::concat);
      boolean exited = nodes.stream().anyMatch(n -> n.process != null && !n.process.isAlive());
      cluster.close();
      String message = "the VoltDB cluster did not start: " + e.getMessage() + logs;
      DatabaseException failure = new DatabaseException(message, e);
      throw exited ? new NodeExited(failure) : failure;
    }
  }

  private void awaitReady(Duration timeout) {
    for (Node n : nodes) {
      EmbeddedServer.awaitListening(n.clientPort, timeout, "VoltDB node " + n.index, n.process::isAlive);
    }
  }

  private static void run(List<String> voltArgs, Path log, Duration timeout) throws IOException {
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

  private static Process launch(List<String> voltArgs, Path log) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(VOLTDB_JVM_FLAGS);
    cmd.add("-Xmx1g");
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add("org.voltdb.VoltDB");
    cmd.addAll(voltArgs);
    return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
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

  /** A configuration that connects to this cluster. */
  public DatabaseConfig config() {
    return DatabaseConfig.external(clientAddresses().toArray(String[]::new)).withProvenance(provenance);
  }

  /** Kills every node and deletes the cluster's files. */
  @Override
  public void close() {
    for (Node n : nodes) {
      try {
        n.kill();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    EmbeddedServer.deleteTree(directory);
  }

  /** The cluster's directory: deployment file, node roots and logs. */
  public File directory() {
    return directory.toFile();
  }
}
