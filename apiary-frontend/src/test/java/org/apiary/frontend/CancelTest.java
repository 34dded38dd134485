package org.apiary.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apiary.ApiaryException;
import org.apiary.InvalidRequestException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.InvocationHandle;
import org.apiary.client.InvocationRequest;
import org.apiary.client.InvocationStatus;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.holes.HolesApp;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.voltdb.VoltTable;

/**
 * Issue 42, item 1: cancelling an invocation. The cancel is stored in the invocation's partition of the log; no
 * function of the invocation starts after it, one running then commits as it would, and the stored outcome says
 * cancelled.
 */
@DatabaseTest
class CancelTest {
  private static boolean registered;
  private static final FrontendConfig CONFIG = FrontendConfig.defaults().withLease(Duration.ofSeconds(60),
      Duration.ofSeconds(30));
  private ApiaryDatabase db;

  @BeforeEach
  void setUp(TestDatabase database) {
    db = database.database();
    synchronized (CancelTest.class) {
      if (!registered) {
        Registrar.register(db, HolesApp.APP);
        registered = true;
      }
    }
    for (String t : new String[] {"h_counters", "h_flags", "h_writes"}) {
      db.callAdmin("clearing " + t, "@AdHoc", "DELETE FROM " + t);
    }
  }

  private static ApiaryClient client(FrontendServer frontend) {
    return ApiaryClient.connect(ClientConfig.of(frontend.endpoint()).withAttemptTimeout(Duration.ofSeconds(5)));
  }

  private long scalar(String sql, Object... params) {
    Object[] all = new Object[params.length + 1];
    all[0] = sql;
    System.arraycopy(params, 0, all, 1, params.length);
    VoltTable t = db.callAdmin("reading test data", "@AdHoc", all).getResults()[0];
    return t.advanceRow() ? t.getLong(0) : 0L;
  }

  /**
   * h_twoWriters runs h_bump, then h_tally. The frontend running it is held as h_bump's answer comes back (a hook
   * holds its own database connection's callback thread), a client of another frontend cancels it, then the hold
   * ends: h_bump's write stands (it ran before the cancel was stored), h_tally never starts, and every client is
   * told the invocation was cancelled.
   */
  @Test
  void aCancelRacingARunningFunctionStopsTheNextOneAndIsTheStoredOutcome() throws Exception {
    CountDownLatch reached = new CountDownLatch(1);
    CountDownLatch released = new CountDownLatch(1);
    FrontendHooks hold = new FrontendHooks() {
      @Override
      public void afterFunction(String graph, String invocation, String function) {
        if ("h_bump".equals(function)) {
          reached.countDown();
          try {
            assertTrue(released.await(30, TimeUnit.SECONDS), "the test never released the held frontend");
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while held", e);
          }
        }
      }
    };
    try (ApiaryDatabase heldDb = ApiaryDatabase.open(org.apiary.database.DatabaseConfig.external(
             db.clientAddresses().toArray(String[]::new)));
         FrontendServer held = FrontendServer.start(heldDb, CONFIG, hold);
         FrontendServer other = FrontendServer.start(db, CONFIG);
         ApiaryClient viaHeld = client(held); ApiaryClient viaOther = client(other)) {
      InvocationRequest request = InvocationRequest.of("h_twoWriters", 51L, 1L);
      InvocationHandle handle = viaHeld.start(request);
      assertTrue(reached.await(30, TimeUnit.SECONDS), "h_bump never ran");
      InvocationHandle attached = viaOther.handle(request.id());
      assertEquals(InvocationStatus.RUNNING, attached.status());
      assertEquals(InvocationStatus.CANCELLED, attached.cancel("test: no longer wanted"));
      assertEquals(InvocationStatus.CANCELLED, attached.status(), "the stored outcome says cancelled");
      released.countDown();
      ApiaryException told = assertThrows(org.apiary.InvocationCancelledException.class,
          () -> handle.await(Duration.ofSeconds(20)));
      assertTrue(told.getMessage().contains("cancelled") && told.getMessage().contains("no longer wanted"),
          told.getMessage());
      long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (held.inFlight() > 0 && System.nanoTime() < until) {
        Thread.sleep(20);
      }
      assertEquals(0, held.inFlight(), "the held frontend never ended the invocation");
      assertEquals(1, scalar("SELECT v FROM h_counters WHERE k = 51"), "h_bump, running when cancelled, committed");
      assertEquals(0, scalar("SELECT COUNT(*) FROM h_writes WHERE k = 51"), "h_tally started after the cancel");
      assertEquals(InvocationStatus.CANCELLED, handle.status());
      assertEquals("CANCELED", scalarText("SELECT status FROM APIARY_INVOCATIONS WHERE invocation_id = ?",
          request.id()));
      // A resend of the same request is answered with the stored cancellation; nothing runs again.
      assertThrows(org.apiary.InvocationCancelledException.class, () -> viaOther.invoke(request));
      assertEquals(1, scalar("SELECT v FROM h_counters WHERE k = 51"));
    }
  }

