package org.apiary.database;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.apiary.journal.JournalUnavailableException;
import org.apiary.runtime.SystemSchema;
import org.voltdb.VoltTable;
import org.voltdb.client.Client;
import org.voltdb.client.ClientResponse;

/**
 * Holds replies until a synchronously journaled cluster has them on disk on every node: the cluster side of
 * {@link ApiaryDatabase#whenDurable}, for a process that is a client of the cluster (a frontend, a direct
 * {@code FunctionInvoker} call).
 *
 * <p>How the durable watermark reaches the reply: not as a number. Every node journals on its own, and what a
 * transaction's reply says is the same on every replica, so no reply can carry one node's watermark. Instead, rounds:
 * a reply waits for the next round to start; a round calls {@code JournalSync} once on every partition, all at once,
 * and releases the replies that were waiting when it started once every call has answered. {@code JournalSync} is a
 * write, so VoltDB runs it on every replica of its partition, after every transaction the partition ran before it (so
 * after the held replies' transactions, which had answered before the round began), and answers only once each
 * replica has: each replica's site waits there until its node's journal has on disk everything that node appended
 * ({@code ServerJournal.awaitDurable}). Every node holds some partition, so one round reaches every node's journal,
 * multi-partition records (written by the coordinating node) included. Every partition, not only those a reply's
 * transactions wrote: a reply may also have read another transaction's write that is not on disk yet.
 *
 * <p>A catalog change (a deployment) is not journaled: the records after it replay only on a checkpoint that holds
 * the new catalog (recovery drops, reporting them, the records of a catalog no checkpoint holds), and the cluster
 * takes one at once after each change ({@code NodeCheckpointer}). So {@code JournalSync} also returns the catalog's
 * version, and a round whose version is newer than the newest this client saw checkpointed releases its replies
 * only once the checkpoint marker ({@code APIARY_JOURNAL_CHECKPOINT}) names a catalog at least as new and that
 * checkpoint's snapshot has completed on every node ({@code @Statistics SNAPSHOTSTATUS}); until then the round is
 * run again every {@value #CHECKPOINT_POLL_MS} ms, and after {@link #CHECKPOINT_WAIT} its replies fail.
 *
 * <p>Cost: one round trip and at most about two fsyncs per round, and each partition's site waits in its call for
 * the fsync of what it ran before (while it waits, that partition runs nothing else). Rounds follow one another, so
 * under load each round releases every reply that arrived during the one before (group commit across replies).
 */
final class ClusterDurability {
  private record Waiting(Runnable reply, Consumer<Throwable> failed, long since) {}

  /** How often a round whose catalog is not checkpointed yet is run again. */
  static final long CHECKPOINT_POLL_MS = 50;
  /** How long replies wait for a checkpoint of a new catalog before they fail. */
  static final java.time.Duration CHECKPOINT_WAIT = java.time.Duration.ofMinutes(2);
  private static final java.util.concurrent.Executor LATER = java.util.concurrent.CompletableFuture.delayedExecutor(
      CHECKPOINT_POLL_MS, java.util.concurrent.TimeUnit.MILLISECONDS);

  private final Client client;
  private final int[] keys;
  private final Object lock = new Object();
  private List<Waiting> waiting = new ArrayList<>();
  private boolean roundRunning;
  /** The newest catalog version a completed checkpoint is known to hold. */
  private volatile long checkpointedCatalog = -1;

  private ClusterDurability(Client client, int[] keys) {
    this.client = client;
    this.keys = keys;
  }

  /**
   * The gate for the database {@code client} reaches, or {@code null} if it is not a synchronously journaled cluster
   * (it has no {@value SystemSchema#JOURNAL_SYNC}). Read once, when the connection opens.
   */
  static ClusterDurability detect(Client client) {
    VoltTable procedures = call(client, "@SystemCatalog", "PROCEDURES");
    boolean synchronous = false;
    while (procedures.advanceRow()) {
      synchronous |= SystemSchema.JOURNAL_SYNC.equalsIgnoreCase(procedures.getString("PROCEDURE_NAME"));
    }
    if (!synchronous) {
      return null;
    }
    VoltTable t = call(client, "@GetPartitionKeys", "INTEGER");
    List<Integer> keys = new ArrayList<>();
    while (t.advanceRow()) {
      keys.add((int) t.getLong(1));
    }
    return new ClusterDurability(client, keys.stream().mapToInt(Integer::intValue).toArray());
  }

  private static VoltTable call(Client client, String procedure, Object... params) {
    try {
      ClientResponse r = client.callProcedure(procedure, params);
      return r.getResults()[0];
    } catch (IOException | org.voltdb.client.ProcCallException e) {
      throw new org.apiary.DatabaseException("cannot tell whether the database journals synchronously ("
          + procedure + " failed): " + e.getMessage(), e);
    }
  }

  /** Runs {@code reply} once a round that started after this call has answered; {@code failed} if it failed. */
  void whenDurable(Runnable reply, Consumer<Throwable> failed) {
    boolean start;
    synchronized (lock) {
      waiting.add(new Waiting(reply, failed, System.nanoTime()));
      start = !roundRunning;
      roundRunning = true;
    }
    if (start) {
      round();
    }
  }

