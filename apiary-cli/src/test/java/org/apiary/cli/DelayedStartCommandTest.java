package org.apiary.cli;

import static org.apiary.cli.InProcessCli.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apiary.cli.InProcessCli.Run;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.FrontendServer;
import org.apiary.frontend.Registrar;
import org.apiary.frontend.queue.QueueApp;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.Test;

/**
 * Issue 42: {@code apiary invoke --no-wait --delay D} stores a delayed start and prints its ID; {@code apiary
 * executions list|show} report it QUEUED until it starts, and {@code apiary executions cancel} cancels it there.
 */
@DatabaseTest
class DelayedStartCommandTest {
  @Test
  void aDelayedStartIsQueuedListedShownAndCancelledFromTheCommandLine(TestDatabase database) {
    ApiaryDatabase db = database.database();
    Registrar.register(db, QueueApp.APP);
    String address = String.join(",", db.clientAddresses());
    try (FrontendServer frontend = FrontendServer.start(db, FrontendConfig.defaults())) {
      String endpoint = frontend.endpoint().replace("tcp://", "");
      Run started = run("invoke", "qMark", "later", "--key", "930", "--no-wait", "--delay", "1h", "--frontend",
          endpoint);
      assertEquals(0, started.code(), started.err());
      String id = started.out().strip();

      Run listed = run("executions", "list", "--status", "queued", "--graph", "qMark", "--json", "--database",
          address);
      assertEquals(0, listed.code(), listed.err());
      assertTrue(listed.out().lines().anyMatch(l -> l.contains("\"id\":\"" + id + "\"")
          && l.contains("\"status\":\"QUEUED\"")), listed.out());
      Run shown = run("executions", "show", id, "--database", address);
      assertEquals(0, shown.code(), shown.err());
      assertTrue(shown.out().contains("status: QUEUED") && shown.out().contains("not started"), shown.out());

      Run cancelled = run("executions", "cancel", id, "--reason", "test: not wanted", "--database", address);
      assertEquals(0, cancelled.code(), cancelled.err());
      assertTrue(cancelled.out().contains("cancelled before it started"), cancelled.out());
      assertEquals(1, db.callAdmin("reading the item", "@AdHoc", "SELECT COUNT(*) FROM APIARY_QUEUE_ITEMS WHERE "
          + "invocation_id = ? AND status = 'CANCELED'", id).getResults()[0].asScalarLong());

      Run waiting = run("invoke", "qMark", "x", "--key", "931", "--delay", "30s", "--frontend", endpoint);
      assertEquals(2, waiting.code());
      assertTrue(waiting.err().contains("--delay needs --no-wait"), waiting.err());
      Run bad = run("invoke", "qMark", "x", "--key", "931", "--no-wait", "--delay", "soon", "--frontend", endpoint);
      assertEquals(2, bad.code());
      assertTrue(bad.err().contains("--delay takes a duration") && bad.err().contains("'soon'"), bad.err());
    }
  }
}
