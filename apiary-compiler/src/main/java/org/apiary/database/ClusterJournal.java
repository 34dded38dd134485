package org.apiary.database;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apiary.DatabaseException;
import org.apiary.journal.JournalException;
import org.apiary.journal.JournalFormat;
import org.apiary.journal.JournalMerge;
import org.apiary.journal.JournalReader;
import org.apiary.journal.JournalRecord;
import org.apiary.runtime.SystemSchema;
import org.apiary.runtime.journal.ServerJournal;
import org.voltdb.VoltTable;
import org.voltdb.client.Client;
import org.voltdb.client.ClientResponse;

/**
 * The journal of a {@link LocalCluster} with a data directory: every node journals the partitions it holds (replicas
 * included) into {@code nodeN/journal} ({@link JournaledNode}), and a multi-partition transaction marks its place in
 * each of them. This is the cluster's side: recovery when it starts (merge every node's journal after the restored
 * checkpoint with {@link JournalMerge}, replay it through one connection, checkpoint into a new timeline, open the
 * cluster to clients) and the last checkpoint of a clean stop.
 *
 * <p>Checkpoints are {@link ClusterCheckpoints}': recovery's here, then the cluster's own ({@link NodeCheckpointer},
 * in a node), which a clean stop asks for one. The records a checkpoint's snapshot already holds are told apart by
 * the transaction IDs of its digests.
 */