  /**
   * Resume (issue 42): a cancelled h_twoWriters, whose h_bump committed and whose h_tally never started, runs again
   * from h_tally: h_bump is replayed from its record, not run again.
   */
  @Test
  void aCancelledInvocationResumesFromItsFirstUnfinishedFunction() throws Exception {
    // A server captures provenance once its export connector runs, which a table whose writes are captured starts.
    org.apiary.frontend.provenance.ItemsApp.registerOnce(db);
    long capturing = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (org.apiary.runtime.provenance.ServerProvenance.active().isEmpty() && System.nanoTime() < capturing) {
      Thread.sleep(50);
    }
    assertTrue(org.apiary.runtime.provenance.ServerProvenance.active().isPresent(), "provenance capture never started");
    FrontendConfig fast = FrontendConfig.defaults().withLease(Duration.ofSeconds(2), Duration.ofMillis(400));
    CountDownLatch reached = new CountDownLatch(1);
    CountDownLatch released = new CountDownLatch(1);
    FrontendHooks hold = new FrontendHooks() {
      @Override
      public void afterFunction(String graph, String invocation, String function) {
        if ("h_bump".equals(function)) {
          reached.countDown();
          try {
            assertTrue(released.await(30, TimeUnit.SECONDS), "the test never released the held frontend");
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while held", e);
          }
        }
      }
    };
    try (ApiaryDatabase heldDb = ApiaryDatabase.open(org.apiary.database.DatabaseConfig.external(
             db.clientAddresses().toArray(String[]::new)));
         FrontendServer held = FrontendServer.start(heldDb, fast, hold);
         FrontendServer other = FrontendServer.start(db, fast);
         ApiaryClient viaHeld = client(held); ApiaryClient viaOther = client(other)) {
      InvocationRequest request = InvocationRequest.of("h_twoWriters", 53L, 1L);
      InvocationHandle handle = viaHeld.start(request);
      assertTrue(reached.await(30, TimeUnit.SECONDS), "h_bump never ran");
      assertEquals(InvocationStatus.CANCELLED, viaOther.handle(request.id()).cancel("test: pause it"));
      released.countDown();
      assertThrows(org.apiary.InvocationCancelledException.class, () -> handle.await(Duration.ofSeconds(20)));
      long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (held.inFlight() > 0 && System.nanoTime() < until) {
        Thread.sleep(20);
      }
      assertEquals(0, scalar("SELECT COUNT(*) FROM h_writes WHERE k = 53"));
      InvalidRequestException running = assertThrows(InvalidRequestException.class,
          () -> Invocations.resume(db, "never-started-53", false, other.id()));
      assertTrue(running.getMessage().contains("not in the invocation log"), running.getMessage());

      Invocations.Resumed resumed = Invocations.resume(db, request.id(), false, other.id());
      assertEquals("CANCELED", resumed.was());
      assertEquals(other.id(), resumed.frontend());
      assertEquals(List.of(1L), viaOther.awaitResult(request.id(), Duration.ofSeconds(30)).values(Long.class));
      assertEquals(1, scalar("SELECT v FROM h_counters WHERE k = 53"), "h_bump ran again instead of replaying");
      assertEquals(1, scalar("SELECT n FROM h_writes WHERE k = 53"), "h_tally did not run exactly once");
      assertEquals(InvocationStatus.DONE, handle.status());
      InvalidRequestException done = assertThrows(InvalidRequestException.class,
          () -> Invocations.resume(db, request.id(), true, null));
      assertTrue(done.getMessage().contains("DONE"), done.getMessage());

      // In provenance (issue 43): each ending is a row of Invocations, and h_bump's replay is an answer from its record.
      String sink = db.config().provenance().sinkUrl();
      List<String> endings = awaitSink(sink, "SELECT status, error, frontend FROM Invocations WHERE invocation_id = ? "
          + "ORDER BY finished_at", request.id(), 2);
      assertEquals(2, endings.size(), endings.toString());
      assertTrue(endings.get(0).startsWith("CANCELED|cancelled: ") && endings.get(0).contains("test: pause it")
          && endings.get(0).endsWith("|" + held.id()), endings.toString());
      assertEquals("DONE|null|" + other.id(), endings.get(1));
      assertEquals(List.of("ran|null", "recorded|null"), awaitSink(sink, "SELECT mode, NULL, NULL FROM "
          + "FunctionInvocations WHERE execution_id = ? AND function_name = 'h_bump' ORDER BY mode", request.id(), 2)
          .stream().map(r -> r.substring(0, r.lastIndexOf('|'))).toList());
    }
  }

