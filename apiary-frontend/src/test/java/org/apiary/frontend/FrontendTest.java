package org.apiary.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;
import org.apiary.FunctionFailedException;
import org.apiary.InvalidRequestException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.GraphResult;
import org.apiary.client.InvocationRequest;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.testapp.GraphApp;
import org.apiary.internal.Json;
import org.apiary.internal.wire.SocketLoop;
import org.apiary.internal.wire.WireReply;
import org.apiary.internal.wire.WireRequest;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/** Graphs through in-process frontends and the real client, against the real database. */
@DatabaseTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FrontendTest {
  private ApiaryDatabase db;
  private FrontendServer frontend;
  private FrontendServer other;
  private ApiaryClient client;

  @BeforeAll
  void start(TestDatabase database) {
    db = database.database();
    TestGraphs.registerOnce(db);
    FrontendConfig config = FrontendConfig.defaults().withMaxRequestBytes(4096);
    frontend = FrontendServer.start(db, config);
    other = FrontendServer.start(db, config);
    client = ApiaryClient.connect(ClientConfig.of(frontend.endpoint()).withAttemptTimeout(Duration.ofSeconds(20)));
  }

  @AfterAll
  void stop() {
    client.close();
    frontend.close();
    other.close();
  }

  @BeforeEach
  void clear() {
    TestGraphs.clear(db);
  }

  @Test
  void aWriteThenAReadPassTheirValueAlongTheEdge() {
    GraphResult r = client.invoke("bumpAndReport", 4L, 5L);
    assertEquals(List.of(5L, 5L), r.values(List.class).get(0).stream().map(v -> ((Number) v).longValue()).toList());
    assertEquals(5L, TestGraphs.counter(db, 4L));
  }

  @Test
  void aFanOutToFiftyKeysReturnsTheMergedResultOfFiftySinglePartitionExecutions() {
    GraphResult r = client.invoke("fanOut", null, 50);
    assertEquals(LongStream.rangeClosed(1, 50).map(k -> k * 10).boxed().toList(), r.values(Long.class));
    for (long k = 1; k <= 50; k++) {
      assertEquals(1L, TestGraphs.hits(db, k), "hits on key " + k);
    }
  }

  @Test
  void aRetryWithTheSameIdToAnyFrontendReturnsTheFirstAnswerAndWritesOnce() {
    InvocationRequest request = InvocationRequest.of("bumpAndReport", 8L, 3L);
    GraphResult first = client.invoke(request);
    GraphResult again = client.invoke(request);
    try (ApiaryClient viaOther = ApiaryClient.connect(ClientConfig.of(other.endpoint()))) {
      assertEquals(first.values(JsonNode.class), viaOther.invoke(request).values(JsonNode.class));
      assertEquals(first.values(JsonNode.class), viaOther.result(request.id()).orElseThrow().values(JsonNode.class));
    }
    assertEquals(first.values(JsonNode.class), again.values(JsonNode.class));
    assertEquals(3L, TestGraphs.counter(db, 8L));
  }

  @Test
  void aFirstRunWhoseOutputsWereRecordedConcurrentlyReplaysThem() throws Exception {
    InvocationRequest request = InvocationRequest.of("bumpAndReport", 14L, 6L);
    // As if a retry of this invocation on another frontend had already run bump and recorded it.
    new org.apiary.runtime.FunctionInvoker(db, org.apiary.runtime.FunctionCatalog.load(db)).callAsync("bump", 14L,
        new org.apiary.internal.Invocation(java.util.Map.of("source", List.of(Json.tree(6L))), request.id(), true))
        .get(30, java.util.concurrent.TimeUnit.SECONDS);
    GraphResult r = client.invoke(request);
    assertEquals(List.of(6L, 6L), r.values(List.class).get(0).stream().map(v -> ((Number) v).longValue()).toList());
    assertEquals(6L, TestGraphs.counter(db, 14L), "bump took effect once");
  }

  @Test
  void aFailingFunctionEndsTheGraphWithItsNameAndMessage() {
    FunctionFailedException e = assertThrows(FunctionFailedException.class, () -> client.invoke("failing", 2L, 1L));
    assertEquals("explode", e.functionName());
    assertTrue(e.errorMessage().contains("explode always fails, key 2"), e.errorMessage());
    assertEquals(1L, TestGraphs.counter(db, 2L), "bump committed before explode failed");
  }

  @Test
  void badRequestsGetClearErrorsAndRunNothing() {
    assertMessage(assertThrows(InvalidRequestException.class, () -> client.invoke("noSuchGraph", 1L, 1L)),
        "unknown graph 'noSuchGraph'");
    assertMessage(assertThrows(InvalidRequestException.class, () -> client.invoke("bumpAndReport", 1L, "five")),
        "argument 1 of graph 'bumpAndReport' is the string \"five\" but edge 'source' into function 'bump' carries an integer");
    assertMessage(assertThrows(InvalidRequestException.class, () -> client.invoke("bumpAndReport", null, 5L)),
        "needs a partition key");
    assertMessage(assertThrows(InvalidRequestException.class, () -> client.invoke("bumpAndReport", "k", 5L)),
        "partition key");
    assertMessage(assertThrows(InvalidRequestException.class, () -> client.invoke("fanOut", 3L, 5)),
        "takes no partition key");
    assertEquals(0L, TestGraphs.counter(db, 1L));
  }

  @Test
  void malformedAndOversizedFramesGetAnErrorReplyAndTheFrontendKeepsServing() {
    try (ZContext ctx = new ZContext()) {
      ZMQ.Socket s = rawDealer(ctx);
      s.connect(frontend.endpoint());
      assertRawError(s, "not json".getBytes(StandardCharsets.UTF_8), "malformed request");
      assertRawError(s, "{\"type\":\"invoke\"}".getBytes(StandardCharsets.UTF_8), "invocation ID");
      assertRawError(s, "{\"type\":\"dance\",\"id\":\"x\"}".getBytes(StandardCharsets.UTF_8), "unknown request type");
      assertRawError(s, new byte[5000], "exceeds this frontend's limit of 4096 bytes");
      // A message of several frames is as many requests (clients batch them), each answered on its own.
      s.send("a".getBytes(StandardCharsets.UTF_8), ZMQ.SNDMORE);
      assertRawError(s, "b".getBytes(StandardCharsets.UTF_8), "malformed request");
      WireReply second = Json.read(s.recv(), WireReply.class, "reply");
      assertEquals(WireReply.INVALID_REQUEST, second.error());
      assertTrue(second.message().contains("malformed request"), second.message());
    }
    assertEquals(2L, client.invoke("bumpAndReport", 6L, 2L).values(List.class).get(0).size());
  }

  /**
   * Under a flood of frames the frontend cannot keep up with, valid calls still get their answers while the flood goes
   * on: the socket thread reads a bounded number of messages per round and in between hands out the replies that
   * VoltDB's answers queued. It used to read until the socket was empty, which a flood never lets happen, so replies
   * waited for the flood to end (the garbage drill's valid clients: seconds per call).
   */
  @Test
  void validCallsAreAnsweredWhileAFloodOfGarbageGoesOn() throws Exception {
    java.util.concurrent.atomic.AtomicBoolean flooding = new java.util.concurrent.atomic.AtomicBoolean(true);
    java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
    // Deep nesting: far more work to refuse than to send, so the frontend's queue never empties.
    byte[] costly = ("{\"type\":\"invoke\",\"id\":\"deep\",\"graph\":\"bumpAndReport\",\"key\":1,\"args\":"
        + "[".repeat(1_000) + "]".repeat(1_000) + "}").getBytes(StandardCharsets.UTF_8);
    List<Thread> flooders = new ArrayList<>();
    try (ZContext ctx = new ZContext()) {
      for (int i = 0; i < 3; i++) {
        ZMQ.Socket s = rawDealer(ctx);
        s.setSendTimeOut(100);
        s.connect(frontend.endpoint());
        Thread t = new Thread(() -> {
          long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
          while (!stop.get() && System.nanoTime() < until) {
            s.send(costly, 0);
            while (s.recv(ZMQ.DONTWAIT) != null) {
              // replies to garbage: read so they do not pile up
            }
          }
          flooding.set(false);
        }, "flooder-" + i);
        flooders.add(t);
      }
      flooders.forEach(Thread::start);
      try (ApiaryClient patient = ApiaryClient.connect(ClientConfig.of(frontend.endpoint())
          .withAttemptTimeout(Duration.ofSeconds(30)).withMaxAttempts(1))) {
        Thread.sleep(1_000); // the flood's backlog builds up first
        for (long k = 0; k < 5; k++) {
          patient.invoke("bumpAndReport", 100L + k, 1L);
        }
        assertTrue(flooding.get(), "the valid calls were answered only once the 20 s flood had ended");
      } finally {
        stop.set(true);
        for (Thread t : flooders) {
          t.join(30_000);
        }
      }
    }
  }

  /** A caller name longer than a record's caller column is refused before anything runs, not failed by the insert. */
  @Test
  void anOverlongCallerIsRefusedBeforeAnythingRuns() {
    try (ZContext ctx = new ZContext()) {
      ZMQ.Socket s = rawDealer(ctx);
      s.connect(frontend.endpoint());
      String caller = "c".repeat(WireRequest.MAX_CALLER_LENGTH + 1);
      assertRawError(s, WireRequest.invoke(java.util.UUID.randomUUID().toString(), "bumpAndReport", Json.tree(31L),
          List.of(Json.tree(3L)), caller).toBytes(), "a caller has at most " + WireRequest.MAX_CALLER_LENGTH);
    }
    assertEquals(0L, TestGraphs.counter(db, 31L));
  }

  /**
   * Issue 14: an over-limit frame gets an error reply however large it is (up to the frontend's hard cap), and the
   * connection it came on stays up: a raw DEALER (the client refuses to send one) sends ten times the limit, is told
   * the size and the limit, and then runs a valid call on the same connection, which never dropped. The connection
   * is made (a small frame answered) before disconnections count: JeroMQ now and then leaves a new connection's
   * handshake silent until {@link org.apiary.internal.wire.SocketLoop#HANDSHAKE_MILLIS} ends it and the DEALER
   * connects again, which is not the frame's doing (seen once in CI: the test took 2.07 s).
   */
  @Test
  void aFrameOfTenTimesTheLimitGetsAnErrorReplyAndTheSameConnectionThenServesACall() {
    try (ZContext ctx = new ZContext()) {
      ZMQ.Socket s = rawDealer(ctx);
      ZMQ.Socket events = watchDisconnects(ctx, s);
      s.connect(frontend.endpoint());
      assertRawError(s, "not json".getBytes(StandardCharsets.UTF_8), "malformed request");
      while (ZMQ.Event.recv(events, ZMQ.DONTWAIT) != null) {
        // disconnections before the connection answered: a remade handshake, not the frame's doing
      }
      assertRawError(s, new byte[10 * 4096],
          "request too large: a request of 40960 bytes exceeds this frontend's limit of 4096 bytes");
      String id = java.util.UUID.randomUUID().toString();
      assertTrue(s.send(WireRequest.invoke(id, "bumpAndReport", Json.tree(7L), List.of(Json.tree(3L)), null)
          .toBytes(), 0), "could not send the valid call within 10 s");
      WireReply reply = nextAnswer(s);
      assertEquals(WireReply.OK, reply.status(), reply.toString());
      assertEquals(id, reply.id());
      assertEquals(3L, TestGraphs.counter(db, 7L));
      assertEquals(null, ZMQ.Event.recv(events, ZMQ.DONTWAIT), "the connection dropped");
    }
  }

  /** Only a frame above the hard cap drops its connection, without a reply; the frontend serves on. */
  @Test
  void aFrameAboveTheHardCapDropsOnlyItsConnection() {
    long cap = FrontendConfig.defaults().withMaxRequestBytes(4096).maxFrameBytes();
    assertEquals(FrontendConfig.MIN_FRAME_CAP_BYTES, cap, "16 x 4096 is below the floor");
    try (ZContext ctx = new ZContext()) {
      ZMQ.Socket s = rawDealer(ctx);
      ZMQ.Socket events = watchDisconnects(ctx, s);
      events.setReceiveTimeOut(10_000);
      s.connect(frontend.endpoint());
      assertRawError(s, new byte[(int) cap], "request of " + cap + " bytes exceeds");
      assertTrue(s.send(new byte[(int) cap + 1], 0), "could not send within 10 s");
      ZMQ.Event dropped = ZMQ.Event.recv(events);
      assertTrue(dropped != null && dropped.getEvent() == ZMQ.EVENT_DISCONNECTED, "the connection did not drop");
      s.setReceiveTimeOut(1_000);
      assertEquals(null, s.recv(), "a frame above the hard cap was answered");
    }
    assertEquals(2L, client.invoke("bumpAndReport", 8L, 2L).values(List.class).get(0).size());
  }

  /** A DEALER's monitor, reporting its disconnections. */
  private static ZMQ.Socket watchDisconnects(ZContext ctx, ZMQ.Socket s) {
    String address = "inproc://monitor-" + java.util.UUID.randomUUID();
    assertTrue(s.monitor(address, ZMQ.EVENT_DISCONNECTED));
    ZMQ.Socket events = ctx.createSocket(SocketType.PAIR);
    events.connect(address);
    return events;
  }

  /** The next reply that is not "running", within 10 s per reply. */
  private static WireReply nextAnswer(ZMQ.Socket s) {
    for (int i = 0; i < 10; i++) {
      byte[] answer = s.recv();
      assertTrue(answer != null, "no reply within 10 s");
      WireReply reply = Json.read(answer, WireReply.class, "reply");
      if (!WireReply.RUNNING.equals(reply.status())) {
        return reply;
      }
    }
    throw new AssertionError("only 'running' replies");
  }

  /** A graph registered while the frontend runs is found by the first call after registration returns. */
  @Test
  void aGraphRegisteredWhileTheFrontendRunsIsFoundAtOnce() {
    for (int i = 0; i < 3; i++) {
      String name = "late" + i + "_" + Long.toHexString(System.nanoTime());
      org.apiary.frontend.Registrar.register(db, org.apiary.Application.of(GraphApp.SCHEMA,
          org.apiary.Graph.named(name).addLocalFunction("bump", org.apiary.frontend.testapp.Bump.class)
              .addLocalFunction("report", org.apiary.frontend.testapp.Report.class)
              .addEdge(org.apiary.Graph.SOURCE, "bump", org.apiary.ApiaryFunction.SOURCE, Long.class)
              .addEdge("bump", "report", "bumped")
              .addEdge("report", org.apiary.Graph.SINK, org.apiary.ApiaryFunction.SINK)));
      client.invoke(name, 21L, 1L);
    }
    assertEquals(3L, TestGraphs.counter(db, 21L));
  }

  @Test
  void anIdReusedForADifferentRequestIsRefused() {
    InvocationRequest request = InvocationRequest.of("bumpAndReport", 9L, 1L);
    client.invoke(request);
    InvocationRequest reused = InvocationRequest.of("bumpAndReport", 9L, 2L).withId(request.id());
    assertMessage(assertThrows(InvalidRequestException.class, () -> client.invoke(reused)), "already used");
    assertEquals(1L, TestGraphs.counter(db, 9L));
  }

  @Test
  void manyInvocationsInFlightAtOnceAllComplete() throws Exception {
    List<java.util.concurrent.CompletableFuture<GraphResult>> calls = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      calls.add(client.invokeAsync("bumpAndReport", (long) (i % 20), 1L));
    }
    for (var c : calls) {
      c.get(60, java.util.concurrent.TimeUnit.SECONDS);
    }
    for (long k = 0; k < 20; k++) {
      assertEquals(20L, TestGraphs.counter(db, k));
    }
  }

  @Test
  void retentionDeletesEndedInvocationsAndTheirRecords() {
    InvocationRequest request = InvocationRequest.of("bumpAndReport", 11L, 1L);
    client.invoke(request);
    assertTrue(client.result(request.id()).isPresent());
    try (FrontendServer cleaner = FrontendServer.start(db, FrontendConfig.defaults()
        .withRetention(Duration.ZERO, Duration.ofHours(1)))) {
      assertTrue(TestGraphs.count(db, "APIARY_RECORDED_INTEGER") > 0);
      // Older than the cutoff: the retention (zero here) but at least the one-second clock-skew margin.
      sleep(1_100);
      assertTrue(cleaner.deleteExpiredRecords() > 0);
    }
    assertEquals(0L, TestGraphs.count(db, "APIARY_RECORDED_INTEGER"));
    assertMessage(assertThrows(InvalidRequestException.class, () -> client.result(request.id())), "no invocation");
  }

  @Test
  void withoutTheInvocationLogGraphsStillRun() {
    try (FrontendServer unlogged = FrontendServer.start(db, FrontendConfig.defaults().withInvocationLog(false));
         ApiaryClient c = ApiaryClient.connect(ClientConfig.of(unlogged.endpoint()))) {
      InvocationRequest request = InvocationRequest.of("bumpAndReport", 12L, 7L);
      assertEquals(List.of(7L, 7L), c.invoke(request).values(List.class).get(0).stream()
          .map(v -> ((Number) v).longValue()).toList());
      assertFalse(TestGraphs.logged(db, request.id()));
      assertTrue(TestGraphs.logged(db, client.invoke(InvocationRequest.of("bumpAndReport", 12L, 1L)).invocationId()));
    }
  }

  /**
   * A DEALER that talks the wire protocol directly (no ApiaryClient, which refuses bad requests itself), waiting at
   * most 10 s to send or receive; a send waits for the connection, so a lost first frame cannot pass for no reply.
   * Its handshake interval is the loop sockets' ({@link SocketLoop#HANDSHAKE_MILLIS}): JeroMQ now and then leaves a
   * new outgoing connection silent until that interval remakes it (30 s by default, longer than these waits).
   */
  private static ZMQ.Socket rawDealer(ZContext ctx) {
    ZMQ.Socket s = ctx.createSocket(SocketType.DEALER);
    s.setHandshakeIvl(SocketLoop.HANDSHAKE_MILLIS);
    s.setReceiveTimeOut(10_000);
    s.setSendTimeOut(10_000);
    s.setImmediate(true);
    return s;
  }

  private static void assertRawError(ZMQ.Socket s, byte[] frame, String expected) {
    assertTrue(s.send(frame, 0), "could not send within 10 s (no connection to the frontend)");
    byte[] answer = s.recv();
    assertTrue(answer != null, () -> "no reply within 10 s; the frontends' socket threads:\n" + socketThreads());
    WireReply reply = Json.read(answer, WireReply.class, "reply");
    assertEquals(WireReply.ERROR, reply.status());
    assertEquals(WireReply.INVALID_REQUEST, reply.error());
    assertTrue(reply.message().contains(expected), reply.message());
  }

  private static String socketThreads() {
    StringBuilder out = new StringBuilder();
    Thread.getAllStackTraces().forEach((thread, stack) -> {
      if (thread.getName().startsWith("apiary-frontend")) {
        out.append(thread.getName()).append(' ').append(thread.getState()).append('\n');
        for (StackTraceElement frame : stack) {
          out.append("    at ").append(frame).append('\n');
        }
      }
    });
    return out.toString();
  }

  private static void assertMessage(Exception e, String expected) {
    assertTrue(e.getMessage().contains(expected), "'" + e.getMessage() + "' should contain '" + expected + "'");
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