final class ClusterJournal implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(ClusterJournal.class.getName());
  /** Replayed transactions in flight at once, all on one connection (so each partition keeps its order). */
  private static final int REPLAY_WINDOW = 256;
  /** Records handed to a partition's replicas per {@code ReplayExpect}. */
  private static final int EXPECT_BATCH = 64;

  private final ClusterConfig config;
  private final List<Path> nodeRoots;
  private final Client admin;
  private volatile Recovery recovery = new Recovery(0, 0, 0, 0);

  /**
   * What the last start's recovery replayed.
   *
   * @param records records replayed
   * @param multiPartition of them, multi-partition transactions (each replayed alone, at its marks)
   * @param alreadyInSnapshot records the restored checkpoint held
   * @param unmatchedMarks marks of multi-partition transactions that rolled back
   */
  record Recovery(long records, long multiPartition, long alreadyInSnapshot, long unmatchedMarks) {}

  /** What the last start's recovery replayed. */
  Recovery recovery() {
    return recovery;
  }

  private ClusterJournal(ClusterConfig config, List<Path> nodeRoots, Client admin) {
    this.config = config;
    this.nodeRoots = List.copyOf(nodeRoots);
    this.admin = admin;
  }

  /** Each node's journal directory. */
  static Path directoryOf(Path nodeRoot) {
    return nodeRoot.resolve("journal");
  }

  /**
   * The JVM flags that make a node's JVM a journaled node ({@link JournaledNode}, its main class).
   *
   * @param users the owner-only file of the cluster's users, or {@code null} where its security is off
   */
  static List<String> nodeJvmFlags(Path nodeRoot, ClusterConfig config, Path users) {
    Path secret = nodeRoot.resolveSibling("journal-secret");
    if (!Files.exists(secret)) {
      try {
        OwnerOnlyFile.write(secret, Long.toString(new SecureRandom().nextLong() | 1));
      } catch (IOException e) {
        throw new DatabaseException("cannot write the cluster's journal secret to " + secret + ": " + e.getMessage(), e);
      }
    }
    List<String> flags = new ArrayList<>(List.of("-D" + JournaledNode.DIRECTORY_PROPERTY + "=" + directoryOf(nodeRoot),
        "-D" + JournaledNode.SECRET_PROPERTY + "=" + secret,
        "-D" + JournaledNode.MODE_PROPERTY + "=" + config.journal().name().toLowerCase(java.util.Locale.ROOT),
        "-D" + JournaledNode.INTERVAL_PROPERTY + "=" + config.snapshotInterval().toMillis()));
    if (users != null) {
      flags.add("-D" + JournaledNode.USERS_PROPERTY + "=" + users);
    }
    return flags;
  }

  /**
   * Recovers a cluster whose nodes started paused: replays what the restored checkpoint lacks, checkpoints into a
   * new timeline (every node starts writing it), opens the cluster to clients and starts the checkpointer.
   *
   * @param adminAddress one node's admin address: every replayed call goes through it, in journal order
   */
  static ClusterJournal recover(ClusterConfig config, List<Path> nodeRoots, String adminAddress,
                                DatabaseLogin login) {
    Client admin = ApiaryDatabase.connect(List.of(adminAddress), config.startTimeout(), config.startTimeout(), login);
    ClusterJournal journal = new ClusterJournal(config, nodeRoots, admin);
    try {
      journal.recover(adminAddress, login);
      return journal;
    } catch (RuntimeException e) {
      journal.close();
      throw e;
    }
  }

  private void recover(String adminAddress, DatabaseLogin login) {
    // The journal's tables, functions and procedures are the system schema's (a paused cluster takes catalog
    // changes on its admin port).
    try (ApiaryDatabase db = ApiaryDatabase.open(DatabaseConfig.external(adminAddress).withLogin(login)
        .withTimeouts(config.startTimeout(), config.startTimeout()))) {
      SystemSchema.ensure(db);
      ensureJournalSchema(db);
    }
    DatabaseJournal.ensureCheckpointTable(admin);
    Map<Integer, Integer> keys = fillPartitions();
    DatabaseJournal.Marker marker = DatabaseJournal.readMarker(admin);
    Map<Path, Map<Long, JournalReader.Timeline>> found = new HashMap<>();
    for (Path root : nodeRoots) {
      Path dir = directoryOf(root);
      found.put(root, Files.isDirectory(dir) ? JournalReader.scan(dir, config.acceptJournalLoss()) : Map.of());
      found.get(root).values().forEach(t -> t.notes().forEach(n -> LOG.log(System.Logger.Level.WARNING,
          "journal of " + root.getFileName() + ": " + n)));
    }
    if (marker == null) {
      long records = found.values().stream().flatMap(m -> m.values().stream())
          .mapToLong(JournalReader.Timeline::records).sum();
      if (records > 0 && !config.acceptJournalLoss()) {
        throw new DatabaseException("the cluster's journals hold " + records + " records, but the restored database "
            + "names no checkpoint they follow (its snapshot is missing or predates the journal); start with "
            + "--accept-journal-loss to start from the snapshot alone and drop them");
      }
    } else {
      replay(marker, found, keys);
    }
    ClusterCheckpoints.take(admin, new SecureRandom().nextLong() & Long.MAX_VALUE, true);
    DatabaseJournal.call(admin, "opening the cluster to clients", "@Resume");
  }

  /** Apiary's multi-partition procedures, as a journaled cluster runs them (see {@link SystemSchema#markedClass}). */
  private static final List<Class<?>> MARKED = List.of(
      org.apiary.runtime.procedure.marked.AdvanceRetention.class,
      org.apiary.runtime.procedure.marked.AdvanceRetentionByClock.class,
      org.apiary.runtime.procedure.marked.DeclareQueue.class,
      org.apiary.runtime.procedure.marked.ReassignInvocations.class,
      org.apiary.runtime.procedure.marked.ResumeInvocation.class,
      org.apiary.runtime.procedure.marked.RevokeCredential.class,
      org.apiary.runtime.procedure.marked.SetMinimumRetention.class,
      org.apiary.runtime.procedure.marked.StoreCredential.class,
      org.apiary.runtime.procedure.marked.StoreFunction.class,
      org.apiary.runtime.procedure.marked.StoreGraph.class,
      org.apiary.runtime.procedure.marked.StoreQueue.class);

  /** The classes a journaled cluster runs in place of Apiary's multi-partition writes (tests check none is missing). */
  static List<Class<?>> markedProcedures() {
    return MARKED;
  }

  /**
   * What only a journaled cluster has, kept out of the system schema's migrations because VoltDB's SQL functions
   * break later catalog updates in a JVM that also compiles (as an embedded database's tests and applications do):
   * {@value SystemSchema#PARTITIONS}, the journal's functions and procedures; then Apiary's multi-partition procedures
   * and every deployed global function again as the classes that mark their place in every partition's journal (each
   * start: a newer Apiary may have created them again unmarked).
   */
  private void ensureJournalSchema(ApiaryDatabase db) {
    String allow = " ALLOW " + DatabaseUsers.FRONTEND_ROLE;
    java.util.Set<String> procedures = SystemSchema.procedures(db);
    List<String> ddl = new ArrayList<>();
    if (!SystemSchema.tables(db).contains(SystemSchema.PARTITIONS)) {
      String functions = org.apiary.runtime.journal.JournalFunctions.class.getName();
      ddl.addAll(List.of("CREATE TABLE " + SystemSchema.PARTITIONS + " (pkey INTEGER NOT NULL, partition_id INTEGER "
              + "NOT NULL, mark INTEGER DEFAULT 0 NOT NULL, PRIMARY KEY (pkey));",
          "PARTITION TABLE " + SystemSchema.PARTITIONS + " ON COLUMN pkey;",
          "CREATE FUNCTION apiary_journal_mark FROM METHOD " + functions + ".mark;",
          "CREATE FUNCTION apiary_journal_control FROM METHOD " + functions + ".control;"));
    }
    if (!procedures.contains(SystemSchema.JOURNAL_CONTROL)) {
      ddl.add("CREATE PROCEDURE FROM CLASS " + org.apiary.runtime.procedure.JournalControl.class.getName() + ";");
    }
    if (!procedures.contains(SystemSchema.REPLAY_EXPECT)) {
      ddl.add("CREATE PROCEDURE PARTITION ON TABLE " + SystemSchema.PARTITIONS + " COLUMN pkey PARAMETER 0 FROM CLASS "
          + org.apiary.runtime.procedure.ReplayExpect.class.getName() + ";");
    }
    if (!procedures.contains(SystemSchema.REPLAY_EXPECT_MULTI)) {
      ddl.add("CREATE PROCEDURE FROM CLASS " + org.apiary.runtime.procedure.ReplayExpectMulti.class.getName() + ";");
    }
    // JournalSync exists only while the cluster journals synchronously: clients tell the mode by it.
    boolean synchronous = config.journal() == org.apiary.journal.JournalMode.SYNCHRONOUS;
    if (synchronous && !procedures.contains(SystemSchema.JOURNAL_SYNC)) {
      ddl.add("CREATE PROCEDURE" + allow + " PARTITION ON TABLE " + SystemSchema.PARTITIONS + " COLUMN pkey PARAMETER 0 "
          + "FROM CLASS " + org.apiary.runtime.procedure.JournalSync.class.getName() + ";");
    } else if (!synchronous && procedures.contains(SystemSchema.JOURNAL_SYNC)) {
      ddl.add("DROP PROCEDURE " + SystemSchema.JOURNAL_SYNC + ";");
    }
    for (Class<?> marked : MARKED) {
      String name = marked.getSimpleName();
      if (procedures.contains(name)) {
        ddl.add("DROP PROCEDURE " + name + ";");
        ddl.add("CREATE PROCEDURE" + (SystemSchema.FRONTEND_PROCEDURES.contains(name) ? allow : "") + " FROM CLASS "
            + marked.getName() + ";");
      }
    }
    db.loadSchema(String.join("\n", ddl));
    VoltTable globals = db.callAdmin("listing global functions", "@AdHoc", "SELECT name, procedure_class FROM "
        + SystemSchema.FUNCTIONS + " WHERE kind = 'GLOBAL';").getResults()[0];
    List<String> functions = new ArrayList<>();
    while (globals.advanceRow()) {
      String name = globals.getString(0);
      if (procedures.contains(name)) {
        functions.add("DROP PROCEDURE " + name + ";");
        functions.add("CREATE PROCEDURE" + allow + " FROM CLASS " + SystemSchema.markedClass(globals.getString(1))
            + ";");
      }
    }
    if (!functions.isEmpty()) {
      try {
        db.loadSchema(String.join("\n", functions));
      } catch (DatabaseException e) {
        LOG.log(System.Logger.Level.WARNING, "journal: the global functions could not be made to mark their place "
            + "in the partitions' journals (deployed by an older Apiary? deploy them again): " + e.getMessage()
            + "; a crash of every node with one of their writes in the journals stops the recovery");
      }
    }
  }

  /**
   * Gives {@value SystemSchema#PARTITIONS} one row per partition (what a multi-partition write of it reaches every
   * site with) and returns, per partition, a key that VoltDB routes to it.
   */
  private Map<Integer, Integer> fillPartitions() {
    VoltTable t = DatabaseJournal.call(admin, "listing the partitions", "@GetPartitionKeys", "INTEGER")
        .getResults()[0];
    Map<Integer, Integer> keys = new HashMap<>();
    while (t.advanceRow()) {
      int partition = (int) t.getLong(0);
      int key = (int) t.getLong(1);
      keys.put(partition, key);
      DatabaseJournal.call(admin, "recording partition " + partition, "@AdHoc", "UPSERT INTO "
          + SystemSchema.PARTITIONS + " (pkey, partition_id, mark) VALUES (" + key + ", " + partition + ", 0);");
    }
    return keys;
  }

  private void replay(DatabaseJournal.Marker marker, Map<Path, Map<Long, JournalReader.Timeline>> found,
                      Map<Integer, Integer> keys) {
    List<List<JournalRecord>> nodes = new ArrayList<>();
    long afterCatalogChange = 0;
    for (Path root : nodeRoots) {
      JournalReader.Timeline t = found.get(root).get(marker.timeline());
      List<JournalRecord> records = new ArrayList<>();
      if (t != null) {
        JournalReader.forEach(t, records::add);
      }
      int before = records.size();
      // A record under a catalog newer than the checkpoint's ran after a deployment no checkpoint holds: it
      // cannot run on the restored catalog.
      records.removeIf(r -> r.catalogVersion() > marker.catalogVersion());
      afterCatalogChange += before - records.size();
      nodes.add(records);
    }
    Map<Integer, Long> cutoffs = cutoffs(marker.nonce());
    JournalMerge.Plan plan;
    try {
      plan = JournalMerge.plan(nodes, cutoffs, config.acceptJournalLoss());
    } catch (JournalException e) {
      throw new DatabaseException("recovery stopped: " + e.getMessage() + "; the cluster was not opened, and its "
          + "journals and snapshots are as they were", e);
    }
    plan.notes().forEach(n -> LOG.log(System.Logger.Level.WARNING, "journal: " + n));
    if (afterCatalogChange > 0) {
      LOG.log(System.Logger.Level.WARNING, "journal: dropped " + afterCatalogChange + " records of transactions "
          + "that ran after a catalog change (a deployment) no checkpoint holds");
    }
    LOG.log(System.Logger.Level.INFO, "journal: replaying " + plan.records() + " records of timeline "
        + Long.toHexString(marker.timeline()) + " from " + nodeRoots.size() + " nodes' journals ("
        + plan.alreadyInSnapshot() + " the snapshot holds, " + plan.unmatchedMarks() + " marks of rolled-back "
        + "multi-partition transactions)");
    Replay replay = new Replay(plan.records());
    for (JournalMerge.Step step : plan.steps()) {
      if (step instanceof JournalMerge.Barrier barrier) {
        replay.drain();
        replay.expectAndSend(null, List.of(barrier.record()), keys);
        replay.drain();
      } else {
        for (Map.Entry<Integer, List<JournalRecord>> e : ((JournalMerge.Partitions) step).records().entrySet()) {
          List<JournalRecord> list = e.getValue();
          for (int from = 0; from < list.size(); from += EXPECT_BATCH) {
            replay.expectAndSend(e.getKey(), list.subList(from, Math.min(list.size(), from + EXPECT_BATCH)), keys);
          }
        }
      }
    }
    replay.drain();
    if (replay.failure.get() != null) {
      throw new DatabaseException("recovery stopped: " + replay.failure.get() + "; the cluster was not opened, and "
          + "its journals and snapshots are as they were");
    }
    recovery = new Recovery(replay.done.get(), plan.steps().stream().filter(s -> s instanceof JournalMerge.Barrier)
        .count(), plan.alreadyInSnapshot(), plan.unmatchedMarks());
    double seconds = Math.max(1e-9, (System.nanoTime() - replay.started) / 1e9);
    LOG.log(System.Logger.Level.INFO, String.format("journal: replayed %d records in %.1f s (%.0f/s)", replay.done.get(),
        seconds, replay.done.get() / seconds));
  }

  /** The cluster's journal secret, from its owner-only file (see {@link ServerJournal#secret()}). */
  static long readSecret(Path file) {
    try {
      return Long.parseLong(Files.readString(file).strip());
    } catch (IOException | NumberFormatException e) {
      throw new DatabaseException("cannot read the cluster's journal secret from " + file + ": " + e.getMessage(), e);
    }
  }

  /** Per partition, the last transaction ID the checkpoint {@code nonce} holds: the most any node's digest says. */
  private Map<Integer, Long> cutoffs(String nonce) {
    Map<Integer, Long> cutoffs = new HashMap<>();
    for (Path root : nodeRoots) {
      Path dir = Snapshots.snapshotDirectory(root);
      if (!Files.isDirectory(dir)) {
        continue;
      }
      try (Stream<Path> files = Files.list(dir)) {
        for (Path f : files.filter(f -> f.getFileName().toString().startsWith(nonce + "-host_")
            && f.getFileName().toString().endsWith(".digest")).toList()) {
          DatabaseJournal.cutoffs(f.toFile(), nonce).forEach((p, id) -> cutoffs.merge(p, id, Math::max));
        }
      } catch (IOException e) {
        throw new DatabaseException("cannot list the snapshots in " + dir + ": " + e.getMessage(), e);
      }
    }
    if (cutoffs.isEmpty()) {
      throw new DatabaseException("no node holds the digest of the restored checkpoint " + nonce);
    }
    return cutoffs;
  }

  /**
   * One replay in progress: every call on one connection, in plan order, up to {@link #REPLAY_WINDOW} in flight;
   * before a batch of a partition's records, {@code ReplayExpect} tells every replica of the partition what they
   * are (a multi-partition record: {@code ReplayExpectMulti}, to the node coordinating it).
   */
  private final class Replay {
    final long total;
    final Semaphore window = new Semaphore(REPLAY_WINDOW);
    final AtomicReference<String> failure = new AtomicReference<>();
    final AtomicLong done = new AtomicLong();
    final long started = System.nanoTime();
    long lastReport = started;

    Replay(long total) {
      this.total = total;
    }

    /** Hands {@code records} (of {@code partition}; {@code null}: one multi-partition record) over, then sends them. */
    void expectAndSend(Integer partition, List<JournalRecord> records, Map<Integer, Integer> keys) {
      if (failure.get() != null) {
        return;
      }
      byte[] encoded = JournalFormat.encodeRecords(records);
      if (partition == null) {
        send("handing over " + records.get(0), false, SystemSchema.REPLAY_EXPECT_MULTI, encoded);
      } else {
        Integer key = keys.get(partition);
        if (key == null) {
          throw new DatabaseException("the journal holds records of partition " + partition + ", which the cluster "
              + "does not have");
        }
        send("handing over records of partition " + partition, false, SystemSchema.REPLAY_EXPECT, key, encoded);
      }
      for (JournalRecord r : records) {
        send(r.toString(), true, r.procedure(), DatabaseJournal.parameters(r));
      }
    }

    private void send(String what, boolean counts, String procedure, Object... params) {
      acquire(window, 1);
      try {
        boolean queued = admin.callProcedure(response -> {
          if (response.getStatus() != ClientResponse.SUCCESS) {
            failure.compareAndSet(null, what + " failed when run again: " + response.getStatusString());
          }
          if (counts) {
            done.incrementAndGet();
          }
          window.release();
        }, procedure, params);
        if (!queued) {
          throw new DatabaseException("recovery could not queue " + what);
        }
      } catch (IOException e) {
        throw new DatabaseException("recovery lost its connection to the cluster while replaying " + what + ": "
            + e.getMessage(), e);
      }
      long now = System.nanoTime();
      if (now - lastReport > TimeUnit.SECONDS.toNanos(5)) {
        lastReport = now;
        LOG.log(System.Logger.Level.INFO, String.format("journal: replayed %d of %d records (%.0f/s)", done.get(),
            total, done.get() / ((now - started) / 1e9)));
      }
    }

    void drain() {
      acquire(window, REPLAY_WINDOW);
      window.release(REPLAY_WINDOW);
    }
  }

  private void acquire(Semaphore window, int permits) {
    Duration timeout = config.startTimeout();
    try {
      if (!window.tryAcquire(permits, timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new DatabaseException("recovery got no answer from the cluster within " + timeout
            + " while replaying the journal");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DatabaseException("interrupted while replaying the journal", e);
    }
  }

  /**
   * The checkpoint of a clean stop: pauses the cluster (client writes are refused from here on), drains what
   * provenance's export holds, checkpoints. A failure leaves the journals whole, so the next start replays them.
   */
  void checkpointForStop() {
    checkpointForStop(admin, config.startTimeout());
  }

  /** {@link #checkpointForStop()} through {@code admin}, waiting at most {@code timeout} for the checkpoint. */
  static void checkpointForStop(Client admin, Duration timeout) {
    DatabaseJournal.call(admin, "pausing the cluster before its stop checkpoint", "@Pause");
    Snapshots.drainExport(admin, Duration.ofSeconds(30));
    ClusterCheckpoints.request(admin, timeout);
  }

  @Override
  public void close() {
    try {
      admin.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
