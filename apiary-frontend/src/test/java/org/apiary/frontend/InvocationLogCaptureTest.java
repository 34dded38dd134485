package org.apiary.frontend;

import static org.junit.jupiter.api.Assertions.assertTrue;

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
    InvocationLogTest.beginTwiceAndEndTwice(db, "captured-" + System.nanoTime() + "-");
  }
}
