package org.apiary.database;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apiary.DatabaseException;
import org.apiary.journal.JournalDirectory;
import org.apiary.journal.JournalMode;
import org.apiary.journal.JournalReader;
import org.apiary.journal.JournalRecord;
import org.apiary.journal.JournalWriter;
import org.apiary.runtime.journal.ServerJournal;
import org.json_voltpatches.JSONObject;
import org.voltdb.ParameterSet;
import org.voltdb.VoltTable;
import org.voltdb.client.Client;
import org.voltdb.client.ClientResponse;
import org.voltdb.client.ProcCallException;
import org.voltdb.sysprocs.saverestore.SnapshotUtil;

/**
 * The journal of an embedded database with a data directory: its recovery when the database starts, and its
 * checkpoints.
 *
 * <p>A checkpoint writes a marker (a timeline and a snapshot nonce) into the replicated table {@value #CHECKPOINT}
 * and then takes that snapshot, so every snapshot names itself, and the marker a restored database holds says which
 * snapshot VoltDB restored. Its digest gives, per partition, the last transaction it holds; recovery replays the
 * journal records of the marker's timeline after those, in journal order (multi-partition records alone, as barriers),
 * then checkpoints into a new timeline (VoltDB restarts transaction IDs from the snapshot's, so IDs of the old
 * timeline mean nothing after it) and only then opens the database to clients (it starts paused). VoltDB's own
 * automatic snapshots would carry a stale marker, so a journaled database has none: these checkpoints replace them.
 */
final class DatabaseJournal implements AutoCloseable {
  static final String CHECKPOINT = "APIARY_JOURNAL_CHECKPOINT";
  static final String CHECKPOINT_PREFIX = "apiary_ckpt_";
  private static final System.Logger LOG = System.getLogger(DatabaseJournal.class.getName());
  /**
   * Replayed transactions in flight at once (all on one connection, so each partition keeps its order); the property
   * {@code apiary.journal.replayWindow} overrides it, for measurements.
   */
  private static final int REPLAY_WINDOW = Integer.getInteger("apiary.journal.replayWindow", 256);
  /** How often the checkpointer looks for a catalog change. */
  private static final long CATALOG_POLL_MS = 20;

  private final Path root;
  private final DatabaseConfig config;
  private final JournalDirectory directory;
  private final Map<Long, JournalReader.Timeline> found;
  private final ServerJournal server;
  private final Object checkpointLock = new Object();
  private Client admin;
  private Thread checkpointer;
  private volatile boolean closed;

  private DatabaseJournal(Path root, DatabaseConfig config, JournalDirectory directory,
                          Map<Long, JournalReader.Timeline> found) {
    this.root = root;
    this.config = config;
    this.directory = directory;
    this.found = found;
    this.server = ServerJournal.installForReplay();
  }

  /** The journal directory of a data directory. */
  static Path directoryOf(Path root) {
    return root.resolve("journal");
  }

  /**
   * Locks and reads the journal before VoltDB starts: a second server on the directory, or a damaged journal, stops
   * the start before anything else happens.
   */
  static DatabaseJournal open(Path root, DatabaseConfig config) {
    JournalDirectory directory = JournalDirectory.open(directoryOf(root));
    try {
      Map<Long, JournalReader.Timeline> found = JournalReader.scan(directory.path(), config.acceptJournalLoss());
      found.values().forEach(t -> t.notes().forEach(n -> LOG.log(System.Logger.Level.WARNING, "journal: " + n)));
      return new DatabaseJournal(root, config, directory, found);
    } catch (RuntimeException e) {
      directory.close();
      throw e;
    }
  }

