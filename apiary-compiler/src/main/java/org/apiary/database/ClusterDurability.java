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
 * <p>Cost: one round trip and at most about two fsyncs per round, and each partition's site waits in its call for
 * the fsync of what it ran before (while it waits, that partition runs nothing else). Rounds follow one another, so
 * under load each round releases every reply that arrived during the one before (group commit across replies).
 */
final class ClusterDurability {
  private record Waiting(Runnable reply, Consumer<Throwable> failed) {}

  private final Client client;
  private final int[] keys;
  private final Object lock = new Object();
  private List<Waiting> waiting = new ArrayList<>();
  private boolean roundRunning;

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
      waiting.add(new Waiting(reply, failed));
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
    for (int key : keys) {
      try {
        boolean queued = client.callProcedure(r -> {
          if (r.getStatus() != ClientResponse.SUCCESS) {
            failure.compareAndSet(null, r.getStatusString());
          }
          if (left.decrementAndGet() == 0) {
            finish(batch, failure.get());
          }
        }, SystemSchema.JOURNAL_SYNC, key);
        if (!queued) {
          failure.compareAndSet(null, "the call was not queued (the client is backed up or has no connection)");
          if (left.decrementAndGet() == 0) {
            finish(batch, failure.get());
          }
        }
      } catch (IOException e) {
        failure.compareAndSet(null, e.getMessage());
        if (left.decrementAndGet() == 0) {
          finish(batch, failure.get());
        }
      }
    }
  }

  private void finish(List<Waiting> batch, String failure) {
    for (Waiting w : batch) {
      if (failure == null) {
        w.reply().run();
      } else {
        w.failed().accept(new JournalUnavailableException("the cluster could not confirm that its journals hold "
            + "this on disk: " + failure));
      }
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
