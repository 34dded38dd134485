package org.apiary.database;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.apiary.journal.JournalMode;

/**
 * Where Apiary's VoltDB is and how long to wait for it. Immutable; validated on construction.
 *
 * <p>Two kinds: {@link #embedded(int) embedded} (Apiary starts VoltDB inside this process, the zero-setup default)
 * and {@link #external(String...) external} (a running VoltDB cluster given as {@code host:port} client
 * addresses). Everything above this class runs the same code on both.
 *
 * @param kind embedded (Apiary starts VoltDB in this process) or external
 * @param partitions embedded only: number of partitions (sites), at least 1; default 2
 * @param dataDirectory embedded only: VoltDB's root directory, kept across runs, or {@code null} for a fresh temporary
 *     directory that is deleted on close. With a directory the data is durable on VoltDB's own mechanisms (Community
 *     Edition has no command log): an automatic snapshot every {@code snapshotInterval}, one more on {@link
 *     ApiaryDatabase#close()}, and the newest complete snapshot restored when the database is opened again. A clean
 *     close keeps every committed transaction; a crash (SIGKILL, power loss) loses what committed after the last
 *     completed automatic snapshot, at most about one interval. The first open initializes the directory (VoltDB keeps
 *     absolute paths in it, so do not move it); the partition count and the snapshot interval are those of that first
 *     open, and a later open with another partition count is refused.
 * @param snapshotInterval embedded with a data directory only: how often VoltDB writes an automatic snapshot, in whole
 *     seconds, at least 1 s; default {@value #DEFAULT_SNAPSHOT_INTERVAL_SECONDS} s
 * @param clientPort embedded only: the client port, on loopback; 0 (the default) picks a free port
 * @param hosts external only: {@code host:port} client addresses, at least one
 * @param connectTimeout how long to wait for the database to start or a connection to open; default 60 s
 * @param callTimeout how long one call may take before its outcome is reported unknown; default 30 s
 * @param provenance where captured provenance goes, or {@code null} to capture none (the default). For an external
 *     database this states that the cluster's deployment declares Apiary's export target (see
 *     {@link Deployments}); for an embedded one Apiary declares it.
 * @param users embedded only: VoltDB's security on with these users ({@link DatabaseUsers}), or {@code null} (the
 *     default) for a database anyone who reaches its loopback port may use. With a data directory, the users of its
 *     first open stay
 * @param login who this process connects as, or {@code null}: none for a database without security, the
 *     administrator of {@code users} for an embedded one with them ({@link #connectsAs()})
 * @param journal embedded with a data directory only: Apiary's journal of committed write transactions, which a
 *     start replays after restoring the newest checkpoint (VoltDB Community Edition has no command log).
 *     {@link JournalMode#SYNCHRONOUS}: a write is acknowledged (by {@code FunctionInvoker} and the frontend of this
 *     process) only once it is on disk, so a crash loses nothing acknowledged; {@link JournalMode#ASYNCHRONOUS}:
 *     fsynced at least every 100 ms, so a crash loses at most that much acknowledged work; {@link JournalMode#NONE}
 *     (the default): no journal, a crash loses what committed after the last automatic snapshot. A journaled
 *     database takes its checkpoints (snapshots) itself, every {@code snapshotInterval}, instead of VoltDB's
 *     automatic snapshots
 * @param acceptJournalLoss with a journal: start even if the journal is damaged before its tail (see
 *     {@link #withAcceptJournalLoss})
 */