  private void round() {
    List<Waiting> batch;
    synchronized (lock) {
      batch = waiting;
      waiting = new ArrayList<>();
    }
    AtomicInteger left = new AtomicInteger(keys.length);
    AtomicReference<String> failure = new AtomicReference<>();
    java.util.concurrent.atomic.AtomicLong catalog = new java.util.concurrent.atomic.AtomicLong(-1);
    Runnable done = () -> {
      if (left.decrementAndGet() == 0) {
        synced(batch, failure.get(), catalog.get());
      }
    };
    for (int key : keys) {
      try {
        boolean queued = client.callProcedure(r -> {
          if (r.getStatus() != ClientResponse.SUCCESS) {
            failure.compareAndSet(null, r.getStatusString());
          } else {
            catalog.accumulateAndGet(r.getResults()[0].asScalarLong(), Math::max);
          }
          done.run();
        }, SystemSchema.JOURNAL_SYNC, key);
        if (!queued) {
          failure.compareAndSet(null, "the call was not queued (the client is backed up or has no connection)");
          done.run();
        }
      } catch (IOException e) {
        failure.compareAndSet(null, e.getMessage());
        done.run();
      }
    }
  }

  /** Every partition answered: releases the batch, unless its catalog still waits for a checkpoint. */
  private void synced(List<Waiting> batch, String failure, long catalog) {
    if (failure != null || catalog <= checkpointedCatalog) {
      finish(batch, failure);
      return;
    }
    checkpointed(catalog).whenComplete((held, error) -> {
      if (error == null && held) {
        finish(batch, null);
        return;
      }
      List<Waiting> expired = new ArrayList<>();
      List<Waiting> again = new ArrayList<>();
      for (Waiting w : batch) {
        (System.nanoTime() - w.since() > CHECKPOINT_WAIT.toNanos() ? expired : again).add(w);
      }
      finish(expired, "no checkpoint holds catalog version " + catalog + " (the cluster takes one after each "
          + "catalog change) within " + CHECKPOINT_WAIT + (error == null ? "" : ": " + error.getMessage()), false);
      synchronized (lock) {
        waiting.addAll(again); // the next round, a moment later
      }
      LATER.execute(() -> finish(List.of(), null));
    });
  }

  /**
   * Whether the checkpoint the marker names holds catalog {@code catalog} or a newer one and has completed on every
   * node (then remembered); asynchronous, as it runs on the client's callback thread.
   */
  private java.util.concurrent.CompletableFuture<Boolean> checkpointed(long catalog) {
    return call("SELECT catalog_version, nonce FROM " + DatabaseJournal.CHECKPOINT + " WHERE id = 0;")
        .thenCompose(marker -> {
          if (!marker.advanceRow() || marker.getLong(0) < catalog) {
            return java.util.concurrent.CompletableFuture.completedFuture(false);
          }
          long held = marker.getLong(0);
          String nonce = marker.getString(1);
          return callStatistics().thenApply(status -> {
            boolean found = false;
            while (status.advanceRow()) {
              if (nonce.equals(status.getString("NONCE"))) {
                if (status.getLong("END_TIME") <= 0 || !"SUCCESS".equals(status.getString("RESULT"))) {
                  return false;
                }
                found = true;
              }
            }
            if (found) {
              checkpointedCatalog = Math.max(checkpointedCatalog, held);
            }
            return found;
          });
        });
  }

  private java.util.concurrent.CompletableFuture<VoltTable> call(String sql) {
    return callAsync("@AdHoc", sql);
  }

  private java.util.concurrent.CompletableFuture<VoltTable> callStatistics() {
    return callAsync("@Statistics", "SNAPSHOTSTATUS", 0);
  }

  private java.util.concurrent.CompletableFuture<VoltTable> callAsync(String procedure, Object... params) {
    java.util.concurrent.CompletableFuture<VoltTable> f = new java.util.concurrent.CompletableFuture<>();
    try {
      boolean queued = client.callProcedure(r -> {
        if (r.getStatus() == ClientResponse.SUCCESS) {
          f.complete(r.getResults()[0]);
        } else {
          f.completeExceptionally(new org.apiary.DatabaseException(procedure + " failed: " + r.getStatusString()));
        }
      }, procedure, params);
      if (!queued) {
        f.completeExceptionally(new org.apiary.DatabaseException(procedure + " was not queued"));
      }
    } catch (IOException e) {
      f.completeExceptionally(e);
    }
    return f;
  }

  private void finish(List<Waiting> batch, String failure) {
    finish(batch, failure, true);
  }

  /** Answers {@code batch}; if {@code next}, then starts the next round if replies wait (else ends the rounds). */
  private void finish(List<Waiting> batch, String failure, boolean next) {
    for (Waiting w : batch) {
      try {
        if (failure == null) {
          w.reply().run();
        } else {
          w.failed().accept(new JournalUnavailableException("the cluster could not confirm that its journals hold "
              + "this on disk: " + failure));
        }
      } catch (RuntimeException e) { // one holder's failure must not stop the rounds for every other reply
        System.getLogger(ClusterDurability.class.getName()).log(System.Logger.Level.WARNING,
            "a held reply failed when released: " + e, e);
      }
    }
    if (!next) {
      return;
    }
    boolean again;
    synchronized (lock) {
      again = !waiting.isEmpty();
      roundRunning = again;
    }
    if (again) {
      round();
    }
  }
}