  /**
   * Replays what the restored snapshot lacks, checkpoints into a new timeline, starts journaling and opens the
   * database to clients. VoltDB must have started paused and be listening on {@code adminPort}.
   */
  void recover(int adminPort) {
    admin = ApiaryDatabase.connect(List.of("127.0.0.1:" + adminPort), config.connectTimeout(), config.callTimeout(),
        DatabaseUsers.adminOf(config.users()));
    ensureCheckpointTable();
    Marker marker = readMarker();
    JournalReader.Timeline timeline = marker == null ? null : found.get(marker.timeline());
    if (marker == null) {
      long records = found.values().stream().mapToLong(JournalReader.Timeline::records).sum();
      if (records > 0 && !config.acceptJournalLoss()) {
        throw new DatabaseException("the journal in " + directory.path() + " holds " + records + " records, but the "
            + "restored database names no checkpoint they follow (its snapshot is missing or predates the journal); "
            + "start with --accept-journal-loss to start from the snapshot alone and drop them");
      }
    } else if (timeline != null && timeline.records() > 0) {
      replay(timeline, cutoffs(marker.nonce()), marker.catalogVersion());
    }
    checkpoint(new SecureRandom().nextLong() & Long.MAX_VALUE, true);
    call("opening the database to clients", "@Resume");
    long interval = config.snapshotInterval().toNanos();
    checkpointer = new Thread(() -> {
      long last = System.nanoTime();
      while (!closed) {
        try {
          Thread.sleep(CATALOG_POLL_MS);
        } catch (InterruptedException e) {
          return;
        }
        // A catalog change (a deployment from any process) is checkpointed at once: replies wait for it.
        if (!server.catalogChanged() && System.nanoTime() - last < interval) {
          continue;
        }
        last = System.nanoTime();
        try {
          checkpoint(0, false);
        } catch (RuntimeException e) {
          server.checkpointFailed(e, new java.util.concurrent.CompletableFuture<>());
          if (!closed) {
            LOG.log(System.Logger.Level.WARNING, "a journal checkpoint failed (the journal keeps every record since "
                + "the last one, so nothing is lost; it is tried again in " + config.snapshotInterval().toMillis()
                + " ms, at once after a catalog change): " + e.getMessage());
          }
        }
      }
    }, "apiary-journal-checkpoints");
    checkpointer.setDaemon(true);
    checkpointer.start();
  }

  /** The journal's writer ({@code null} before recovery finished). */
  JournalWriter writer() {
    return server.writer();
  }

  record Marker(long timeline, String nonce, int catalogVersion) {}

  private void ensureCheckpointTable() {
    ensureCheckpointTable(admin);
  }

  /** Creates {@value #CHECKPOINT} unless it exists. */
  static void ensureCheckpointTable(Client admin) {
    VoltTable tables = call(admin, "listing tables", "@SystemCatalog", "TABLES").getResults()[0];
    while (tables.advanceRow()) {
      if (CHECKPOINT.equalsIgnoreCase(tables.getString("TABLE_NAME"))) {
        return;
      }
    }
    call(admin, "creating the journal's checkpoint table", "@AdHoc", "CREATE TABLE " + CHECKPOINT
        + " (id TINYINT NOT NULL, timeline BIGINT NOT NULL, nonce VARCHAR(128) NOT NULL, catalog_version INTEGER NOT "
        + "NULL, PRIMARY KEY (id));");
  }

  private Marker readMarker() {
    return readMarker(admin);
  }

  /** The checkpoint the restored database names, or {@code null}. */
  static Marker readMarker(Client admin) {
    VoltTable t = call(admin, "reading the journal's checkpoint", "@AdHoc", "SELECT timeline, nonce, catalog_version FROM "
        + CHECKPOINT + " WHERE id = 0;").getResults()[0];
    return t.advanceRow() ? new Marker(t.getLong(0), t.getString(1), (int) t.getLong(2)) : null;
  }

  /** Per partition, the last transaction ID the snapshot {@code nonce} holds. */
  private Map<Integer, Long> cutoffs(String nonce) {
    return cutoffs(Snapshots.snapshotDirectory(root).resolve(nonce + "-host_0.digest").toFile(), nonce);
  }

