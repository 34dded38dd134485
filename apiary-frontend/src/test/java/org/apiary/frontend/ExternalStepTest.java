package org.apiary.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apiary.ExternalFunction;
import org.apiary.FunctionFailedException;
import org.apiary.OutcomeUnknownException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.GraphResult;
import org.apiary.client.InvocationRequest;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.testapp.ExternalApp;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.voltdb.VoltTable;

/**
 * External steps (issue 42, item 4) in a frontend of this process, against a payment stub on the loopback interface
 * that counts its calls: the step's outputs are recorded before the next function runs and replayed, not called
 * again, by a later attempt; attempts, back-off and timeouts as declared; a step that exhausts them fails its graph.
 */
@DatabaseTest
class ExternalStepTest {
  private static boolean registered;
  private static List<RegisteredGraph> graphs;
  private static final FrontendConfig FAST = FrontendConfig.defaults().withLease(Duration.ofSeconds(2),
      Duration.ofMillis(400));
  private ApiaryDatabase db;

  @BeforeEach
  void setUp(TestDatabase database) {
    db = database.database();
    synchronized (ExternalStepTest.class) {
      if (!registered) {
        TestGraphs.registerOnce(db);
        graphs = Registrar.register(db, ExternalApp.APP);
        registered = true;
      }
    }
    TestGraphs.clear(db);
  }

  private static ApiaryClient client(FrontendServer frontend) {
    return ApiaryClient.connect(ClientConfig.of(frontend.endpoint()).withAttemptTimeout(Duration.ofSeconds(10)));
  }

  private long records(String invocation, String step) {
    VoltTable t = db.callAdmin("reading records", "@AdHoc", "SELECT COUNT(*) FROM APIARY_RECORDED_VARCHAR WHERE "
        + "invocation_id = ? AND function_name = ?", invocation, step).getResults()[0];
    t.advanceRow();
    return t.getLong(0);
  }

  private static String values(GraphResult r) {
    return org.apiary.internal.Json.tree(r.values(JsonNode.class)).toString();
  }

  @Test
  void algorithmOneRecordsAStepAsAWriterAndAGraphOfOneStepIsLoggedNotOneTransaction() {
    RegisteredGraph g = graphs.stream().filter(x -> x.name().equals("chargeThenBump")).findFirst().orElseThrow();
    assertEquals(List.of("charge", "bump"), g.recordedFunctions());
    RegisteredGraph.Node step = g.node("charge").orElseThrow();
    assertEquals(new RegisteredGraph.External(org.apiary.frontend.testapp.Charge.class.getName(), 3, 2_000, 50, 200),
        step.external());
    assertTrue(!new RegisteredGraph("lone", org.apiary.RecordingMode.SELECTIVE, List.of(step), List.of(), null)
        .oneTransaction(), "a step's record is not an invocation's outcome");
  }

  @Test
  void aStepRunsOnceWithItsIdempotencyKeyAndItsOutputsAreRecordedBeforeTheNextFunctionRuns() {
    try (PaymentStub stub = PaymentStub.start(); FrontendServer frontend = FrontendServer.start(db, FAST);
         ApiaryClient client = client(frontend)) {
      InvocationRequest request = InvocationRequest.of("chargeThenBump", null, stub.url(), 31L, 5L);
      GraphResult r = client.invoke(request);
      assertEquals("[\"receipt-1\",[5,5]]", values(r));
      assertEquals(1, stub.calls());
      assertEquals(List.of(request.id() + "#charge"), stub.keys());
      assertEquals(1, records(request.id(), "charge"));
      assertEquals(5L, TestGraphs.counter(db, 31L));
      // The same ID again answers the same and calls nothing.
      assertEquals(r.values(JsonNode.class), client.invoke(request).values(JsonNode.class));
      assertEquals(1, stub.calls());
    }
  }

  @Test
  void anAttemptCutOffAfterTheStepReturnedReplaysItsRecordInsteadOfCallingItAgain() {
    AtomicBoolean cut = new AtomicBoolean();
    FrontendHooks hooks = new FrontendHooks() {
      @Override
      public void afterFunction(String graph, String invocation, String function) {
        if (function.equals("charge") && cut.compareAndSet(false, true)) {
          throw new OutcomeUnknownException("fault injection: the attempt lost its answer after the step", null);
        }
      }
    };
    try (PaymentStub stub = PaymentStub.start(); FrontendServer frontend = FrontendServer.start(db, FAST, hooks);
         ApiaryClient client = client(frontend)) {
      InvocationRequest request = InvocationRequest.of("chargeThenBump", null, stub.url(), 32L, 7L);
      GraphResult r;
      try {
        r = client.invoke(request);
      } catch (OutcomeUnknownException e) {
        r = client.awaitResult(request.id(), Duration.ofSeconds(30));
      }
      assertTrue(cut.get());
      assertEquals("[\"receipt-1\",[7,7]]", values(r));
      assertEquals(1, stub.calls(), "the step was called again although its outputs were recorded");
      assertEquals(7L, TestGraphs.counter(db, 32L));
    }
  }

