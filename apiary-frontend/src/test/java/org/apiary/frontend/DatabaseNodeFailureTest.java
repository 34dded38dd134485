package org.apiary.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.apiary.ApiaryException;
import org.apiary.Application;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.InvocationRequest;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.LocalCluster;
import org.apiary.frontend.holes.HolesApp;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.voltdb.VoltTable;

/**
 * Exactly-once across a database node failure: a 2-node k-safe VoltDB cluster (separate server processes) serves
 * increments through a frontend while one node is killed with SIGKILL; transactions caught in the failover end
 * with an unknown outcome, clients resend them with the same invocation ID, and every counter ends equal to the
 * increments clients saw acknowledged.
 */
@Tag("database")
class DatabaseNodeFailureTest {
  @Test
  void killingADatabaseNodeLosesAndDuplicatesNoIncrement() throws Exception {
    try (LocalCluster cluster = LocalCluster.start(2, 2, 1, Duration.ofSeconds(180));
         ApiaryDatabase db = ApiaryDatabase.open(cluster.config())) {
      Registrar.register(db, Application.of(HolesApp.SCHEMA, HolesApp.ONE_BUMP));
      int keys = 16;
      AtomicLongArray acknowledged = new AtomicLongArray(keys);
      AtomicLong unanswered = new AtomicLong();
      AtomicBoolean stop = new AtomicBoolean();
      try (FrontendServer frontend = FrontendServer.start(db, FrontendConfig.defaults())) {
        List<Thread> clients = new ArrayList<>();
        for (int c = 0; c < 4; c++) {
          SplittableRandom random = new SplittableRandom(c);
          Thread t = new Thread(() -> {
            // A transaction caught in the failover gets an unknown or refused outcome; the client resends it
            // with the same invocation ID until it gets a definite answer or the attempts run out.
            try (ApiaryClient client = ApiaryClient.connect(ClientConfig.of(frontend.endpoint())
                .withAttemptTimeout(Duration.ofSeconds(10)).withMaxAttempts(30))) {
              while (!stop.get()) {
                int key = random.nextInt(keys);
                try {
                  client.invoke(InvocationRequest.of("h_oneBump", (long) key, 1L));
                  acknowledged.incrementAndGet(key);
                } catch (ApiaryException e) {
                  unanswered.incrementAndGet();
                }
              }
            }
          }, "node-failure-client-" + c);
          clients.add(t);
          t.start();
        }
        // Wait for progress rather than for a fixed time: on a loaded machine the first answers can take seconds.
        long before = awaitMoreThan(acknowledged, 20, "before the node was killed");
        cluster.nodes().get(1).kill();
        awaitMoreThan(acknowledged, before + 20, "after the node was killed");
        stop.set(true);
        for (Thread t : clients) {
          t.join(Duration.ofSeconds(180).toMillis());
          assertTrue(!t.isAlive(), "a client did not finish");
        }
        assertTrue(before > 0, "increments were acknowledged before the node was killed");
        assertTrue(sum(acknowledged) > before, "increments were acknowledged after the node was killed");
      }
      assertEquals(0, unanswered.get(), "every request got an answer in the end");
      long[] values = new long[keys];
      VoltTable t = db.callAdmin("reading counters", "@AdHoc", "SELECT k, v FROM h_counters").getResults()[0];
      while (t.advanceRow()) {
        values[(int) t.getLong(0)] = t.getLong(1);
      }
      for (int k = 0; k < keys; k++) {
        assertEquals(acknowledged.get(k), values[k], "counter " + k);
      }
    }
  }

  /** Waits (at most 120 s) until more than {@code floor} increments were acknowledged; returns how many were. */
  private static long awaitMoreThan(AtomicLongArray acknowledged, long floor, String when)
      throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    long seen;
    while ((seen = sum(acknowledged)) <= floor) {
      assertTrue(System.nanoTime() < deadline, "no more than " + floor + " increments were acknowledged " + when
          + " within 120 s (" + seen + ")");
      Thread.sleep(50);
    }
    return seen;
  }

  private static long sum(AtomicLongArray a) {
    long s = 0;
    for (int i = 0; i < a.length(); i++) {
      s += a.get(i);
    }
    return s;
  }
}