  /** The rows {@code sql} (three columns, one parameter) reads from the sink, once at least {@code expected} are there. */
  private static List<String> awaitSink(String sink, String sql, String parameter, int expected) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    List<String> rows = new java.util.ArrayList<>();
    while (System.nanoTime() < deadline) {
      org.apiary.runtime.provenance.ServerProvenance.active().orElseThrow().flush(Duration.ofSeconds(10));
      rows.clear();
      try (java.sql.Connection c = java.sql.DriverManager.getConnection(sink);
           java.sql.PreparedStatement s = c.prepareStatement(sql)) {
        s.setString(1, parameter);
        try (java.sql.ResultSet rs = s.executeQuery()) {
          while (rs.next()) {
            rows.add(rs.getString(1) + "|" + rs.getString(2) + "|" + rs.getString(3));
          }
        }
      }
      if (rows.size() >= expected) {
        break;
      }
      Thread.sleep(200);
    }
    return rows;
  }

  @Test
  void cancellingAnEndedInvocationKeepsItsOutcomeAndAnUnknownIdIsRefused() {
    try (FrontendServer frontend = FrontendServer.start(db, CONFIG); ApiaryClient client = client(frontend)) {
      InvocationRequest request = InvocationRequest.of("h_twoWriters", 52L, 2L);
      assertEquals(List.of(2L), client.invoke(request).values(Long.class));
      assertEquals(InvocationStatus.DONE, client.handle(request.id()).cancel("too late"));
      assertEquals(List.of(2L), client.result(request.id()).orElseThrow().values(Long.class));
      assertThrows(InvalidRequestException.class, () -> client.handle("never-started-52").cancel("why"));
      assertThrows(IllegalArgumentException.class, () -> client.handle(request.id()).cancel(" "));
    }
  }

  private String scalarText(String sql, Object param) {
    VoltTable t = db.callAdmin("reading test data", "@AdHoc", sql, param).getResults()[0];
    return t.advanceRow() ? t.getString(0) : null;
  }
}
