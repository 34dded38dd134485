package org.apiary.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apiary.ApiaryException;
import org.apiary.Application;
import org.apiary.InvalidRequestException;
import org.apiary.OutcomeUnknownException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.GraphResult;
import org.apiary.client.InvocationRequest;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.holes.HolesApp;
import org.apiary.internal.Json;
import org.apiary.internal.wire.WireRequest;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.voltdb.VoltTable;

/**
 * The exactly-once holes of issue 10, each reproduced deterministically through fault-injection hooks in a frontend
 * running in this process. Every test compares what the client was told, what the invocation log stores and what
 * the data shows.
 */
@DatabaseTest
class ExactlyOnceHolesTest {
  private static boolean registered;
  private static final FrontendConfig FAST = FrontendConfig.defaults().withLease(Duration.ofSeconds(2),
      Duration.ofMillis(400));
  private ApiaryDatabase db;

  @BeforeEach
  void setUp(TestDatabase database) {
    db = database.database();
    synchronized (ExactlyOnceHolesTest.class) {
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

  /** What a client was told, or what the log stores: ok(outputs) or the error's type and message. */
  private static String outcome(java.util.function.Supplier<GraphResult> call) {
    try {
      return "ok " + Json.tree(call.get().values(JsonNode.class));
    } catch (OutcomeUnknownException e) {
      return "unknown";
    } catch (ApiaryException e) {
      return e.getClass().getSimpleName() + ": " + e.getMessage();
    }
  }

  private long scalar(String sql, Object... params) {
    Object[] all = new Object[params.length + 1];
    all[0] = sql;
    System.arraycopy(params, 0, all, 1, params.length);
    VoltTable t = db.callAdmin("reading test data", "@AdHoc", all).getResults()[0];
    return t.advanceRow() ? t.getLong(0) : 0L;
  }

  private int flakyVersion() {
    return new GraphCatalog(db, Duration.ZERO).latest("h_flaky").orElseThrow().version();
  }

  // 1. An invocation that never ends.

  @Test
  void aFanOutKeyOfTheWrongTypeEndsTheInvocationWithAFinalErrorNamingTheKey() {
    try (FrontendServer frontend = FrontendServer.start(db, FAST); ApiaryClient client = client(frontend)) {
      InvocationRequest request = InvocationRequest.of("h_wrongKey", null, 1);
      String told = outcome(() -> client.invoke(request));
      assertTrue(told.startsWith("FunctionFailedException") && told.contains("not-a-number"), told);
      assertEquals(told, outcome(() -> client.awaitResult(request.id(), Duration.ofSeconds(10))));
      assertEquals(0, scalar("SELECT COUNT(*) FROM h_writes"));
    }
  }

  @Test
  void aGraphReplyTooLargeForTheLogEndsTheInvocationFailedInsteadOfRunningForever() {
    try (FrontendServer frontend = FrontendServer.start(db, FAST); ApiaryClient client = client(frontend)) {
      InvocationRequest request = InvocationRequest.of("h_bigReply", null, 3);
      String told = outcome(() -> client.invoke(request));
      assertTrue(told.contains("too large"), told.length() > 300 ? told.substring(0, 300) : told);
      assertEquals(told, outcome(() -> client.awaitResult(request.id(), Duration.ofSeconds(10))));
    }
  }

  // 2. A client told "failed" while the writes committed.

  @Test
  void theClientIsToldTheStoredOutcomeEvenWhenTheFirstStoreFailsAndTheFailureCauseThenGoesAway() {
    db.callAdmin("setting the flag", "@AdHoc", "INSERT INTO h_flags VALUES (5)");
    AtomicBoolean failedOnce = new AtomicBoolean();
    FrontendHooks hooks = new FrontendHooks() {
      @Override
      public void beforeStoringOutcome(String invocation) {
        if (failedOnce.compareAndSet(false, true)) {
          // The cause of the function's failure goes away while the outcome is being stored.
          Thread clear = new Thread(() -> db.callAdmin("clearing the flag", "@AdHoc", "DELETE FROM h_flags"));
          clear.start();
          try {
            clear.join(5_000);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          throw new OutcomeUnknownException("fault injection: the outcome store got no answer", null);
        }
      }
    };
    try (FrontendServer frontend = FrontendServer.start(db, FAST, hooks); ApiaryClient client = client(frontend)) {
      InvocationRequest request = InvocationRequest.of("h_flaky", 5L, 10L);
      String told = outcome(() -> client.invoke(request));
      String stored = outcome(() -> client.awaitResult(request.id(), Duration.ofSeconds(15)));
      assertTrue(failedOnce.get());
      assertFalse(stored.equals("unknown"), "the invocation never ended");
      if (!told.equals("unknown")) {
        assertEquals(stored, told, "the client was told one outcome and the log stores another");
      }
      assertEquals(10L, scalar("SELECT v FROM h_counters WHERE k = 5"), "the recorded write happened once");
    }
  }

  // 3. Orphans after a takeover.

  @Test
  void aTakeoverThatFailsBetweenItsStepsLeavesNoInvocationThatNoFrontendWillFinish() throws Exception {
    String dead = "dead-" + System.nanoTime();
    new FrontendLeases(db, dead, "tcp://127.0.0.1:1").renew(Duration.ofMillis(1));
    String id = "orphan-" + System.nanoTime();
    byte[] request = Json.bytes(WireRequest.invoke(id, "h_flaky", Json.tree(6L), List.of(Json.tree(4L)), null));
    new InvocationLog(db).begin(id, "h_flaky", flakyVersion(), request, dead).get();
    AtomicBoolean failedOnce = new AtomicBoolean();
    FrontendHooks hooks = new FrontendHooks() {
      @Override
      public void duringTakeover(String deadFrontend) {
        if (deadFrontend.equals(dead) && failedOnce.compareAndSet(false, true)) {
          throw new OutcomeUnknownException("fault injection: the frontend lost its answer mid-takeover", null);
        }
      }
    };
    try (FrontendServer frontend = FrontendServer.start(db, FAST, hooks); ApiaryClient client = client(frontend)) {
      GraphResult r = client.awaitResult(id, Duration.ofSeconds(15));
      assertTrue(failedOnce.get());
      assertEquals(List.of(4L), r.values(Long.class));
      assertEquals(4L, scalar("SELECT v FROM h_counters WHERE k = 6"));
    }
  }

  @Test
  void withNothingToRecoverAFrontendReadsTheLogOnlyEveryTenthHeartbeat() throws Exception {
    // Each read is a multi-partition transaction; every frontend ran one at every heartbeat.
    long heartbeatMs = 40;
    FrontendConfig config = FAST.withLease(Duration.ofSeconds(2), Duration.ofMillis(heartbeatMs));
    try (FrontendServer frontend = FrontendServer.start(db, config); ApiaryClient client = client(frontend)) {
      assertEquals(List.of(3L), client.invoke("h_flaky", 8L, 3L).values(Long.class));
      // Earlier tests leave dead frontends behind: taking them over makes this one look a few heartbeats in a row.
      Thread.sleep((InvocationCoordinator.SCAN_HEARTBEATS_AFTER_TRIGGER + 5) * heartbeatMs);
      long before = frontend.recoveryScans();
      long started = System.nanoTime();
      long deadline = started + TimeUnit.SECONDS.toNanos(10);
      while (frontend.recoveryScans() < before + 2 && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      long scans = frontend.recoveryScans() - before;
      long heartbeats = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started) / heartbeatMs + 1;
      assertTrue(scans >= 2, "recovery never read the log as a safety net");
      assertTrue(scans <= heartbeats / InvocationCoordinator.SAFETY_SCAN_HEARTBEATS + 1, scans + " reads of the log "
          + "in at most " + heartbeats + " heartbeats with nothing to recover");
    }
  }

  // 4. Retention of a running invocation's records.

  @Test
  void retentionKeepsTheRecordedOutputsOfARunningInvocationAndDeletesThoseOfEndedOnes() throws Exception {
    // An invocation that ended (no log entry any more), then, over a second later, one still running.
    String ended = "ended-" + System.nanoTime();
    db.callAdmin("recording outputs", "@AdHoc", "INSERT INTO APIARY_RECORDED_INTEGER (pkey, invocation_id, "
        + "function_name, outputs, recorded_at) VALUES (7, ?, 'h_bump', x'5B5D', NOW)", ended);
    Thread.sleep(1_500);
    String owner = "slow-" + System.nanoTime();
    new FrontendLeases(db, owner, "tcp://127.0.0.1:1").renew(Duration.ofHours(1)); // alive: nobody takes it over
    String running = "running-" + System.nanoTime();
    byte[] request = Json.bytes(WireRequest.invoke(running, "h_flaky", Json.tree(7L), List.of(Json.tree(1L)), null));
    new InvocationLog(db).begin(running, "h_flaky", flakyVersion(), request, owner).get();
    db.callAdmin("recording outputs", "@AdHoc", "INSERT INTO APIARY_RECORDED_INTEGER (pkey, invocation_id, "
        + "function_name, outputs, recorded_at) VALUES (7, ?, 'h_bump', x'5B5D', NOW)", running);
    Thread.sleep(50);
    try (FrontendServer frontend = FrontendServer.start(db, FAST.withRetention(Duration.ofMillis(10), Duration.ofHours(1)))) {
      frontend.deleteExpiredRecords();
    }
    assertEquals(1, scalar("SELECT COUNT(*) FROM APIARY_RECORDED_INTEGER WHERE invocation_id = ?", running),
        "the recorded outputs of a running invocation were deleted; its next attempt would write again");
    assertEquals(0, scalar("SELECT COUNT(*) FROM APIARY_RECORDED_INTEGER WHERE invocation_id = ?", ended));
    db.callAdmin("cleaning up", "@AdHoc", "DELETE FROM APIARY_INVOCATIONS WHERE invocation_id = ?", running);
    db.callAdmin("cleaning up", "@AdHoc", "DELETE FROM APIARY_RECORDED_INTEGER WHERE invocation_id = ?", running);
  }

  @Test
  void retentionDeletesInBoundedSinglePartitionStepsAndStopsNoPartitionForAllOfThem() throws Exception {
    // More old records and ended invocations than one step deletes, on keys of every partition; one fresh of each.
    String batch = "expire-" + System.nanoTime() + "-";
    for (int i = 0; i < 200; i++) {
      db.callAdmin("recording outputs", "@AdHoc", "INSERT INTO APIARY_RECORDED_INTEGER (pkey, invocation_id, "
          + "function_name, outputs, recorded_at) VALUES (?, ?, 'h_bump', x'5B5D', DATEADD(HOUR, -2, NOW))",
          (long) i, batch + i);
      db.callAdmin("logging", "@AdHoc", "INSERT INTO APIARY_INVOCATIONS (invocation_id, graph, graph_version, "
          + "request, frontend, status, attempts, started_at, finished_at) VALUES (?, 'h_flaky', 1, x'7B7D', 'gone', "
          + "'OK', 1, DATEADD(HOUR, -2, NOW), DATEADD(HOUR, -2, NOW))", batch + i);
    }
    db.callAdmin("recording outputs", "@AdHoc", "INSERT INTO APIARY_RECORDED_INTEGER (pkey, invocation_id, "
        + "function_name, outputs, recorded_at) VALUES (1, ?, 'h_bump', x'5B5D', NOW)", batch + "fresh");
    long multiPartitionWritesBefore = multiPartitionWrites();
    long deleted = new InvocationLog(db).deleteOlderThan(Duration.ofHours(1), 30);
    assertEquals(0, multiPartitionWrites() - multiPartitionWritesBefore,
        "a retention pass ran a multi-partition write, which stops every partition while it deletes");
    assertTrue(deleted >= 400, "deleted " + deleted);
    assertEquals(0, scalar("SELECT COUNT(*) FROM APIARY_RECORDED_INTEGER WHERE invocation_id LIKE ? "
        + "AND invocation_id <> ?", batch + "%", batch + "fresh"));
    assertEquals(0, scalar("SELECT COUNT(*) FROM APIARY_INVOCATIONS WHERE invocation_id LIKE ?", batch + "%"));
    assertEquals(1, scalar("SELECT COUNT(*) FROM APIARY_RECORDED_INTEGER WHERE invocation_id = ?", batch + "fresh"));
    db.callAdmin("cleaning up", "@AdHoc", "DELETE FROM APIARY_RECORDED_INTEGER WHERE invocation_id = ?",
        batch + "fresh");
  }

  @Test
  void theSweepDeletesEveryExpiredRowWhenManyShareAnInvocationIdAcrossItsStepsAndKeepsFreshOnes() throws Exception {
    // 40 old records of one invocation (a fan-out: one per key, several on each partition), 40 old ones of other
    // invocations whose IDs sort right after it, fresh ones among them; steps of 7 rows cut through all of them.
    String shared = "sweep-" + System.nanoTime();
    for (int i = 0; i < 40; i++) {
      db.callAdmin("recording outputs", "@AdHoc", "INSERT INTO APIARY_RECORDED_INTEGER (pkey, invocation_id, "
          + "function_name, outputs, recorded_at) VALUES (?, ?, 'h_bump', x'5B5D', DATEADD(HOUR, -2, NOW))",
          (long) i, shared);
      db.callAdmin("recording outputs", "@AdHoc", "INSERT INTO APIARY_RECORDED_INTEGER (pkey, invocation_id, "
          + "function_name, outputs, recorded_at) VALUES (?, ?, 'h_bump', x'5B5D', DATEADD(HOUR, -2, NOW))",
          (long) i, shared + "-" + i);
      db.callAdmin("recording outputs", "@AdHoc", "INSERT INTO APIARY_RECORDED_VARCHAR (pkey, invocation_id, "
          + "function_name, outputs, recorded_at) VALUES (?, ?, 'h_global', x'5B5D', DATEADD(HOUR, -2, NOW))",
          shared + "-g" + i, shared + "-g" + i);
    }
    for (int i = 0; i < 40; i += 13) {
      db.callAdmin("recording outputs", "@AdHoc", "INSERT INTO APIARY_RECORDED_INTEGER (pkey, invocation_id, "
          + "function_name, outputs, recorded_at) VALUES (?, ?, 'h_bump', x'5B5D', NOW)", (long) i, shared + "-" + i
          + "-fresh");
    }
    long deleted = new InvocationLog(db).deleteOlderThan(Duration.ofHours(1), 7);
    assertTrue(deleted >= 120, "deleted " + deleted);
    assertEquals(0, scalar("SELECT COUNT(*) FROM APIARY_RECORDED_INTEGER WHERE invocation_id LIKE ? "
        + "AND invocation_id NOT LIKE '%-fresh'", shared + "%"));
    assertEquals(0, scalar("SELECT COUNT(*) FROM APIARY_RECORDED_VARCHAR WHERE invocation_id LIKE ?", shared + "%"));
    assertEquals(4, scalar("SELECT COUNT(*) FROM APIARY_RECORDED_INTEGER WHERE invocation_id LIKE ? "
        + "AND invocation_id LIKE '%-fresh'", shared + "%"));
    db.callAdmin("cleaning up", "@AdHoc", "DELETE FROM APIARY_RECORDED_INTEGER WHERE invocation_id LIKE ?",
        shared + "%");
  }

  @Test
  void oneLiveFrontendRunsRetentionAndAnotherTakesOverWhenItsLeaseEnds() {
    // IDs that sort before any real frontend's, so frontends other tests left running do not interfere.
    FrontendLeases first = new FrontendLeases(db, "!retention-a", "tcp://127.0.0.1:1");
    FrontendLeases second = new FrontendLeases(db, "!retention-b", "tcp://127.0.0.1:2");
    first.renew(Duration.ofHours(1));
    second.renew(Duration.ofHours(1));
    try {
      assertTrue(first.runsRetention());
      assertFalse(second.runsRetention(), "two frontends would both sweep every recorded output");
      first.release();
      assertTrue(second.runsRetention(), "nobody runs retention once the first frontend's lease ended");
    } finally {
      first.release();
      second.release();
      first.forget("!retention-a");
      second.forget("!retention-b");
    }
  }

  /** Multi-partition read-write ad hoc transactions VoltDB has run so far. */
  private long multiPartitionWrites() {
    VoltTable stats = db.callAdmin("reading procedure statistics", "@Statistics", "PROCEDURE", 0).getResults()[0];
    long count = 0;
    while (stats.advanceRow()) {
      if (stats.getString("PROCEDURE").endsWith("AdHoc_RW_MP")) {
        count += stats.getLong("INVOCATIONS");
      }
    }
    return count;
  }

  // 5. Re-registering a graph.

  @Test
  void aGraphReRegisteredWhileAFrontendRunsIsServedInItsNewVersionWithoutARestart() {
    AtomicBoolean failedOnce = new AtomicBoolean();
    FrontendHooks hooks = new FrontendHooks() {
      @Override
      public void afterFunction(String graph, String invocation, String function) {
        if (function.equals("h_evolve") && failedOnce.compareAndSet(false, true)) {
          throw new OutcomeUnknownException("fault injection: the answer of h_evolve was lost", null);
        }
      }
    };
    try (FrontendServer frontend = FrontendServer.start(db, FAST.withLease(Duration.ofSeconds(60),
        Duration.ofSeconds(30)), hooks); ApiaryClient client = client(frontend)) {
      Registrar.register(db, Application.of(HolesApp.SCHEMA, HolesApp.EVOLVING_V2)); // h_evolve now writes
      GraphResult r = client.invoke("h_evolving", 9L, 1L);
      assertTrue(failedOnce.get());
      assertEquals(1L, scalar("SELECT n FROM h_writes WHERE k = 9"), "the new writer's write was applied twice");
      assertEquals(List.of(1L), r.values(Long.class));
      Registrar.register(db, Application.of(HolesApp.SCHEMA, HolesApp.EVOLVING_V1)); // read-only again
      assertEquals(List.of(1L), client.invoke("h_evolving", 9L, 1L).values(Long.class));
    } finally {
      Registrar.register(db, Application.of(HolesApp.SCHEMA, HolesApp.EVOLVING_V1));
    }
  }

  // 6. A call without the arguments the source edge declares.

  @Test
  void aCallWithoutArgumentsToAGraphWhoseSourceEdgeDeclaresATypeIsRefusedBeforeAnythingRuns() {
    try (FrontendServer frontend = FrontendServer.start(db, FAST); ApiaryClient client = client(frontend)) {
      InvalidRequestException e = assertThrows(InvalidRequestException.class, () -> client.invoke("h_flaky", 3L));
      assertTrue(e.getMessage().contains("argument"), e.getMessage());
      assertEquals(0, scalar("SELECT COUNT(*) FROM h_counters WHERE k = 3"));
    }
  }

  // 7. A live frontend losing its lease.

  @Test
  void aSlowRetentionPassDoesNotCostALiveFrontendItsLease() throws Exception {
    FrontendHooks hooks = new FrontendHooks() {
      @Override
      public void beforeCleanup() {
        try {
          Thread.sleep(3_000);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    };
    try (FrontendServer frontend = FrontendServer.start(db, FAST.withRetention(Duration.ofHours(1),
        Duration.ofMillis(100)), hooks)) {
      FrontendLeases observer = new FrontendLeases(db, "observer", "tcp://127.0.0.1:1");
      long until = System.nanoTime() + Duration.ofSeconds(4).toNanos();
      while (System.nanoTime() < until) {
        assertFalse(observer.expired().contains(frontend.id()), "a live frontend's lease expired");
        Thread.sleep(200);
      }
    }
  }


  // Issue 14: a fatal error on the socket thread stops the frontend visibly.

  @Test
  void aFatalErrorOnTheSocketThreadReleasesTheLeaseAndTheRequestRunsOnAnotherFrontend() throws Exception {
    db.callAdmin("setting a counter", "@AdHoc", "INSERT INTO h_counters VALUES (21, 0)");
    FrontendHooks failing = new FrontendHooks() {
      @Override
      public void receivedRequest(String invocation) {
        throw new OutOfMemoryError("injected on the socket thread");
      }
    };
    try (FrontendServer doomed = FrontendServer.start(db, FAST, failing);
         FrontendServer healthy = FrontendServer.start(db, FAST);
         ApiaryClient client = ApiaryClient.connect(ClientConfig.of(doomed.endpoint(), healthy.endpoint())
             .withAttemptTimeout(Duration.ofSeconds(2)))) {
      assertEquals(1, scalar("SELECT COUNT(*) FROM " + org.apiary.runtime.SystemSchema.FRONTENDS
          + " WHERE frontend = ?", doomed.id()));
      // The client tries the doomed frontend first; it answers no one, so the attempt times out and moves on.
      InvocationRequest request = InvocationRequest.of("h_flaky", 21L, 1L);
      String told = outcome(() -> client.invoke(request));
      assertTrue(told.startsWith("ok"), told);
      assertEquals(1, scalar("SELECT v FROM h_counters WHERE k = 21"), "the graph ran exactly once");
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (scalar("SELECT COUNT(*) FROM " + org.apiary.runtime.SystemSchema.FRONTENDS + " WHERE frontend = ?",
          doomed.id()) > 0 && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      assertEquals(0, scalar("SELECT COUNT(*) FROM " + org.apiary.runtime.SystemSchema.FRONTENDS
          + " WHERE frontend = ?", doomed.id()), "the frontend whose socket thread died still holds its lease");
      doomed.stopped().toCompletableFuture().get(10, java.util.concurrent.TimeUnit.SECONDS);
      assertTrue(doomed.failure().orElseThrow() instanceof OutOfMemoryError);
      assertEquals(1, scalar("SELECT COUNT(*) FROM " + org.apiary.runtime.SystemSchema.FRONTENDS
          + " WHERE frontend = ?", healthy.id()));
    }
  }

  /**
   * Hooks that hold the invocation {@code invocation} after its function ran (on the database client's callback
   * thread, so it stays in flight), counting {@code held} down, until {@code release} is counted down (at most 20 s).
   */
  private static FrontendHooks holdingAfter(String invocation, java.util.concurrent.CountDownLatch held,
                                            java.util.concurrent.CountDownLatch release) {
    return new FrontendHooks() {
      @Override
      public void afterFunction(String graph, String id, String function) {
        if (id.equals(invocation)) {
          held.countDown();
          try {
            release.await(20, java.util.concurrent.TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      }
    };
  }

  /**
   * A function's completion (routing its outputs, the hooks above, the reply) never runs on the socket thread, even
   * when the database answers before the dispatcher has attached it: intake must not wait for a function's work, and
   * the tests that hold an invocation in {@code afterFunction} rely on the socket thread staying free.
   */
  @Test
  void aFunctionsCompletionNeverRunsOnTheSocketThread() {
    java.util.concurrent.ConcurrentHashMap<String, Integer> threads = new java.util.concurrent.ConcurrentHashMap<>();
    FrontendHooks recording = new FrontendHooks() {
      @Override
      public void afterFunction(String graph, String id, String function) {
        threads.merge(Thread.currentThread().getName(), 1, Integer::sum);
      }
    };
    try (FrontendServer frontend = FrontendServer.start(db, FAST, recording); ApiaryClient client = client(frontend)) {
      for (int i = 0; i < 600; i++) { // ~1% of completions raced onto the socket thread before the fix
        client.invoke("h_flaky", 1_000L + i, 1L);
      }
    }
    assertEquals(1_200, threads.values().stream().mapToInt(Integer::intValue).sum(), threads.toString());
    assertFalse(threads.containsKey("apiary-frontend-io"), threads.toString());
  }

  // Issue 14: beyond its in-flight limit a frontend refuses at once, and nothing of the refused call runs.

  @Test
  void aFrontendAtItsInFlightLimitRefusesNewCallsAsOverloadedAndRunsNothingOfThem() throws Exception {
    java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    FrontendHooks holding = holdingAfter("held", held, release);
    java.util.concurrent.ExecutorService caller = java.util.concurrent.Executors.newSingleThreadExecutor();
    try (FrontendServer frontend = FrontendServer.start(db, FAST.withMaxInFlight(1), holding);
         ApiaryClient client = client(frontend)) {
      var first = caller.submit(() -> client.invoke(InvocationRequest.of("h_flaky", 31L, 1L).withId("held")));
      assertTrue(held.await(10, java.util.concurrent.TimeUnit.SECONDS));
      org.apiary.OverloadedException refused = assertThrows(org.apiary.OverloadedException.class,
          () -> client.invoke("h_flaky", 32L, 1L));
      assertTrue(refused.getMessage().contains("nothing ran") && refused.getMessage().contains("limit"),
          refused.getMessage());
      assertEquals(Duration.ofMillis(100), refused.retryAfter());
      release.countDown(); // (the hook holds the database client's callback thread, so queries wait until now)
      assertEquals(List.of(1L), first.get(20, java.util.concurrent.TimeUnit.SECONDS).values(Long.class));
      assertEquals(0, scalar("SELECT COUNT(*) FROM h_counters WHERE k = 32"), "a refused call ran");
      assertEquals(List.of(1L), client.invoke("h_flaky", 32L, 1L).values(Long.class)); // room again
    } finally {
      release.countDown();
      caller.shutdownNow();
    }
  }

  /**
   * Issue 14: in-flight requests are bounded in bytes as well as in number: a request that would take the bytes of
   * the requests running here past the frontend's limit is refused as overloaded and runs nothing; alone it runs.
   */
  @Test
  void aRequestBeyondTheInFlightBytesIsRefusedAsOverloadedAndRunsAloneLater() throws Exception {
    java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    FrontendHooks holding = holdingAfter("held-bytes", held, release);
    java.util.concurrent.ExecutorService caller = java.util.concurrent.Executors.newSingleThreadExecutor();
    String text = "x".repeat(4_000); // over the 4 KiB limit below with its envelope: it runs only alone
    try (FrontendServer frontend = FrontendServer.start(db, FAST.withMaxInFlightBytes(4096), holding);
         ApiaryClient client = client(frontend)) {
      var first = caller.submit(() -> client.invoke(InvocationRequest.of("h_flaky", 51L, 1L).withId("held-bytes")));
      assertTrue(held.await(10, java.util.concurrent.TimeUnit.SECONDS));
      org.apiary.OverloadedException refused = assertThrows(org.apiary.OverloadedException.class,
          () -> client.invoke("h_length", null, text));
      assertTrue(refused.getMessage().contains("bytes") && refused.getMessage().contains("nothing ran")
          && refused.getMessage().contains("4096"), refused.getMessage());
      release.countDown();
      assertEquals(List.of(1L), first.get(20, java.util.concurrent.TimeUnit.SECONDS).values(Long.class));
      // Alone it runs (the held invocation leaves the frontend's count just after its reply, so allow a moment).
      GraphResult alone = null;
      for (int attempt = 0; alone == null; attempt++) {
        try {
          alone = client.invoke("h_length", null, text);
        } catch (org.apiary.OverloadedException e) {
          if (attempt >= 50) {
            throw e;
          }
          Thread.sleep(100);
        }
      }
      assertEquals(List.of((long) text.length()), alone.values(Long.class));
    } finally {
      release.countDown();
      caller.shutdownNow();
    }
  }

  /** Issue 14: one client at its own limit is refused as overloaded while another client's call is taken. */
  @Test
  void aClientAtItsPerClientLimitIsRefusedWhileAnotherClientIsServed() throws Exception {
    java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    FrontendHooks holding = holdingAfter("held-per-client", held, release);
    java.util.concurrent.ExecutorService callers = java.util.concurrent.Executors.newFixedThreadPool(2);
    // The default 5 s lease: while the hook holds the database client's callback thread, lease renewals wait too.
    try (FrontendServer frontend = FrontendServer.start(db,
        FrontendConfig.defaults().withMaxInFlight(10).withMaxInFlightPerClient(1), holding);
         ApiaryClient busy = client(frontend); ApiaryClient other = client(frontend)) {
      var first = callers.submit(() -> busy.invoke(
          InvocationRequest.of("h_flaky", 41L, 1L).withId("held-per-client")));
      assertTrue(held.await(10, java.util.concurrent.TimeUnit.SECONDS));
      org.apiary.OverloadedException refused = assertThrows(org.apiary.OverloadedException.class,
          () -> busy.invoke("h_flaky", 42L, 1L));
      assertTrue(refused.getMessage().contains("limit per client") && refused.getMessage().contains("nothing ran"),
          refused.getMessage());
      // The other client is taken (it waits only for the database callback thread the hook holds).
      var served = callers.submit(() -> other.invoke("h_flaky", 43L, 1L));
      release.countDown();
      assertEquals(List.of(1L), served.get(20, java.util.concurrent.TimeUnit.SECONDS).values(Long.class));
      assertEquals(List.of(1L), first.get(20, java.util.concurrent.TimeUnit.SECONDS).values(Long.class));
      assertEquals(0, scalar("SELECT COUNT(*) FROM h_counters WHERE k = 42"), "a refused call ran");
      assertEquals(List.of(1L), busy.invoke("h_flaky", 42L, 1L).values(Long.class)); // room again
    } finally {
      release.countDown();
      callers.shutdownNow();
    }
  }

  // Issue 14: fan-out has a bound, and going over it ends the invocation with a final error before anything floods.

  @Test
  void aFanOutWiderThanTheLimitEndsTheInvocationWithAFinalErrorBeforeAnyRunStarts() {
    try (FrontendServer frontend = FrontendServer.start(db, FAST); ApiaryClient client = client(frontend)) {
      InvocationRequest request = InvocationRequest.of("h_bigReply", null, Dispatcher.MAX_FAN_OUT + 1);
      String told = outcome(() -> client.invoke(request));
      assertTrue(told.startsWith("FunctionFailedException") && told.contains("FanOutTooWide")
          && told.contains(String.valueOf(Dispatcher.MAX_FAN_OUT + 1)), told);
      assertEquals(told, outcome(() -> client.awaitResult(request.id(), Duration.ofSeconds(10))));
    }
  }

  // A request that reaches a frontend after its client gave up: a copy queued for a frontend that was down (or
  // paused) arrives when it comes back, perhaps after retention deleted the invocation's outcome.

  @Test
  void aRequestDeliveredAfterItsClientGaveUpIsNotStartedEvenOnceItsOutcomeIsDeleted() throws Exception {
    db.callAdmin("setting a counter", "@AdHoc", "INSERT INTO h_counters VALUES (22, 0)");
    InvocationRequest request = InvocationRequest.of("h_flaky", 22L, 1L);
    int port;
    try (java.net.ServerSocket probe = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = probe.getLocalPort();
    }
    String lateEndpoint = "tcp://127.0.0.1:" + port;
    java.util.concurrent.CountDownLatch delivered = new java.util.concurrent.CountDownLatch(1);
    FrontendHooks seeing = new FrontendHooks() {
      @Override
      public void receivedRequest(String invocation) {
        if (invocation.equals(request.id())) {
          delivered.countDown();
        }
      }
    };
    // Retention longer than the client's wait for a call (two attempts of 500 ms), no clock skew on one machine.
    FrontendConfig shortRetention = FAST.withRetention(Duration.ofMillis(1_500), Duration.ofHours(1))
        .withClockSkewAllowance(Duration.ZERO);
    try (FrontendServer healthy = FrontendServer.start(db, shortRetention);
         ApiaryClient client = ApiaryClient.connect(ClientConfig.of(lateEndpoint, healthy.endpoint())
             .withAttemptTimeout(Duration.ofMillis(500)).withMaxAttempts(2))) {
      // The first attempt waits in the client's queue for a frontend that is not listening yet; the second runs it.
      String told = outcome(() -> client.invoke(request));
      assertTrue(told.startsWith("ok"), told);
      assertEquals(1, scalar("SELECT v FROM h_counters WHERE k = 22"));
      Thread.sleep(1_500 + 500); // past the retention, and so past the client's last deadline for the call
      healthy.deleteExpiredRecords();
      InvalidRequestException gone = assertThrows(InvalidRequestException.class, () -> client.result(request.id()));
      assertTrue(gone.getMessage().contains("no invocation with ID"), gone.getMessage());

      try (FrontendServer late = FrontendServer.start(db, shortRetention.withPort(port), seeing)) {
        assertTrue(delivered.await(20, TimeUnit.SECONDS), "the queued first attempt never reached the frontend");
        long until = System.nanoTime() + Duration.ofSeconds(3).toNanos();
        while (System.nanoTime() < until && scalar("SELECT v FROM h_counters WHERE k = 22") == 1) {
          Thread.sleep(50);
        }
        assertEquals(0, late.inFlight());
      }
      assertEquals(1, scalar("SELECT v FROM h_counters WHERE k = 22"),
          "a copy of the request delivered after the client gave up on it ran the graph a second time");
    }
  }

  @Test
  void aRequestPastItsExpiryByMoreThanTheClockSkewAllowanceIsRefusedAndOneWithinItRuns() {
    db.callAdmin("setting a counter", "@AdHoc", "INSERT INTO h_counters VALUES (23, 0)");
    try (FrontendServer frontend = FrontendServer.start(db, FAST.withClockSkewAllowance(Duration.ofSeconds(10)));
         org.zeromq.ZContext ctx = new org.zeromq.ZContext()) {
      org.zeromq.ZMQ.Socket s = ctx.createSocket(org.zeromq.SocketType.DEALER);
      s.setHandshakeIvl(org.apiary.internal.wire.SocketLoop.HANDSHAKE_MILLIS);
      s.setReceiveTimeOut(10_000);
      s.setSendTimeOut(10_000);
      s.connect(frontend.endpoint());
      java.util.function.LongFunction<org.apiary.internal.wire.WireReply> send = expires -> {
        byte[] frame = WireRequest.withExpiry(WireRequest.invoke("expiring-" + expires + "-" + System.nanoTime(),
            "h_flaky", Json.tree(23L), List.of(Json.tree(1L)), null).toBytes(), expires);
        assertTrue(s.send(frame, 0), "could not send within 10 s");
        byte[] answer = s.recv();
        assertTrue(answer != null, "no reply within 10 s");
        return org.apiary.internal.wire.WireReply.fromBytes(answer);
      };
      org.apiary.internal.wire.WireReply late = send.apply(System.currentTimeMillis() - 60_000);
      assertEquals(org.apiary.internal.wire.WireReply.EXPIRED, late.error(), late.message());
      assertTrue(late.message().contains("after its expiry") && late.message().contains("10000 ms of clock skew"),
          late.message());
      assertEquals(0, scalar("SELECT v FROM h_counters WHERE k = 23"), "an expired request ran");
      org.apiary.internal.wire.WireReply skewed = send.apply(System.currentTimeMillis() - 5_000);
      assertEquals(org.apiary.internal.wire.WireReply.OK, skewed.status(), skewed.message());
      assertEquals(1, scalar("SELECT v FROM h_counters WHERE k = 23"));
    }
  }

  // A frontend process paused (SIGSTOP, a suspended host) for longer than the retention, while another frontend
  // finished the invocation and retention deleted its records: when it resumes, what it had started must not run
  // again. Each test holds one frontend in a hook where a pause could strike, and the client goes to another.

  /**
   * Holds a frontend for one invocation until released, once: after {@code function} returned, or, with none, before
   * the request is logged or run. Says when it got there.
   */
  private static final class Pause implements FrontendHooks {
    final java.util.concurrent.CountDownLatch reached = new java.util.concurrent.CountDownLatch(1);
    final java.util.concurrent.CountDownLatch released = new java.util.concurrent.CountDownLatch(1);
    final AtomicBoolean taken = new AtomicBoolean();
    final String invocation;
    final String function;

    Pause(String invocation, String function) {
      this.invocation = invocation;
      this.function = function;
    }

    @Override
    public void beforeStarting(String id) {
      if (function == null && id.equals(invocation)) {
        hold();
      }
    }

    @Override
    public void afterFunction(String graph, String id, String executed) {
      if (executed.equals(function) && id.equals(invocation)) {
        hold();
      }
    }

    private void hold() {
      if (taken.compareAndSet(false, true)) {
        reached.countDown();
        try {
          released.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
  }

  /**
   * Runs {@code request} on a frontend that {@code pause} holds, lets another frontend finish it, waits past the
   * retention, deletes the expired records, then releases the held frontend and waits until it has nothing in flight.
   *
   * @return what the client of the other frontend was told
   */
  private String finishElsewhereThenResume(InvocationRequest request, Pause pause) throws Exception {
    // Retention longer than the clients' wait for a call (one attempt of 500 ms), no clock skew on one machine.
    FrontendConfig shortRetention = FAST.withRetention(Duration.ofMillis(1_500), Duration.ofHours(1))
        .withClockSkewAllowance(Duration.ZERO);
    // The held frontend has a database connection of its own: a hook holds its client's callback thread.
    try (ApiaryDatabase heldDb = ApiaryDatabase.open(org.apiary.database.DatabaseConfig.external(
             db.clientAddresses().toArray(String[]::new)));
         FrontendServer held = FrontendServer.start(heldDb, shortRetention, pause);
         FrontendServer other = FrontendServer.start(db, shortRetention);
         ApiaryClient toHeld = ApiaryClient.connect(ClientConfig.of(held.endpoint())
             .withAttemptTimeout(Duration.ofMillis(500)).withMaxAttempts(1));
         ApiaryClient toOther = client(other)) {
      java.util.concurrent.CompletableFuture<String> first = java.util.concurrent.CompletableFuture.supplyAsync(
          () -> outcome(() -> toHeld.invoke(request)));
      assertTrue(pause.reached.await(20, TimeUnit.SECONDS), "the held frontend never got the request");
      String told = outcome(() -> toOther.invoke(request));
      assertEquals("unknown", first.get(20, TimeUnit.SECONDS));
      Thread.sleep(1_500 + 500);
      other.deleteExpiredRecords();
      assertEquals(0, scalar("SELECT COUNT(*) FROM APIARY_RECORDED_INTEGER WHERE invocation_id = ?", request.id()),
          "retention did not delete the invocation's records");
      pause.released.countDown();
      long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (held.inFlight() > 0 && System.nanoTime() < until) {
        Thread.sleep(20);
      }
      assertEquals(0, held.inFlight(), "the held frontend never ended the invocation");
      return told;
    }
  }

  @Test
  void aFrontendPausedPastTheRetentionBetweenTwoFunctionsDoesNotRunTheRestAgain() throws Exception {
    db.callAdmin("setting a counter", "@AdHoc", "INSERT INTO h_counters VALUES (24, 0)");
    InvocationRequest request = InvocationRequest.of("h_twoWriters", 24L, 1L);
    String told = finishElsewhereThenResume(request, new Pause(request.id(), "h_bump"));
    assertEquals("ok [1]", told);
    assertEquals(1, scalar("SELECT v FROM h_counters WHERE k = 24"));
    assertEquals(1, scalar("SELECT n FROM h_writes WHERE k = 24"),
        "the paused frontend ran the invocation's second function again after retention deleted its record");
    assertEquals(0, scalar("SELECT COUNT(*) FROM APIARY_INVOCATIONS WHERE invocation_id = ?", request.id()),
        "the paused frontend left a log entry for an invocation that had ended");
  }

  @Test
  void aFrontendPausedPastTheRetentionBeforeLoggingARequestDoesNotStartIt() throws Exception {
    db.callAdmin("setting a counter", "@AdHoc", "INSERT INTO h_counters VALUES (25, 0)");
    InvocationRequest request = InvocationRequest.of("h_twoWriters", 25L, 1L);
    String told = finishElsewhereThenResume(request, new Pause(request.id(), null));
    assertEquals("ok [1]", told);
    assertEquals(1, scalar("SELECT v FROM h_counters WHERE k = 25"),
        "the paused frontend logged the request anew and ran it again after retention deleted its log entry");
    assertEquals(1, scalar("SELECT n FROM h_writes WHERE k = 25"));
    assertEquals(0, scalar("SELECT COUNT(*) FROM APIARY_INVOCATIONS WHERE invocation_id = ?", request.id()));
  }

  @Test
  void aFrontendPausedPastTheRetentionBeforeRunningAOneTransactionRequestDoesNotRunIt() throws Exception {
    db.callAdmin("setting a counter", "@AdHoc", "INSERT INTO h_counters VALUES (26, 0)");
    InvocationRequest request = InvocationRequest.of("h_oneBump", 26L, 1L);
    String told = finishElsewhereThenResume(request, new Pause(request.id(), null));
    assertEquals("ok [1]", told);
    assertEquals(1, scalar("SELECT v FROM h_counters WHERE k = 26"),
        "the paused frontend ran a one-transaction request again after retention deleted its record");
    assertEquals(0, scalar("SELECT COUNT(*) FROM APIARY_RECORDED_INTEGER WHERE invocation_id = ?", request.id()));
  }

  @Test
  void anInvocationRunningLongerThanTheRetentionIsStillCompletedAfterARetentionPass() throws Exception {
    // The fence must not refuse what retention keeps: an invocation still running (its frontend alive but slow,
    // say) whose start is older than the retention when a pass runs. Its frontend dies after the pass (its lease
    // ends), and a resend takes the invocation over: while the lease held, the resend waited for it.
    db.callAdmin("setting a counter", "@AdHoc", "INSERT INTO h_counters VALUES (27, 0)");
    InvocationRequest request = InvocationRequest.of("h_twoWriters", 27L, 1L);
    String owner = "stuck-" + System.nanoTime();
    new FrontendLeases(db, owner, "tcp://127.0.0.1:1").renew(Duration.ofSeconds(5)); // alive through the pass
    byte[] frame = Json.bytes(WireRequest.invoke(request.id(), "h_twoWriters", Json.tree(27L),
        List.of(Json.tree(1L)), null));
    int version = new GraphCatalog(db, Duration.ZERO).latest("h_twoWriters").orElseThrow().version();
    assertTrue(new InvocationLog(db).begin(request.id(), "h_twoWriters", version, frame, owner).get());
    Thread.sleep(2_500); // longer than the retention below and the clock-skew margin
    try (FrontendServer frontend = FrontendServer.start(db, FAST.withRetention(Duration.ofMillis(1_500),
             Duration.ofHours(1)));
         ApiaryClient client = client(frontend)) {
      frontend.deleteExpiredRecords();
      assertEquals("ok [1]", outcome(() -> client.invoke(request)));
    }
    assertEquals(1, scalar("SELECT v FROM h_counters WHERE k = 27"));
    assertEquals(1, scalar("SELECT n FROM h_writes WHERE k = 27"));
    db.callAdmin("cleaning up", "@AdHoc", "DELETE FROM " + org.apiary.runtime.SystemSchema.FRONTENDS
        + " WHERE frontend = ?", owner);
  }
}
