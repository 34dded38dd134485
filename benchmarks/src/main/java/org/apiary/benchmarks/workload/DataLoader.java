package org.apiary.benchmarks.workload;

import java.io.IOException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apiary.database.ApiaryDatabase;
import org.voltdb.client.ClientResponse;
import org.voltdb.client.Client;

/**
 * Loads a workload's initial rows through VoltDB's generated {@code TABLE.insert} procedures, many in flight at
 * once. The first failure is reported by {@link #finish()}.
 */
public final class DataLoader {
  private static final int IN_FLIGHT = 2_000;

  private final Client client;
  private final Semaphore permits = new Semaphore(IN_FLIGHT);
  private final AtomicReference<String> failure = new AtomicReference<>();
  private long rows;

  public DataLoader(ApiaryDatabase db) {
    this.client = db.client();
  }

  /** Queues one row of {@code table}, columns in the table's order. */
  public void insert(String table, Object... row) throws InterruptedException {
    if (!permits.tryAcquire(60, TimeUnit.SECONDS)) {
      throw new IllegalStateException("loading " + table + ": no answer from the database for 60 s");
    }
    rows++;
    try {
      boolean queued = client.callProcedure(r -> {
        permits.release();
        if (r.getStatus() != ClientResponse.SUCCESS) {
          failure.compareAndSet(null, table + ": " + r.getStatusString());
        }
      }, table.toUpperCase(java.util.Locale.ROOT) + ".insert", row);
      if (!queued) {
        permits.release();
        failure.compareAndSet(null, table + ": insert not queued");
      }
    } catch (IOException e) {
      permits.release();
      throw new IllegalStateException("loading " + table + ": " + e.getMessage(), e);
    }
  }

  /** Waits for every queued row; returns how many were loaded. */
  public long finish() throws InterruptedException {
    if (!permits.tryAcquire(IN_FLIGHT, 120, TimeUnit.SECONDS)) {
      throw new IllegalStateException("loading did not finish within 120 s");
    }
    permits.release(IN_FLIGHT);
    if (failure.get() != null) {
      throw new IllegalStateException("loading failed: " + failure.get());
    }
    return rows;
  }
}
