package org.apiary.runtime.journal;

import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apiary.journal.JournalRecord;
import org.apiary.journal.JournalUnavailableException;
import org.apiary.journal.JournalWriter;
import org.voltdb.VoltProcedure;

/**
 * The journal of the database server running in this process, as its procedures see it: while the server runs, the
 * {@link JournalWriter} committed write transactions are appended to; while recovery replays, the records each
 * partition is expected to run next. VoltDB loads procedures into the server's JVM, so a process-wide instance is
 * how they reach it (as {@link org.apiary.runtime.provenance.ServerProvenance} does for provenance).
 */
public final class ServerJournal {
  private static volatile ServerJournal current;

  private volatile JournalWriter writer;
  private volatile boolean replaying;
  private final Map<Integer, ConcurrentLinkedQueue<JournalRecord>> expected = new ConcurrentHashMap<>();
  private volatile String divergence;
  private final java.util.Set<CompletableFuture<Void>> holds = ConcurrentHashMap.newKeySet();
  private volatile int checkpointedCatalog = -1;
  private volatile CompletableFuture<Void> nextCheckpoint;

  private ServerJournal() {}

  /** The server's journal, or {@code null} if the server in this process journals nothing. */
  public static ServerJournal current() {
    return current;
  }

  /** Installs a journal that replays first; {@link #startWriting} switches it to appending. */
  public static ServerJournal installForReplay() {
    ServerJournal j = new ServerJournal();
    j.replaying = true;
    current = j;
    return j;
  }

  /** Removes the process's journal (the server stopped); closing its writer is the caller's. */
  public static void uninstall(ServerJournal journal) {
    if (current == journal) {
      current = null;
    }
  }

  /** Ends replay: from now on committed write transactions are appended to {@code w}. */
  public void startWriting(JournalWriter w) {
    writer = w;
    replaying = false;
    expected.clear();
  }

  /** As {@link #startWriting(JournalWriter)}, for a writer whose segments go to {@code directory}. */
  public void startWriting(JournalWriter w, java.nio.file.Path directory) {
    this.directory = directory;
    startWriting(w);
  }

  private volatile java.nio.file.Path directory;

  /** The directory the journal's segments are written to, or {@code null} if not known (or not writing yet). */
  public java.nio.file.Path directory() {
    return directory;
  }

  /** The writer, or {@code null} while replaying. */
  public JournalWriter writer() {
    return writer;
  }

  /** Whether recovery is replaying the journal. */
  public boolean replaying() {
    return replaying;
  }

  /** Appends a committed transaction's record; see {@link JournalWriter#append}. */
  public long append(int partition, long txnId, long uniqueId, int catalogVersion, long resultHash, String procedure,
                     String invocationId, String graph, int graphVersion, byte[] parameters) {
    JournalWriter w = writer;
    if (w == null) {
      throw new JournalUnavailableException("the journal is not open for writing (recovery has not finished)");
    }
    return w.append(partition, txnId, uniqueId, catalogVersion, resultHash, procedure, invocationId, graph,
        graphVersion, parameters);
  }

  /** The version of the running server's catalog (schema and procedures). */
  public static int catalogVersion() {
    return org.voltdb.VoltDB.instance().getCatalogContext().catalogVersion;
  }

  /**
   * A checkpoint holding catalog version {@code version} completed; {@code next} completes with the one after it.
   * Replies wait for a checkpoint whenever the catalog is newer than the last one's: the journal's records after a
   * catalog change can be replayed only on a snapshot that has the new catalog.
   */
  public void checkpointed(int version, CompletableFuture<Void> next) {
    CompletableFuture<Void> done = nextCheckpoint;
    checkpointedCatalog = version;
    nextCheckpoint = next;
    if (done != null) {
      done.complete(null);
    }
  }

  /** Completes once a checkpoint holding catalog version {@code needed} (or a later one) has completed. */
  private CompletableFuture<Void> catalogCheckpointed(int needed) {
    CompletableFuture<Void> next = nextCheckpoint; // read before the version: checkpointed() sets them the other way
    if (checkpointedCatalog >= needed || next == null) {
      return CompletableFuture.completedFuture(null);
    }
    return next.thenCompose(done -> catalogCheckpointed(needed));
  }

