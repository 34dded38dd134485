package org.apiary.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Optional;

/**
 * The directory of an {@code apiary cluster start}: what {@link org.apiary.database.LocalCluster} keeps there (the
 * deployment, {@code nodeN/} roots with their snapshots, {@code nodeN.log}) and the command line's own files:
 *
 * <ul>
 *   <li>{@value #STATE}: written once every node accepts clients (process IDs, addresses), removed by
 *       {@code cluster stop}; a cluster killed otherwise leaves it behind, stale;</li>
 *   <li>{@value #SETTINGS}: what the first start chose (nodes, k-factor, sites, snapshot interval), which VoltDB keeps
 *       for good in the node roots, so later starts use the same;</li>
 *   <li>{@value #LOCK}: locked while a {@code cluster start} or {@code cluster stop} runs, so two never overlap.</li>
 * </ul>
 */
final class ClusterDirectory {
  static final String STATE = "cluster.json";
  static final String SETTINGS = "cluster-settings.json";
  static final String LOCK = "cluster.lock";

  /**
   * One server process of a running cluster.
   *
   * @param index the node's number (its root is {@code nodeN/})
   * @param pid its process ID
   * @param clientAddress where clients connect, {@code host:port}
   * @param adminAddress its admin port, where a clean stop pauses and snapshots
   * @param root its root directory
   * @param log its output
   * @param processStart when the process started (ISO-8601), as the operating system says, to tell it from a later
   *     process given the same ID; {@code null} if the system does not say
   * @param internalAddress where the other nodes reach it, {@code host:port} (a node that rejoins meshes with the
   *     live ones there); {@code null} in a state file written before rejoins existed
   */
  record Node(int index, long pid, String clientAddress, String adminAddress, String root, String log,
              String processStart, String internalAddress) {
    /** The process, if it is still alive and is this node's server (not another process that reused the ID). */
    Optional<ProcessHandle> process() {
      return ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
          .filter(h -> processStart == null || h.info().startInstant().map(i -> i.toString().equals(processStart))
              .orElse(true));
    }

    /** When process {@code pid} started, as {@link #processStart} records it. */
    static String startOf(long pid) {
      return ProcessHandle.of(pid).flatMap(h -> h.info().startInstant()).map(Object::toString).orElse(null);
    }
  }

  /**
   * What a ready cluster writes to {@value #STATE}.
   *
   * @param dataDirectory the cluster's directory, absolute
   * @param nodes its server processes
   * @param database every node's client address, comma-separated: what {@code --database} takes
   * @param kfactor replicas of each partition beyond the first
   * @param sitesPerHost partitions per node
   * @param startedAt when it became ready (ISO-8601)
   */
  record State(String dataDirectory, List<Node> nodes, String database, int kfactor, int sitesPerHost,
               String startedAt) {
    List<Node> alive() {
      return nodes.stream().filter(n -> n.process().isPresent()).toList();
    }

    String pids() {
      return String.join(", ", nodes.stream().map(n -> String.valueOf(n.pid())).toList());
    }
  }

  /**
   * What the first start chose; see {@link ClusterDirectory}.
   *
   * @param nodes server processes
   * @param kfactor replicas of each partition beyond the first
   * @param sitesPerHost partitions per node
   * @param snapshotIntervalSeconds seconds between automatic snapshots
   * @param provenance the JDBC URL every node captures provenance into, or {@code null} if none does (its password
   *     is in the nodes' deployment only, readable by the owner alone)
   * @param journal the journal's mode ({@code none} or {@code asynchronous}; {@code null}, from a release before it:
   *     none)
   */
  record Settings(int nodes, int kfactor, int sitesPerHost, long snapshotIntervalSeconds, String provenance,
                  String journal) {
    /** The journal's mode. */
    org.apiary.journal.JournalMode journalMode() {
      return journal == null ? org.apiary.journal.JournalMode.NONE : org.apiary.journal.JournalMode.parse(journal);
    }
  }

  private final Path root;

  ClusterDirectory(Path root) {
    this.root = root.toAbsolutePath().normalize();
  }

  Path root() {
    return root;
  }

  /** The admin API key a secure cluster's first start created, readable by its owner only. */
  Path adminKey() {
    return root.resolve(ServiceDirectory.ADMIN_KEY);
  }

  /** The cluster's VoltDB users' passwords, if its first start turned security on ({@code --secure}). */
  Path databaseUsers() {
    return root.resolve(ServiceDirectory.DATABASE_USERS);
  }

  /**
   * The frontends' login alone ({@code frontend.password}), written beside {@link #databaseUsers()} at every secure
   * start where it is missing: the file to give {@code apiary frontend --database-users}, so a frontend's host never
   * holds the administrator's password.
   */
  Path frontendDatabaseUser() {
    return root.resolve(ServiceDirectory.FRONTEND_DATABASE_USER);
  }

  /** The cluster's users, if its first start gave it some. */
  java.util.Optional<org.apiary.database.DatabaseUsers> readDatabaseUsers() {
    return org.apiary.database.DatabaseUsers.readIfPresent(databaseUsers());
  }

  Path stateFile() {
    return root.resolve(STATE);
  }

  Optional<State> readState() {
    return ServiceDirectory.read(stateFile(), State.class);
  }

  void writeState(State state) {
    ServiceDirectory.write(stateFile(), state);
  }

  void deleteState() {
    try {
      Files.deleteIfExists(stateFile());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + stateFile() + ": " + e.getMessage(), e);
    }
  }

  /** Whether {@code dir} is a cluster's directory (one {@code apiary cluster start} has used), not a service's. */
  static boolean isCluster(Path dir) {
    return Files.exists(dir.resolve(SETTINGS)) || Files.exists(dir.resolve(STATE));
  }

  /** The state of the cluster running here, or why there is none, as an error for the command line. */
  State runningState() {
    State state = readState().orElseThrow(() -> new CliException("no cluster runs in " + root + " (no " + STATE
        + "): start it with `apiary cluster start --data " + root + "`"));
    if (state.alive().isEmpty()) {
      throw new CliException("no cluster runs in " + root + ": none of its servers (pids " + state.pids() + ") is "
          + "alive; start it with `apiary cluster start --data " + root + "`");
    }
    return state;
  }

  /** The spill root of the nodes' provenance capture: each node spills, and reports its backlog, in a subdirectory. */
  Path provenanceSpill() {
    return root.resolve("provenance-spill");
  }

  Optional<Settings> readSettings() {
    return ServiceDirectory.read(root.resolve(SETTINGS), Settings.class);
  }

  void writeSettings(Settings settings) {
    ServiceDirectory.write(root.resolve(SETTINGS), settings);
  }

  /**
   * Takes the directory's lock for this command (a start or a stop).
   *
   * @return the lock, released by {@link #release(FileLock)} or when the process ends; empty if another process
   *     holds it
   */
  Optional<FileLock> lock() {
    try {
      // Owner-only: it holds the database's passwords, its data and provenance (issue 45).
      org.apiary.database.OwnerOnlyFile.createDirectory(root);
      FileChannel channel = FileChannel.open(root.resolve(LOCK), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      FileLock lock = channel.tryLock();
      if (lock == null) {
        channel.close();
        return Optional.empty();
      }
      org.apiary.database.OwnerOnlyFile.restrictTree(root); // files an older version left readable
      return Optional.of(lock);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot lock " + root.resolve(LOCK) + ": " + e.getMessage(), e);
    }
  }

  static void release(FileLock lock) {
    try {
      lock.release();
      lock.channel().close();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot release the lock " + lock + ": " + e.getMessage(), e);
    }
  }
}