  /**
   * Another execution of the invocation (a takeover while this one was paused) stores the step's answer while this
   * one's attempt fails: the retry finds that record and replays it, instead of calling the step again (the exactly-once
   * drill saw such a call, after the kept answer was recorded and the next function ran).
   */
  @Test
  void aRetryAfterAnotherExecutionStoredTheStepsAnswerReplaysItInsteadOfCallingAgain() {
    String[] id = new String[1];
    byte[] othersAnswer = org.apiary.internal.FunctionOutputs.encode(List.of(
        new org.apiary.internal.Output(org.apiary.ApiaryFunction.SOURCE, org.apiary.internal.Json.tree(35L),
            org.apiary.internal.Json.tree(9L)),
        new org.apiary.internal.Output("receipt", null, org.apiary.internal.Json.tree("receipt-of-the-other"))));
    try (PaymentStub stub = PaymentStub.start().failingFirst(1).onCall(n -> {
          if (n == 1) { // what the other execution stored while this attempt was out
            db.callAdmin("storing another execution's record", org.apiary.runtime.SystemSchema
                    .recordFailureFencedProcedure(org.apiary.runtime.SystemSchema.RECORDED_VARCHAR), id[0], id[0],
                "charge", othersAnswer, null, null, 0L, 0L);
          }
        });
         FrontendServer frontend = FrontendServer.start(db, FAST); ApiaryClient client = client(frontend)) {
      InvocationRequest request = InvocationRequest.of("chargeThenBump", null, stub.url(), 35L, 3L);
      id[0] = request.id();
      GraphResult r = client.invoke(request);
      assertEquals(1, stub.calls(), "the step was called again after another execution had recorded its answer");
      assertEquals("[\"receipt-of-the-other\",[9,9]]", values(r));
      assertEquals(9L, TestGraphs.counter(db, 35L));
    }
  }

  /**
   * An execution whose frontend's lease lapsed since it began (it was paused past the lease, so another frontend may
   * run the invocation and call the step) does not call the step, and makes no further attempt: the step ends with
   * the lapse, which is not recorded as the step's failure.
   */
  @Test
  void anExecutionWhoseLeaseLapsedDoesNotCallTheStepNorRecordAFailure() throws Exception {
    RegisteredGraph g = graphs.stream().filter(x -> x.name().equals("chargeThenBump")).findFirst().orElseThrow();
    RegisteredGraph.Node step = g.node("charge").orElseThrow();
    String id = "lapsed-" + System.nanoTime();
    try (PaymentStub stub = PaymentStub.start(); ExternalSteps steps = new ExternalSteps(db)) {
      java.util.Map<String, List<JsonNode>> inputs = java.util.Map.of(org.apiary.ApiaryFunction.SOURCE, List.of(
          org.apiary.internal.Json.tree(stub.url()), org.apiary.internal.Json.tree(36L),
          org.apiary.internal.Json.tree(1L)));
      java.util.concurrent.CompletableFuture<?> ran = steps.run(step, id, inputs, true, null, null, null,
          () -> java.util.concurrent.CompletableFuture.completedFuture(null), name -> {
            throw new LeaseLapsedException("the lease lapsed (test)");
          });
      java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
          () -> ran.get(10, java.util.concurrent.TimeUnit.SECONDS));
      assertTrue(e.getCause() instanceof LeaseLapsedException, e.toString());
      assertEquals(0, stub.calls(), "the step was called by an execution whose lease had lapsed");
      assertEquals(0, records(id, "charge"), "the lapse was recorded as the step's outcome");
    }
  }

  @Test
  void aFailingStepIsRetriedWithTheSameKeyUntilItSucceeds() {
    try (PaymentStub stub = PaymentStub.start().failingFirst(2); FrontendServer frontend = FrontendServer.start(db, FAST);
         ApiaryClient client = client(frontend)) {
      InvocationRequest request = InvocationRequest.of("chargeThenBump", null, stub.url(), 33L, 3L);
      GraphResult r = client.invoke(request);
      assertEquals("[\"receipt-3\",[3,3]]", values(r));
      assertEquals(3, stub.calls());
      assertEquals(List.of(request.id() + "#charge", request.id() + "#charge", request.id() + "#charge"),
          stub.keys());
    }
  }

  @Test
  void aStepThatExhaustsItsAttemptsFailsTheGraphNamingTheStepAndTheCauseAndNothingAfterItRuns() {
    try (PaymentStub stub = PaymentStub.start().failingFirst(1_000);
         FrontendServer frontend = FrontendServer.start(db, FAST); ApiaryClient client = client(frontend)) {
      InvocationRequest request = InvocationRequest.of("chargeThenBump", null, stub.url(), 34L, 3L);
      FunctionFailedException e = assertThrows(FunctionFailedException.class, () -> client.invoke(request));
      assertEquals("charge", e.functionName());
      assertEquals(ExternalFunction.FAILED, e.errorType());
      assertTrue(e.errorMessage().contains("3 attempts") && e.errorMessage().contains("500"), e.errorMessage());
      assertEquals(3, stub.calls());
      assertEquals(0L, TestGraphs.counter(db, 34L));
      // The failure is recorded: asking again neither calls the stub nor changes the answer.
      assertThrows(FunctionFailedException.class, () -> client.invoke(request));
      assertEquals(3, stub.calls());
    }
  }

  @Test
  void anAttemptThatOutlivesItsTimeoutIsAbandonedAndTheStepFailsOnceEveryAttemptTimedOut() {
    try (PaymentStub stub = PaymentStub.start().delaying(1_500);
         FrontendServer frontend = FrontendServer.start(db, FAST); ApiaryClient client = client(frontend)) {
      long started = System.nanoTime();
      FunctionFailedException e = assertThrows(FunctionFailedException.class,
          () -> client.invoke("chargeQuickly", null, stub.url(), 35L, 3L));
      long ms = (System.nanoTime() - started) / 1_000_000;
      assertEquals("chargeQuickly", e.functionName());
      assertTrue(e.errorMessage().contains("timeout of 300 ms"), e.errorMessage());
      assertTrue(ms < 1_400, "two attempts of 300 ms took " + ms + " ms: the timeout did not cut them off");
      assertEquals(0L, TestGraphs.counter(db, 35L));
    }
  }
}