  /** Per partition, the last transaction ID the snapshot {@code nonce} holds, as its digest {@code digest} says. */
  static Map<Integer, Long> cutoffs(File digest, String nonce) {
    try {
      JSONObject json = SnapshotUtil.CRCCheck(digest, new org.voltcore.logging.VoltLogger("HOST"));
      if (json == null) {
        throw new DatabaseException("the digest " + digest + " of the restored snapshot is damaged");
      }
      JSONObject ids = json.getJSONObject("partitionTransactionIds");
      Map<Integer, Long> cutoffs = new HashMap<>();
      var keys = ids.keys();
      while (keys.hasNext()) {
        String key = (String) keys.next();
        cutoffs.put(Integer.parseInt(key), ids.getLong(key));
      }
      return cutoffs;
    } catch (IOException | org.json_voltpatches.JSONException e) {
      throw new DatabaseException("cannot read the digest " + digest + " of the restored snapshot " + nonce + ": "
          + e.getMessage(), e);
    }
  }

  private void replay(JournalReader.Timeline timeline, Map<Integer, Long> cutoffs, int checkpointedCatalog) {
    LOG.log(System.Logger.Level.INFO, "journal: replaying the records of timeline "
        + Long.toHexString(timeline.timeline()) + " the restored snapshot lacks (" + timeline.records()
        + " records in the journal)");
    Replay replay = new Replay(timeline.records());
    // Records are sent as they are read: no list of the whole journal is held, and the database starts working at
    // once. Each one goes out only after its position was checked, so the order on the connection is journal order.
    JournalReader.forEach(timeline, r -> {
      if (r.catalogVersion() > checkpointedCatalog) {
        // It ran after a catalog change that no checkpoint holds; replies waited for that checkpoint, so no client
        // was told it happened, and it cannot run on the restored catalog.
        replay.afterCatalogChange++;
        return;
      }
      Long cutoff = cutoffs.get(r.partition());
      if (cutoff == null) {
        throw new DatabaseException("the restored snapshot does not say where partition " + r.partition()
            + " stands, so " + r + " cannot be placed");
      }
      if (r.txnId() > cutoff) {
        replay.send(r);
      } else {
        replay.skipped++;
      }
    });
    replay.drain();
    if (replay.afterCatalogChange > 0) {
      LOG.log(System.Logger.Level.WARNING, "journal: dropped " + replay.afterCatalogChange + " records of "
          + "transactions that ran after a catalog change (a deployment) no checkpoint holds; none of them was "
          + "acknowledged" + (config.journal() == JournalMode.SYNCHRONOUS ? "" : " in synchronous mode (this journal "
          + "is asynchronous: their replies did not wait, so these acknowledged transactions are lost)"));
    }
    String diverged = server.divergence();
    if (diverged != null || replay.failure.get() != null) {
      throw new DatabaseException("recovery stopped: " + (diverged != null ? diverged : replay.failure.get())
          + "; the database was not opened, and the journal and snapshot are as they were");
    }
    double seconds = Math.max(1e-9, (System.nanoTime() - replay.started) / 1e9);
    LOG.log(System.Logger.Level.INFO, String.format("journal: replayed %d records in %.1f s (%.0f/s); %d the "
        + "snapshot already held", replay.sent, seconds, replay.sent / seconds, replay.skipped));
  }

  /**
   * One replay in progress: records go out on the admin connection in journal order with up to
   * {@link #REPLAY_WINDOW} in flight (VoltDB runs the calls of one connection to one partition in the order they were
   * sent, so each partition keeps its order), a multi-partition record alone (a barrier: everything before it has
   * completed before it is sent, and it completes before anything after it is sent).
   */
  private final class Replay {
    final long total;
    final Semaphore window = new Semaphore(REPLAY_WINDOW);
    final AtomicReference<String> failure = new AtomicReference<>();
    final AtomicLong done = new AtomicLong();
    final long started = System.nanoTime();
    long lastReport = started;
    long sent;
    long skipped;
    long afterCatalogChange;

    Replay(long total) {
      this.total = total;
    }

