package org.apiary.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apiary.database.ApiaryDatabase;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.Test;

/** The invocation log's batched writes against the real database: one outcome per invocation, many per transaction. */
@DatabaseTest
class InvocationLogTest {
  @Test
  void concurrentBeginsShareTransactionsAndEachIdBeginsOnce(TestDatabase database) throws Exception {
    beginTwiceAndEndTwice(database.database(), "batch-" + System.nanoTime() + "-");
  }

  /**
   * Begins 200 invocations, each twice, then stores two outcomes of each, all at once through one invocation log:
   * each begins once, in fewer transactions than writes, and only its first outcome is stored.
   */
  static void beginTwiceAndEndTwice(ApiaryDatabase db, String run) throws Exception {
    TestGraphs.registerOnce(db);
    InvocationLog log = new InvocationLog(db);
    List<CompletableFuture<Boolean>> begins = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      begins.add(log.begin(run + (i % 200), "bumpAndReport", 1, new byte[] {'{', '}'}, "frontend-x"));
    }
    int logged = 0;
    for (CompletableFuture<Boolean> b : begins) {
      logged += b.get(30, TimeUnit.SECONDS) ? 1 : 0;
    }
    assertEquals(200, logged, "each of 200 IDs, sent twice, is logged exactly once");
    assertTrue(log.batchedTransactions() < 400, "400 writes took " + log.batchedTransactions() + " transactions");

    List<CompletableFuture<Boolean>> finishes = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      finishes.add(log.finish(run + i, InvocationLog.DONE, ("{\"n\":" + i + "}").getBytes()));
      finishes.add(log.finish(run + i, InvocationLog.FAILED, "{}".getBytes()));
    }
    for (int i = 0; i < 200; i++) {
      assertTrue(finishes.get(2 * i).get(30, TimeUnit.SECONDS), "the first outcome is stored");
      assertFalse(finishes.get(2 * i + 1).get(30, TimeUnit.SECONDS), "a second outcome is not");
      assertEquals(InvocationLog.DONE, log.get(run + i).get(30, TimeUnit.SECONDS).orElseThrow().status());
    }
  }

  /**
   * Recovery takes up only invocations that nobody runs: a loaded frontend whose invocations all end must never
   * recover one of them (before, each heartbeat re-claimed those that ended while it read the list of running ones).
   */
  @Test
  void recoveryLeavesAloneInvocationsThatEndedWhileItLooked(TestDatabase database) throws Exception {
    ApiaryDatabase db = database.database();
    TestGraphs.registerOnce(db);
    java.util.concurrent.atomic.AtomicInteger recovered = new java.util.concurrent.atomic.AtomicInteger();
    FrontendHooks counting = new FrontendHooks() {
      @Override
      public void recovering(String invocation) {
        recovered.incrementAndGet();
      }
    };
    FrontendConfig config = FrontendConfig.defaults().withLease(java.time.Duration.ofSeconds(2),
        java.time.Duration.ofMillis(50));
    try (FrontendServer frontend = FrontendServer.start(db, config, counting);
         org.apiary.client.ApiaryClient client = org.apiary.client.ApiaryClient.connect(
             org.apiary.client.ClientConfig.of(frontend.endpoint()))) {
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
      int calls = 0;
      while (System.nanoTime() < until) { // heartbeats every 50 ms while hundreds of invocations start and end
        List<CompletableFuture<org.apiary.client.GraphResult>> wave = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
          wave.add(client.invokeAsync("bumpAndReport", (long) (i % 50), 1L));
        }
        for (CompletableFuture<org.apiary.client.GraphResult> c : wave) {
          c.get(30, TimeUnit.SECONDS);
        }
        calls += wave.size();
      }
      Thread.sleep(300); // a few more heartbeats after the last invocation ended
      assertEquals(0, recovered.get(), "recovery took up " + recovered.get() + " of " + calls
          + " invocations that ran and ended here");
    }
  }
}
