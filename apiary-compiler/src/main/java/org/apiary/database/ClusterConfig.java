package org.apiary.database;

import java.nio.file.Path;
import java.time.Duration;
import org.apiary.journal.JournalMode;

/**
 * What {@link LocalCluster} starts: VoltDB server processes on this machine. Immutable; validated on construction.
 *
 * @param hosts number of server processes, at least 1
 * @param sitesPerHost partitions per process, at least 1
 * @param kfactor replicas of each partition beyond the first, {@code 0 <= kfactor < hosts}
 * @param provenance where the servers send captured provenance, or {@code null} for none
 * @param dataDirectory the cluster's directory (deployment, one root per node, logs), kept across runs, or
 *     {@code null} for a temporary one deleted on close. With a directory the data is durable on VoltDB's own
 *     mechanisms (Community Edition has no command log): an automatic snapshot every {@code snapshotInterval}, one
 *     more when {@link LocalCluster#close()} stops the cluster cleanly, and the newest complete snapshot restored when
 *     a cluster is started on the directory again. The first start initializes it; later starts need the same
 *     number of hosts and keep the first start's deployment (sites, k-factor, snapshot interval, provenance).
 * @param snapshotInterval with a data directory: how often VoltDB writes an automatic snapshot, whole seconds, at
 *     least 1 s; default {@link DatabaseConfig#DEFAULT_SNAPSHOT_INTERVAL}
 * @param startTimeout how long to wait for the cluster to start (and, on close, to stop)
 * @param users VoltDB's security on with these users ({@link DatabaseUsers}; the cluster's own processes connect as
 *     its administrator), or {@code null} (the default) for a cluster anyone who reaches its loopback ports may use.
 *     With a data directory, the users of its first start stay
 * @param journal with a data directory: {@link JournalMode#ASYNCHRONOUS} journals every committed write on every node
 *     (the nodes' journals; a crash of every node loses at most the last fsync interval's work, not what came after
 *     the last snapshot), and checkpoints replace VoltDB's automatic snapshots; {@link JournalMode#NONE} (the
 *     default) keeps the snapshots alone. {@link JournalMode#SYNCHRONOUS} journals the same way, and a reply of a
 *     client of the cluster (a frontend, a direct {@code FunctionInvoker} call) leaves only once every replica of
 *     every partition has its journal on disk up to it ({@code ClusterDurability}), so a crash of every node loses
 *     nothing acknowledged. Whether there is a journal is fixed by the directory's first start; the mode may change
 *     between starts
 * @param acceptJournalLoss with a journal: start even if a journal is damaged before its tail (or the nodes'
 *     journals cannot be merged), from what precedes the damage, saying what was dropped
 */
public record ClusterConfig(
    int hosts,
    int sitesPerHost,
    int kfactor,
    ProvenanceConfig provenance,
    Path dataDirectory,
    Duration snapshotInterval,
    Duration startTimeout,
    DatabaseUsers users,
    JournalMode journal,
    boolean acceptJournalLoss) {

  /** Default time to wait for a cluster to start. */
  public static final Duration DEFAULT_START_TIMEOUT = Duration.ofSeconds(120);

  /** Validates every component; see the record's description. */
  public ClusterConfig {
    if (hosts < 1 || sitesPerHost < 1 || kfactor < 0 || kfactor >= hosts) {
      throw new IllegalArgumentException("need hosts >= 1, sitesPerHost >= 1 and 0 <= kfactor < hosts, got hosts="
          + hosts + " sitesPerHost=" + sitesPerHost + " kfactor=" + kfactor);
    }
    DatabaseConfig.checkSnapshotInterval(snapshotInterval);
    if (startTimeout == null || startTimeout.isNegative() || startTimeout.isZero()) {
      throw new IllegalArgumentException("startTimeout must be positive, got " + startTimeout);
    }
    if (journal == null) {
      throw new IllegalArgumentException("journal must be a mode (NONE for none), not null");
    }
  }

  /** A cluster in a temporary directory, without provenance, with the default timeouts. */
  public static ClusterConfig of(int hosts, int sitesPerHost, int kfactor) {
    return new ClusterConfig(hosts, sitesPerHost, kfactor, null, null, DatabaseConfig.DEFAULT_SNAPSHOT_INTERVAL,
        DEFAULT_START_TIMEOUT, null, JournalMode.NONE, false);
  }

  /** This configuration with provenance captured into {@code value}'s sink ({@code null}: none). */
  public ClusterConfig withProvenance(ProvenanceConfig value) {
    return new ClusterConfig(hosts, sitesPerHost, kfactor, value, dataDirectory, snapshotInterval, startTimeout,
        users, journal, acceptJournalLoss);
  }

  /** This configuration with the cluster kept in {@code directory}, durable as {@link #dataDirectory()} says. */
  public ClusterConfig withDataDirectory(Path directory) {
    return new ClusterConfig(hosts, sitesPerHost, kfactor, provenance, directory, snapshotInterval, startTimeout,
        users, journal, acceptJournalLoss);
  }

  /** This configuration with automatic snapshots every {@code interval} (whole seconds, at least 1 s). */
  public ClusterConfig withSnapshotInterval(Duration interval) {
    return new ClusterConfig(hosts, sitesPerHost, kfactor, provenance, dataDirectory, interval, startTimeout,
        users, journal, acceptJournalLoss);
  }

  /** This configuration with another start timeout. */
  public ClusterConfig withStartTimeout(Duration timeout) {
    return new ClusterConfig(hosts, sitesPerHost, kfactor, provenance, dataDirectory, snapshotInterval, timeout,
        users, journal, acceptJournalLoss);
  }

  /** This configuration with VoltDB's security on and {@code value}'s users ({@code null}: security off). */
  public ClusterConfig withUsers(DatabaseUsers value) {
    return new ClusterConfig(hosts, sitesPerHost, kfactor, provenance, dataDirectory, snapshotInterval, startTimeout,
        value, journal, acceptJournalLoss);
  }

  /** This configuration with the journal in mode {@code mode} (see {@link #journal()}). */
  public ClusterConfig withJournal(JournalMode mode) {
    return new ClusterConfig(hosts, sitesPerHost, kfactor, provenance, dataDirectory, snapshotInterval, startTimeout,
        users, mode, acceptJournalLoss);
  }

  /** This configuration starting past a damaged journal, or not (see {@link #acceptJournalLoss()}). */
  public ClusterConfig withAcceptJournalLoss(boolean accept) {
    return new ClusterConfig(hosts, sitesPerHost, kfactor, provenance, dataDirectory, snapshotInterval, startTimeout,
        users, journal, accept);
  }

  /** Whether every node journals (see {@link #journal()}). */
  public boolean isJournaled() {
    return journal != JournalMode.NONE;
  }

  /** Whether the cluster's data outlives its processes: it has a data directory. */
  public boolean isDurable() {
    return dataDirectory != null;
  }
}
