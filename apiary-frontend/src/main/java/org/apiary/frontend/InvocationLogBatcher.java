package org.apiary.frontend;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apiary.DatabaseException;
import org.apiary.database.ApiaryDatabase;
import org.apiary.runtime.SystemSchema;
import org.apiary.runtime.procedure.InvocationLogBatch;
import org.voltdb.VoltTable;
import org.voltdb.VoltType;
import org.voltdb.client.ClientImpl;
import org.voltdb.client.ClientResponse;

/**
 * Groups the invocation-log writes (begins and outcomes) of one partition into one transaction. Each partition has
 * at most {@value #MAX_IN_FLIGHT} batches in flight: a write that arrives while they are waits for one to return and
 * goes with the next, so an idle frontend sends each write at once and a loaded one sends many per transaction.
 * Writes whose partition the client cannot tell, and large outcomes, go alone.
 */
final class InvocationLogBatcher {
  /** A batch stops growing at about this many bytes (VoltDB bounds a parameter's size). */
  private static final int MAX_BATCH_BYTES = 256 * 1024;
  /** Batches of one partition in flight at once: more overlap round trips, fewer share transactions. */
  private static final int MAX_IN_FLIGHT = 4;

  /**
   * What one write did.
   *
   * @param code {@link InvocationLogBatch#APPLIED}, {@link InvocationLogBatch#NOT_APPLIED} or
   *     {@link InvocationLogBatch#PAST_DEADLINE}
   * @param startedAtMillis for a begin that applied, the invocation's start as logged (database clock), else 0
   */
  record Applied(byte code, long startedAtMillis) {
    boolean applied() {
      return code == InvocationLogBatch.APPLIED;
    }
  }

  private record Pending(InvocationLogBatch.Write write, CompletableFuture<Applied> applied, int bytes) {}

  /** The writes waiting for one partition, and whether a batch of it is in flight. Guarded by itself. */
  private static final class PartitionQueue {
    final List<Pending> waiting = new ArrayList<>();
    int inFlight;
  }

  private final ApiaryDatabase db;
  private final Map<Long, PartitionQueue> queues = new ConcurrentHashMap<>();
  private final java.util.concurrent.atomic.AtomicLong transactions = new java.util.concurrent.atomic.AtomicLong();

  InvocationLogBatcher(ApiaryDatabase db) {
    this.db = db;
  }

  /** Applies one write; completes with what it did (began a new invocation, or stored the outcome, or neither). */
  CompletableFuture<Applied> submit(InvocationLogBatch.Write write) {
    int bytes = 64 + (write instanceof InvocationLogBatch.Begin b ? b.request().length
        : ((InvocationLogBatch.Finish) write).result().length);
    Pending p = new Pending(write, new CompletableFuture<>(), bytes);
    long partition = partitionOf(write.invocationId());
    if (partition < 0 || bytes > MAX_BATCH_BYTES) {
      send(null, List.of(p));
      return p.applied();
    }
    PartitionQueue q = queues.computeIfAbsent(partition, k -> new PartitionQueue());
    List<Pending> batch;
    synchronized (q) {
      q.waiting.add(p);
      if (q.inFlight >= MAX_IN_FLIGHT) {
        return p.applied();
      }
      q.inFlight++;
      batch = take(q);
    }
    send(q, batch);
    return p.applied();
  }

  private long partitionOf(String invocationId) {
    try {
      return db.client() instanceof ClientImpl c
          ? c.getPartitionForParameter(VoltType.STRING.getValue(), invocationId) : -1;
    } catch (RuntimeException e) { // no hashinator yet (topology unknown): send it alone
      return -1;
    }
  }

  /** Takes up to {@link #MAX_BATCH_BYTES} of waiting writes. Holds the queue's monitor. */
  private static List<Pending> take(PartitionQueue q) {
    List<Pending> batch = new ArrayList<>();
    int bytes = 0;
    while (!q.waiting.isEmpty() && (batch.isEmpty() || bytes + q.waiting.get(0).bytes() <= MAX_BATCH_BYTES)) {
      Pending p = q.waiting.remove(0);
      bytes += p.bytes();
      batch.add(p);
    }
    return batch;
  }

  /** How many transactions this batcher has sent (tests check that writes share them). */
  long transactions() {
    return transactions.get();
  }

  private void send(PartitionQueue q, List<Pending> batch) {
    transactions.incrementAndGet();
    String what = "writing " + batch.size() + " invocation-log entr" + (batch.size() == 1 ? "y" : "ies");
    byte[] encoded = InvocationLogBatch.encode(batch.stream().map(Pending::write).toList());
    try {
      boolean queued = db.client().callProcedure(r -> {
        completed(batch, what, r);
        next(q);
      }, SystemSchema.LOG_BATCH, batch.get(0).write().invocationId(), encoded);
      if (!queued) {
        fail(batch, new DatabaseException(what + ": the database client has no connection"));
        next(q);
      }
    } catch (IOException | RuntimeException e) {
      fail(batch, new DatabaseException(what + ": " + e.getMessage(), e));
      next(q);
    }
  }

  private void next(PartitionQueue q) {
    if (q == null) {
      return;
    }
    List<Pending> batch;
    synchronized (q) {
      if (q.waiting.isEmpty()) {
        q.inFlight--;
        return;
      }
      batch = take(q); // this batch's slot passes to the next
    }
    send(q, batch);
  }

  private static void completed(List<Pending> batch, String what, ClientResponse r) {
    if (r.getStatus() != ClientResponse.SUCCESS) {
      fail(batch, ApiaryDatabase.failure(what, r, null));
      return;
    }
    VoltTable t = r.getResults()[0];
    for (Pending p : batch) {
      t.advanceRow();
      // Procedures of earlier releases return APPLIED only.
      p.applied().complete(new Applied((byte) t.getLong(0), t.getColumnCount() > 1 ? t.getLong(1) : 0L));
    }
  }

  private static void fail(List<Pending> batch, RuntimeException e) {
    batch.forEach(p -> p.applied().completeExceptionally(e));
  }
}