    void send(JournalRecord r) {
      if (failure.get() != null) {
        return; // recovery stops once what is in flight has completed; see drain()
      }
      if (r.multiPartition()) {
        drain();
      }
      acquire(window, 1);
      server.expectNext(r);
      Object[] params = parameters(r);
      try {
        boolean queued = admin.callProcedure(response -> {
          if (response.getStatus() != ClientResponse.SUCCESS) {
            failure.compareAndSet(null, r + " failed when run again: " + response.getStatusString());
          }
          done.incrementAndGet();
          window.release();
        }, r.procedure(), params);
        if (!queued) {
          throw new DatabaseException("recovery could not queue " + r);
        }
      } catch (IOException e) {
        throw new DatabaseException("recovery lost its connection to the database while replaying " + r + ": "
            + e.getMessage(), e);
      }
      sent++;
      if (r.multiPartition()) {
        drain();
      }
      long now = System.nanoTime();
      if (now - lastReport > TimeUnit.SECONDS.toNanos(5)) {
        lastReport = now;
        double seconds = (now - started) / 1e9;
        LOG.log(System.Logger.Level.INFO, String.format("journal: replayed %d of at most %d records (%.0f/s)",
            done.get(), total, done.get() / seconds));
      }
    }

    /** Waits until every record sent so far has completed. */
    void drain() {
      acquire(window, REPLAY_WINDOW);
      window.release(REPLAY_WINDOW);
    }
  }