public record DatabaseConfig(
    Kind kind,
    int partitions,
    Path dataDirectory,
    Duration snapshotInterval,
    int clientPort,
    List<String> hosts,
    Duration connectTimeout,
    Duration callTimeout,
    ProvenanceConfig provenance,
    DatabaseUsers users,
    DatabaseLogin login,
    JournalMode journal,
    boolean acceptJournalLoss) {

  /** Where the database runs. */
  public enum Kind {
    /** Started by Apiary inside this process. */
    EMBEDDED,
    /** A running cluster Apiary connects to. */
    EXTERNAL
  }

  /** Default number of embedded partitions. */
  public static final int DEFAULT_PARTITIONS = 2;
  /** Default time to wait for the database to start or accept a connection. */
  public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(60);
  /** Default time one call may take. */
  public static final Duration DEFAULT_CALL_TIMEOUT = Duration.ofSeconds(30);
  /**
   * Default seconds between automatic snapshots of an embedded database with a data directory: 60. A crash loses
   * at most about this much committed work, and each snapshot writes the whole database again (VoltDB's snapshots
   * are full copies, written in the background without blocking transactions), so the interval trades the loss
   * window against disk writes; a minute bounds the loss of a development or small service database while
   * rewriting even a few GiB only once a minute.
   */
  public static final int DEFAULT_SNAPSHOT_INTERVAL_SECONDS = 60;
  /** {@link #DEFAULT_SNAPSHOT_INTERVAL_SECONDS} as a duration. */
  public static final Duration DEFAULT_SNAPSHOT_INTERVAL = Duration.ofSeconds(DEFAULT_SNAPSHOT_INTERVAL_SECONDS);

  /** Validates every component; see the record's description. */
  public DatabaseConfig {
    Objects.requireNonNull(kind, "kind");
    hosts = List.copyOf(Objects.requireNonNull(hosts, "hosts"));
    Objects.requireNonNull(connectTimeout, "connectTimeout");
    Objects.requireNonNull(callTimeout, "callTimeout");
    checkSnapshotInterval(snapshotInterval);
    if (kind == Kind.EMBEDDED) {
      if (partitions < 1) {
        throw new IllegalArgumentException("an embedded database needs at least 1 partition, got " + partitions);
      }
      if (clientPort < 0 || clientPort > 65535) {
        throw new IllegalArgumentException("clientPort must be 0 (any free port) or a TCP port, got " + clientPort);
      }
      if (!hosts.isEmpty()) {
        throw new IllegalArgumentException("an embedded database takes no host list");
      }
    } else {
      if (hosts.isEmpty()) {
        throw new IllegalArgumentException("an external database needs at least one host:port");
      }
      for (String h : hosts) {
        parseHost(h);
      }
    }
    journal = journal == null ? JournalMode.NONE : journal;
    if (journal != JournalMode.NONE && (kind != Kind.EMBEDDED || dataDirectory == null)) {
      throw new IllegalArgumentException("journal mode " + journal.name().toLowerCase(java.util.Locale.ROOT) + " needs "
          + "an embedded database with a data directory (withDataDirectory): a temporary database has nothing to "
          + "recover, and an external cluster's servers journal by their own configuration");
    }
    if (kind == Kind.EXTERNAL && users != null) {
      throw new IllegalArgumentException("an external database's users are in its cluster's deployment (see "
          + "ClusterConfig.users); connect to it with withLogin");
    }
    if (kind == Kind.EXTERNAL && dataDirectory != null) {
      throw new IllegalArgumentException("an external database's data directory is the cluster's own (see "
          + "ClusterConfig.dataDirectory); DatabaseConfig.dataDirectory is for an embedded database");
    }
    if (connectTimeout.isNegative() || connectTimeout.isZero()) {
      throw new IllegalArgumentException("connectTimeout must be positive, got " + connectTimeout);
    }
    if (callTimeout.isNegative() || callTimeout.isZero()) {
      throw new IllegalArgumentException("callTimeout must be positive, got " + callTimeout);
    }
  }

  /** An embedded database with {@value #DEFAULT_PARTITIONS} partitions in a temporary directory. */
  public static DatabaseConfig embedded() {
    return embedded(DEFAULT_PARTITIONS);
  }

  /** An embedded database with {@code partitions} partitions in a temporary directory, on a free port. */
  public static DatabaseConfig embedded(int partitions) {
    return new DatabaseConfig(Kind.EMBEDDED, partitions, null, DEFAULT_SNAPSHOT_INTERVAL, 0, List.of(),
        DEFAULT_CONNECT_TIMEOUT, DEFAULT_CALL_TIMEOUT, null, null, null, JournalMode.NONE, false);
  }

  /** A running VoltDB cluster, reached at one or more {@code host:port} client addresses. */
  public static DatabaseConfig external(String... hostPorts) {
    return new DatabaseConfig(Kind.EXTERNAL, 0, null, DEFAULT_SNAPSHOT_INTERVAL, 0, List.of(hostPorts),
        DEFAULT_CONNECT_TIMEOUT, DEFAULT_CALL_TIMEOUT, null, null, null, JournalMode.NONE, false);
  }

  /**
   * This configuration with VoltDB's files kept in {@code directory} (embedded only), so the data survives a close
   * and a crash as {@link #dataDirectory()} describes; {@code null} for a temporary directory.
   */
  public DatabaseConfig withDataDirectory(Path directory) {
    return new DatabaseConfig(kind, partitions, directory, snapshotInterval, clientPort, hosts, connectTimeout,
        callTimeout, provenance, users, login, journal, acceptJournalLoss);
  }

  /**
   * This configuration with automatic snapshots every {@code interval} (whole seconds, at least 1 s), for an embedded
   * database with a data directory.
   */
  public DatabaseConfig withSnapshotInterval(Duration interval) {
    return new DatabaseConfig(kind, partitions, dataDirectory, interval, clientPort, hosts, connectTimeout,
        callTimeout, provenance, users, login, journal, acceptJournalLoss);
  }

  /** This configuration with a fixed client port (embedded only). */
  public DatabaseConfig withClientPort(int port) {
    return new DatabaseConfig(kind, partitions, dataDirectory, snapshotInterval, port, hosts, connectTimeout,
        callTimeout, provenance, users, login, journal, acceptJournalLoss);
  }

  /** This configuration with other timeouts. */
  public DatabaseConfig withTimeouts(Duration connect, Duration call) {
    return new DatabaseConfig(kind, partitions, dataDirectory, snapshotInterval, clientPort, hosts, connect, call,
        provenance, users, login, journal, acceptJournalLoss);
  }

  /** This configuration with provenance capture into {@code value}'s sink ({@code null}: no capture). */
  public DatabaseConfig withProvenance(ProvenanceConfig value) {
    return new DatabaseConfig(kind, partitions, dataDirectory, snapshotInterval, clientPort, hosts, connectTimeout,
        callTimeout, value, users, login, journal, acceptJournalLoss);
  }

  /**
   * This configuration with VoltDB's security on and {@code value}'s users (embedded only); this process connects as
   * the administrator unless {@link #withLogin} says otherwise.
   */
  public DatabaseConfig withUsers(DatabaseUsers value) {
    return new DatabaseConfig(kind, partitions, dataDirectory, snapshotInterval, clientPort, hosts, connectTimeout,
        callTimeout, provenance, value, login, journal, acceptJournalLoss);
  }

  /**
   * This configuration with the journal in {@code mode} (embedded with a data directory only): see {@link #journal()}.
   */
  public DatabaseConfig withJournal(JournalMode mode) {
    return new DatabaseConfig(kind, partitions, dataDirectory, snapshotInterval, clientPort, hosts, connectTimeout,
        callTimeout, provenance, users, login, mode, acceptJournalLoss);
  }

  /**
   * This configuration starting even if the journal is damaged before its tail, from what precedes the damage (the
   * start says what it dropped); without it such a start fails, naming the file and offset.
   */
  public DatabaseConfig withAcceptJournalLoss(boolean value) {
    return new DatabaseConfig(kind, partitions, dataDirectory, snapshotInterval, clientPort, hosts, connectTimeout,
        callTimeout, provenance, users, login, journal, value);
  }

  /** This configuration connecting as {@code value} (a user of the database's deployment). */
  public DatabaseConfig withLogin(DatabaseLogin value) {
    return new DatabaseConfig(kind, partitions, dataDirectory, snapshotInterval, clientPort, hosts, connectTimeout,
        callTimeout, provenance, users, value, journal, acceptJournalLoss);
  }

  /** Who this process connects as: {@link #login()}, else the administrator of {@link #users()}, else nobody. */
  public java.util.Optional<DatabaseLogin> connectsAs() {
    return login != null ? java.util.Optional.of(login)
        : java.util.Optional.ofNullable(DatabaseUsers.adminOf(users));
  }

  /** Whether provenance is captured. */
  public boolean capturesProvenance() {
    return provenance != null;
  }

  /** Whether Apiary starts the database in this process. */
  public boolean isEmbedded() {
    return kind == Kind.EMBEDDED;
  }

  /** Whether the data outlives this process: embedded with a data directory. */
  public boolean isDurable() {
    return kind == Kind.EMBEDDED && dataDirectory != null;
  }

  /** Checks a snapshot interval: whole seconds (VoltDB's unit), at least one. */
  static void checkSnapshotInterval(Duration interval) {
    Objects.requireNonNull(interval, "snapshotInterval");
    if (interval.compareTo(Duration.ofSeconds(1)) < 0 || interval.toMillis() % 1000 != 0) {
      throw new IllegalArgumentException("snapshotInterval must be whole seconds, at least 1 s, got " + interval);
    }
  }

  /** Splits {@code host:port}; a bare host means VoltDB's default client port 21212. */
  static HostPort parseHost(String hostPort) {
    String text = Objects.requireNonNull(hostPort, "host").strip();
    int colon = text.lastIndexOf(':');
    if (text.isEmpty() || colon == 0) {
      throw new IllegalArgumentException("'" + hostPort + "' is not a host:port address");
    }
    if (colon < 0) {
      return new HostPort(text, 21212);
    }
    try {
      int port = Integer.parseInt(text.substring(colon + 1));
      if (port < 1 || port > 65535) {
        throw new NumberFormatException();
      }
      return new HostPort(text.substring(0, colon), port);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("'" + hostPort + "' has no valid port (1-65535) after the colon", e);
    }
  }

  record HostPort(String host, int port) {
    @Override
    public String toString() {
      return host + ":" + port;
    }
  }
}