  /** Whether the catalog changed since the last checkpoint (the checkpointer then takes one at once). */
  public boolean catalogChanged() {
    return writer != null && catalogVersion() != checkpointedCatalog;
  }

  /** Fails the replies waiting for the next checkpoint (it failed); the next one is awaited afresh. */
  public void checkpointFailed(Throwable cause, CompletableFuture<Void> next) {
    CompletableFuture<Void> failed = nextCheckpoint;
    nextCheckpoint = next;
    if (failed != null) {
      failed.completeExceptionally(cause);
    }
  }

  /**
   * Completes once everything this server has committed so far is on disk: what a reply that was produced before
   * this call depends on. Completed at once when nothing waits.
   */
  public CompletableFuture<Void> whenCommittedIsDurable() {
    JournalWriter w = writer;
    CompletableFuture<Void> durable = w == null ? CompletableFuture.completedFuture(null)
        : w.whenDurable(w.lastAppended());
    if (w != null) {
      durable = CompletableFuture.allOf(durable, catalogCheckpointed(catalogVersion()));
    }
    if (holds.isEmpty()) {
      return durable;
    }
    return CompletableFuture.allOf(durable, CompletableFuture.allOf(holds.toArray(new CompletableFuture<?>[0])));
  }

  /**
   * Holds every reply produced from now on until {@code checkpointed} completes: a change the journal does not
   * record (a catalog change, an ad hoc write) is durable only once a checkpoint holds it, and transactions after it
   * may depend on it. Fails those replies if {@code checkpointed} fails.
   */
  public void holdRepliesUntil(CompletableFuture<Void> checkpointed) {
    holds.add(checkpointed);
    checkpointed.whenComplete((done, error) -> holds.remove(checkpointed));
  }

  /**
   * Runs {@code reply} once everything the database server in this process has committed so far is on disk, if it
   * journals synchronously; otherwise at once. A reply produced before this call depends on nothing later, so it then
   * leaves only once what it says is durable. Whatever connection produced the reply counts: in {@code apiary start}
   * the frontend reaches the server in its own process through a login of its own. If the journal failed for good,
   * {@code failed} runs instead with the reason: the transactions may be lost on a crash, so the outcome is not
   * acknowledged.
   */
  public static void whenDurable(Runnable reply, java.util.function.Consumer<Throwable> failed) {
    ServerJournal j = current;
    JournalWriter w = j == null ? null : j.writer;
    if (w == null || w.settings().mode() != org.apiary.journal.JournalMode.SYNCHRONOUS) {
      reply.run();
      return;
    }
    j.whenCommittedIsDurable().whenComplete((done, error) -> {
      if (error == null) {
        reply.run();
      } else {
        failed.accept(error);
      }
    });
  }

  // ---- a cluster node ----------------------------------------------------------------------------------------

  /** {@link #control} operations, sent by the cluster's recovery and checkpoints through {@code JournalControl}. */
  public static final int NOTHING = 0;
  /** See {@link #control}. */
  public static final int START_WRITING = 1;
  /** See {@link #control}. */
  public static final int CHECKPOINT_BEGINS = 2;
  /** See {@link #control}. */
  public static final int CHECKPOINT_DONE = 3;
  /** See {@link #control}. */
  public static final int CHECKPOINT_REQUESTED = 4;
  /**
   * Not a {@link #control} operation: {@code apiary_journal_control} with it runs {@link #awaitDurable} on the site
   * that calls it (see {@code JournalSync}).
   */
  public static final int SYNC = 5;
  /** The longest {@link #awaitDurable} holds a site. */
  public static final java.time.Duration SYNC_TIMEOUT = java.time.Duration.ofSeconds(30);

  private volatile org.apiary.journal.JournalDirectory nodeDirectory;
  private volatile JournalWriter.Settings nodeSettings;
  private volatile java.util.function.LongConsumer checkpointDone;
  private volatile long secret;
  private volatile boolean checkpointRequested;
  private final Map<Long, Long> checkpointStarts = new ConcurrentHashMap<>();
  private long lastCheckpointDone = -1;

