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
    ApiaryDatabase db = database.database();
    TestGraphs.registerOnce(db);
    InvocationLog log = new InvocationLog(db);
    String run = "batch-" + System.nanoTime() + "-";
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
}
