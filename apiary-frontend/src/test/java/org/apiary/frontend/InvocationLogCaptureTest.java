package org.apiary.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apiary.database.ApiaryDatabase;
import org.apiary.runtime.provenance.ServerProvenance;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.Test;

/**
 * The invocation log's batched writes while the server captures provenance, when each stored outcome also reads its
 * entry back: a transaction storing many outcomes runs more statements than VoltDB runs in one batch, and VoltDB's own
 * split of such a batch answered updates with tables that were no longer one ("column 1 is type = INVALID": seen in
 * CI, where earlier tests had turned capture on).
 */
@DatabaseTest
class InvocationLogCaptureTest {
  @Test
  void manyOutcomesInOneTransactionAreStoredWhileCaptured(TestDatabase database) throws Exception {
    ApiaryDatabase db = database.database();
    org.apiary.frontend.provenance.ItemsApp.registerOnce(db); // a table whose writes are captured: capture is on
    assertTrue(ServerProvenance.active().isPresent(), "capture is on");
    TestGraphs.registerOnce(db);
    InvocationLog log = new InvocationLog(db);
    String run = "captured-" + System.nanoTime() + "-";
    List<CompletableFuture<Boolean>> begins = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      begins.add(log.begin(run + (i % 200), "bumpAndReport", 1, new byte[] {'{', '}'}, "frontend-x"));
    }
    int logged = 0;
    for (CompletableFuture<Boolean> b : begins) {
      logged += b.get(30, TimeUnit.SECONDS) ? 1 : 0;
    }
    assertEquals(200, logged, "each of 200 IDs, sent twice, is logged exactly once");
    List<CompletableFuture<Boolean>> finishes = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      finishes.add(log.finish(run + i, InvocationLog.DONE, ("{\"n\":" + i + "}").getBytes()));
      finishes.add(log.finish(run + i, InvocationLog.FAILED, "{}".getBytes()));
    }
    for (int i = 0; i < 200; i++) {
      assertTrue(finishes.get(2 * i).get(30, TimeUnit.SECONDS), "the first outcome is stored");
      assertFalse(finishes.get(2 * i + 1).get(30, TimeUnit.SECONDS), "a second outcome is not");
    }
  }
}