  /**
   * Installs the journal of a cluster node ({@code org.apiary.database.JournaledNode}): it replays until the
   * cluster's recovery tells it ({@link #START_WRITING}) which timeline to write, and it
   * {@link #marksPartitions marks partitions}.
   *
   * @param checkpointDone called once per completed checkpoint with its ID (the node deletes its snapshots that
   *     the checkpoint made redundant)
   * @param secret the cluster's journal secret: the journal's SQL functions act only for a caller that passes it
   *     (Apiary's own procedures), not for any user who may run a query
   */
  public static ServerJournal installForNode(org.apiary.journal.JournalDirectory directory,
                                             JournalWriter.Settings settings,
                                             java.util.function.LongConsumer checkpointDone, long secret) {
    ServerJournal j = installForReplay();
    j.secret = secret;
    j.nodeDirectory = directory;
    j.nodeSettings = settings;
    j.checkpointDone = checkpointDone;
    j.directory = directory.path();
    return j;
  }

  /**
   * Whether multi-partition transactions mark their place in each partition's journal: in a cluster node, where a
   * multi-partition transaction's record is written by its coordinator's node only.
   */
  public boolean marksPartitions() {
    return nodeDirectory != null;
  }

  /** The secret Apiary's procedures pass to the journal's SQL functions (0 outside a cluster node). */
  public long secret() {
    return secret;
  }

  /**
   * Refuses a call of the journal's SQL functions that did not come from Apiary's own procedures: anyone who may
   * query could otherwise append marks or have every node delete its snapshots.
   *
   * @throws IllegalArgumentException if {@code token} is not the cluster's secret
   */
  public void checkCaller(long token) {
    if (nodeDirectory != null && token != secret) {
      throw new IllegalArgumentException("the journal's functions are Apiary's own; this call was refused");
    }
  }

  /**
   * Appends a mark: multi-partition transaction {@code txnId} is running on {@code partition}, whose site is blocked
   * in it (called there, from {@code apiary_journal_mark}). Nothing while replaying: the replayed transaction's
   * marks are in the journal being replayed.
   *
   * @throws JournalUnavailableException if the journal takes no records now; the transaction then rolls back
   */
  public void mark(int partition, long txnId) {
    JournalWriter w = writer;
    if (w != null && !replaying) {
      w.appendMark(partition, txnId, catalogVersion());
    }
  }

  /**
   * A control operation of the cluster's journal, run on every site of every node while each is blocked in the same
   * multi-partition transaction (so every node acts at the same place in its partitions' orders):
   * {@link #START_WRITING} timeline {@code arg} (recovery checkpointed it; older timelines are deleted),
   * {@link #CHECKPOINT_BEGINS} checkpoint {@code arg} (the node notes its last record: everything up to it will be in
   * the checkpoint's snapshot), {@link #CHECKPOINT_DONE} checkpoint {@code arg} (its snapshot is complete: segments
   * before the noted record, and the node's older snapshots, are deleted), {@link #CHECKPOINT_REQUESTED} (the
   * cluster's checkpointer takes one as soon as it can; see {@link #takeCheckpointRequest}). Repeats on the node's
   * other sites do nothing.
   */
  public synchronized void control(int operation, long arg) {
    if (nodeDirectory == null) {
      return; // not a cluster node's journal
    }
    switch (operation) {
      case NOTHING -> { }
      case START_WRITING -> {
        JournalWriter w = writer;
        if (w != null && w.timeline() == arg) {
          return;
        }
        if (w != null) {
          throw new IllegalStateException("the journal already writes timeline " + Long.toHexString(w.timeline())
              + "; it was asked to start " + Long.toHexString(arg));
        }
        startWriting(JournalWriter.start(nodeDirectory, arg, 1, nodeSettings), nodeDirectory.path());
        nodeDirectory.deleteTimelinesOtherThan(arg);
      }
      case CHECKPOINT_BEGINS -> {
        JournalWriter w = writer;
        if (w != null) {
          checkpointStarts.putIfAbsent(arg, w.lastAppended());
        }
      }
      case CHECKPOINT_DONE -> {
        if (arg == lastCheckpointDone) {
          return;
        }
        lastCheckpointDone = arg;
        Long before = checkpointStarts.remove(arg);
        JournalWriter w = writer;
        if (before != null && w != null) {
          w.deleteSegmentsBefore(before + 1);
        }
        checkpointDone.accept(arg);
      }
      case CHECKPOINT_REQUESTED -> checkpointRequested = true;
      default -> throw new IllegalArgumentException("unknown journal control operation " + operation);
    }
  }