  private void acquire(Semaphore window, int permits) {
    try {
      if (!window.tryAcquire(permits, config.callTimeout().toMillis() + 5_000, TimeUnit.MILLISECONDS)) {
        throw new DatabaseException("recovery got no answer from the database within " + config.callTimeout()
            + " while replaying the journal");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DatabaseException("interrupted while replaying the journal", e);
    }
  }

  static Object[] parameters(JournalRecord r) {
    try {
      return ParameterSet.fromByteBuffer(ByteBuffer.wrap(r.parameters())).toArray();
    } catch (IOException e) {
      throw new DatabaseException("the parameters of " + r + " cannot be read: " + e.getMessage(), e);
    }
  }

  /**
   * Takes a checkpoint: marks and snapshots the database, then deletes the journal and snapshots it makes
   * redundant.
   *
   * @param newTimeline with {@code start}: the timeline the journal writes from now on
   * @param start whether this is recovery's checkpoint, after which the journal starts writing {@code newTimeline}
   */
  private void checkpoint(long newTimeline, boolean start) {
    synchronized (checkpointLock) {
      JournalWriter writer = server.writer();
      long timeline = start ? newTimeline : writer.timeline();
      long before = start ? 0 : writer.lastAppended();
      String nonce = CHECKPOINT_PREFIX + Long.toHexString(timeline) + "_" + System.currentTimeMillis();
      int catalog = ServerJournal.catalogVersion(); // read first: a change during the checkpoint gets the next one
      call("marking the journal's checkpoint", "@AdHoc", "UPSERT INTO " + CHECKPOINT + " (id, timeline, nonce, "
          + "catalog_version) VALUES (0, " + timeline + ", '" + nonce + "', " + catalog + ");");
      VoltTable result = call("the journal's checkpoint snapshot", "@SnapshotSave",
          "{nonce:\"" + nonce + "\",block:true,format:\"native\"}").getResults()[0];
      while (result.advanceRow()) {
        if (!"SUCCESS".equals(result.getString("RESULT"))) {
          throw new DatabaseException("the checkpoint snapshot " + nonce + " failed: " + result.getString("ERR_MSG"));
        }
      }
      if (start) {
        JournalWriter.Settings settings = JournalWriter.Settings.of(config.journal());
        server.startWriting(JournalWriter.start(directory, timeline, 1, settings), directory.path());
        directory.deleteTimelinesOtherThan(timeline);
      } else {
        writer.deleteSegmentsBefore(before + 1);
      }
      server.checkpointed(catalog, new java.util.concurrent.CompletableFuture<>());
      deleteSnapshotsOtherThan(nonce);
    }
  }

  /** Deletes every snapshot in the snapshot directory but {@code keep}: the journal covers what came after it. */
  private void deleteSnapshotsOtherThan(String keep) {
    deleteSnapshotsOtherThan(root, keep);
  }

  /** Deletes every snapshot in {@code root}'s snapshot directory but {@code keep}. */
  static void deleteSnapshotsOtherThan(Path root, String keep) {
    Path dir = Snapshots.snapshotDirectory(root);
    if (!Files.isDirectory(dir)) {
      return;
    }
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.toList()) {
        String name = f.getFileName().toString();
        if (!name.startsWith(keep + "-") && !name.startsWith(keep + ".")) {
          Files.deleteIfExists(f);
        }
      }
    } catch (IOException e) {
      throw new DatabaseException("cannot delete old snapshots in " + dir + ": " + e.getMessage(), e);
    }
  }

  /**
   * Runs {@code change}, a call that writes outside the journal (a catalog change or an ad hoc write), then takes a
   * checkpoint so it is durable; replies produced meanwhile wait for that checkpoint.
   */
  <T> T unjournaled(java.util.function.Supplier<T> change) {
    java.util.concurrent.CompletableFuture<Void> checkpointed = new java.util.concurrent.CompletableFuture<>();
    server.holdRepliesUntil(checkpointed);
    try {
      T result = change.get();
      checkpoint(0, false);
      checkpointed.complete(null);
      return result;
    } catch (RuntimeException e) {
      checkpointed.completeExceptionally(e);
      throw e;
    }
  }

  /** Whether calling {@code procedure} with {@code params} changes the database without a journal record. */
  static boolean changesOutsideTheJournal(String procedure, Object[] params) {
    if ("@UpdateClasses".equals(procedure)) {
      return true;
    }
    if (!"@AdHoc".equals(procedure) || params.length == 0 || !(params[0] instanceof String sql)) {
      return false;
    }
    String first = sql.stripLeading().toUpperCase(java.util.Locale.ROOT);
    return !(first.startsWith("SELECT") || first.startsWith("WITH") || first.startsWith("EXPLAIN"));
  }

  /**
   * The checkpoint of a clean stop: pauses the database (client writes are refused from here on), checkpoints, and
   * stops the writer. A failure leaves the journal whole, so the next start replays it.
   */
  void checkpointForStop() {
    closed = true;
    if (checkpointer != null) {
      checkpointer.interrupt();
    }
    if (server.writer() == null) {
      return;
    }
    call("pausing the database before its stop checkpoint", "@Pause");
    Snapshots.drainExport(admin, Duration.ofSeconds(30));
    checkpoint(0, false);
  }

  private ClientResponse call(String what, String procedure, Object... params) {
    return call(admin, what, procedure, params);
  }

  static ClientResponse call(Client admin, String what, String procedure, Object... params) {
    try {
      return admin.callProcedure(procedure, params);
    } catch (ProcCallException e) {
      throw ApiaryDatabase.failure(what, e.getClientResponse(), e);
    } catch (IOException e) {
      throw new DatabaseException(what + ": cannot reach VoltDB: " + e.getMessage(), e);
    }
  }

  /** Stops checkpoints, writes what was appended, closes the writer and releases the directory. */
  @Override
  public void close() {
    closed = true;
    if (checkpointer != null) {
      checkpointer.interrupt();
    }
    try {
      JournalWriter w = server.writer();
      if (w != null) {
        w.close(Duration.ofSeconds(10));
      }
    } finally {
      ServerJournal.uninstall(server);
      try {
        if (admin != null) {
          admin.close();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        directory.close();
      }
    }
  }

  /** Whether {@code mode} journals at all. */
  static boolean journals(JournalMode mode) {
    return mode != null && mode != JournalMode.NONE;
  }

  /** Refuses a data directory whose deployment takes VoltDB's automatic snapshots (they would defeat the markers). */
  static void checkNoAutomaticSnapshots(Path root) {
    Path deployment = root.resolve("voltdbroot").resolve("config").resolve("deployment.xml");
    try {
      if (Files.exists(deployment) && Files.readString(deployment).matches("(?s).*<snapshot[^>]*enabled=\"true\".*")) {
        throw new DatabaseException(root + " was set up without a journal (VoltDB takes its automatic snapshots), so "
            + "it cannot be journaled: open it with journal mode none, or journal a new data directory");
      }
    } catch (IOException e) {
      throw new DatabaseException("cannot read " + deployment + ": " + e.getMessage(), e);
    }
  }

}