  /**
   * Blocks the calling database site until every record this node has appended so far is on disk: the durable
   * watermark, reached from another process. A synchronous cluster's reply holders run {@code JournalSync} on every
   * partition after the transactions a reply reports have completed; every replica runs it, after those
   * transactions (a site runs one transaction at a time and appends a record before its transaction ends), so when
   * the call returns every node's journal holds them on disk. Returns at once while the node replays (it writes
   * nothing then). Not {@code synchronized}: a site waits here while the other sites go on.
   *
   * @throws JournalUnavailableException if the journal failed for good or the records are not on disk within
   *     {@link #SYNC_TIMEOUT}; the waiting replies then fail as of unknown outcome
   */
  public void awaitDurable() {
    JournalWriter w = writer;
    if (w == null || replaying) {
      return;
    }
    try {
      w.whenDurable(w.lastAppended()).get(SYNC_TIMEOUT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new JournalUnavailableException("this node's journal cannot make its records durable: "
          + e.getCause().getMessage());
    } catch (java.util.concurrent.TimeoutException e) {
      throw new JournalUnavailableException("this node's journal did not make its records durable within "
          + SYNC_TIMEOUT + (w.failure() == null ? "" : ": " + w.failure()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new JournalUnavailableException("interrupted while waiting for this node's journal");
    }
  }

  /** Whether a checkpoint was requested since the last call (and clears the request). */
  public boolean takeCheckpointRequest() {
    boolean requested = checkpointRequested;
    checkpointRequested = false;
    return requested;
  }

  /** Closes a node's writer and releases its directory (the node's JVM is stopping). */
  public void closeNode(java.time.Duration timeout) {
    try {
      JournalWriter w = writer;
      if (w != null) {
        w.close(timeout);
      }
    } finally {
      if (nodeDirectory != null) {
        nodeDirectory.close();
      }
    }
  }

  /** Queues each of the encoded records ({@code JournalFormat.encodeRecords}) as the next its partition must run. */
  public void expectBatch(byte[] encoded) {
    for (JournalRecord r : org.apiary.journal.JournalFormat.decodeRecords(encoded)) {
      expectNext(r);
    }
  }

  // ---- replay -----------------------------------------------------------------------------------------------

  /** Queues {@code record} as the next transaction its partition must run (called by recovery before sending it). */
  public void expectNext(JournalRecord record) {
    expected.computeIfAbsent(record.partition(), p -> new ConcurrentLinkedQueue<>()).add(record);
  }

  /**
   * The record a transaction starting now on {@code partition} replays, checked against what runs: the same
   * procedure with the same parameters. Called on the database site.
   *
   * @throws VoltProcedure.VoltAbortException if something else runs there; recovery then stops with the reason
   */
  public JournalRecord expect(int partition, String procedure, byte[] parameters) {
    ConcurrentLinkedQueue<JournalRecord> queue = expected.get(partition);
    JournalRecord head = queue == null ? null : queue.peek();
    if (head == null) {
      return null;
    }
    if (!head.procedure().equals(procedure) || !Arrays.equals(head.parameters(), parameters)) {
      throw diverged(head + " was expected next on partition " + partition + ", but " + procedure + " ran there "
          + (head.procedure().equals(procedure) ? "with other parameters" : "instead"));
    }
    return head;
  }

  /** A replayed transaction committed with a result hashing to {@code resultHash}; checks it against its record. */
  public void replayed(JournalRecord record, long resultHash) {
    if (record.resultHash() != resultHash) {
      throw diverged(record + " gave another result when run again than when it first ran: its function is not "
          + "deterministic (it must reach data only through SQL and draw time and randomness only from its context)");
    }
    ConcurrentLinkedQueue<JournalRecord> queue = expected.get(record.partition());
    if (queue == null || queue.poll() != record) {
      throw diverged(record + " completed out of its turn");
    }
  }

  private VoltProcedure.VoltAbortException diverged(String what) {
    String message = "recovery diverged: " + what;
    if (divergence == null) {
      divergence = message;
    }
    return new VoltProcedure.VoltAbortException(message);
  }

  /** The first divergence replay saw, or {@code null}. */
  public String divergence() {
    return divergence;
  }
}
