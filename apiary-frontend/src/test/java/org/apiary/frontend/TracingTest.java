package org.apiary.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apiary.FunctionFailedException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.GraphResult;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.Json;
import org.apiary.internal.wire.WireReply;
import org.apiary.internal.wire.WireRequest;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Issue 43, item 5: traces. With an SDK installed (here one exporting to memory), a call is one trace from the
 * caller's span through the client's call and attempt spans to the frontend's graph span and a span per function
 * execution; a malformed trace context starts a new trace and the call succeeds; a failed function's span has error
 * status; a taken-over invocation's graph span links to the trace its request came with.
 */
@DatabaseTest
class TracingTest {
  private static final AttributeKey<String> INVOCATION = AttributeKey.stringKey("apiary.invocation.id");
  private static final AttributeKey<String> FUNCTION = AttributeKey.stringKey("apiary.function");
  private static final FrontendConfig CONFIG = FrontendConfig.defaults().withLease(Duration.ofSeconds(2),
      Duration.ofMillis(400));
  private static final InMemorySpanExporter SPANS = InMemorySpanExporter.create();
  private static OpenTelemetrySdk sdk;
  private ApiaryDatabase db;

  @BeforeAll
  static void installSdk() {
    sdk = OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder()
        .addSpanProcessor(SimpleSpanProcessor.create(SPANS)).build()).build();
    GlobalOpenTelemetry.resetForTest(); // other test classes in this JVM may have fixed the no-op one
    GlobalOpenTelemetry.set(sdk);
  }

  @AfterAll
  static void removeSdk() {
    GlobalOpenTelemetry.resetForTest();
    sdk.close();
  }

  @BeforeEach
  void setUp(TestDatabase database) {
    db = database.database();
    TestGraphs.registerOnce(db);
    SPANS.reset();
  }

  private static ApiaryClient client(FrontendServer frontend) {
    return ApiaryClient.connect(ClientConfig.of(frontend.endpoint()).withAttemptTimeout(Duration.ofSeconds(5)));
  }

  /** The finished spans once one matches {@code until} (a graph span ends just after its reply is sent). */
  private static List<SpanData> spansOnce(Predicate<SpanData> until) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline) {
      List<SpanData> spans = SPANS.getFinishedSpanItems();
      if (spans.stream().anyMatch(until)) {
        return spans;
      }
      Thread.sleep(20);
    }
    throw new AssertionError("no such span within 10 s; spans: " + SPANS.getFinishedSpanItems());
  }

  private static Predicate<SpanData> graphSpanOf(String invocation) {
    return s -> s.getName().startsWith("apiary.graph ") && invocation.equals(s.getAttributes().get(INVOCATION));
  }

  private static SpanData only(List<SpanData> spans, Predicate<SpanData> which, String what) {
    List<SpanData> found = spans.stream().filter(which).toList();
    assertEquals(1, found.size(), what + ": " + found);
    return found.get(0);
  }

  @Test
  void aCallInsideAParentSpanIsOneTraceDownToEachFunctionExecution() throws Exception {
    Span parent = sdk.getTracer("test").spanBuilder("test-parent").startSpan();
    String id;
    try (FrontendServer frontend = FrontendServer.start(db, CONFIG); ApiaryClient client = client(frontend)) {
      try (Scope ignored = parent.makeCurrent()) {
        GraphResult r = client.invoke("fanOut", null, 3);
        id = r.invocationId();
        assertEquals(3, r.values(Long.class).size());
      } finally {
        parent.end();
      }
      List<SpanData> spans = spansOnce(graphSpanOf(id));
      String trace = parent.getSpanContext().getTraceId();
      SpanData call = only(spans, s -> s.getName().equals("apiary.invoke fanOut"), "the call's span");
      SpanData attempt = only(spans, s -> s.getName().equals("apiary.attempt")
          && s.getParentSpanId().equals(call.getSpanId()), "the one attempt's span");
      SpanData graph = only(spans, graphSpanOf(id), "the graph's span");
      assertEquals(parent.getSpanContext().getSpanId(), call.getParentSpanId());
      assertEquals(attempt.getSpanId(), graph.getParentSpanId(), "the graph span is the client attempt's child");
      List<SpanData> functions = spans.stream().filter(s -> s.getName().startsWith("apiary.function ")).toList();
      assertEquals(List.of("hit", "hit", "hit", "spread"), functions.stream()
          .map(s -> s.getAttributes().get(FUNCTION)).sorted().toList(), "one span per execution, per key on fan-out");
      for (SpanData s : List.of(call, attempt, graph, functions.get(0), functions.get(1), functions.get(2),
          functions.get(3))) {
        assertEquals(trace, s.getTraceId(), s.getName() + " is in the caller's trace");
      }
      for (SpanData f : functions) {
        assertEquals(graph.getSpanId(), f.getParentSpanId());
        assertEquals(id, f.getAttributes().get(INVOCATION));
        assertEquals("ok", f.getAttributes().get(AttributeKey.stringKey("apiary.outcome")));
        assertEquals(false, f.getAttributes().get(AttributeKey.booleanKey("apiary.function.answered_from_record")));
        assertEquals(f.getAttributes().get(FUNCTION).equals("hit") ? "local" : "global",
            f.getAttributes().get(AttributeKey.stringKey("apiary.function.kind")));
        assertTrue(f.getAttributes().get(AttributeKey.booleanKey("apiary.function.recorded")) != null);
        assertEquals(null, f.getAttributes().get(AttributeKey.stringKey("apiary.partition_key")), "keys are off");
      }
      assertEquals(StatusCode.UNSET, graph.getStatus().getStatusCode());
    }
  }

  @Test
  void whereKeysAreRequiredTheRequestAsStoredKeepsItsTraceContext() throws Exception {
    // The frontend stores the request again with the key's identity and without the key: the trace context stays.
    Credentials.Issued key = Credentials.create(db, "tracer");
    Span parent = sdk.getTracer("test").spanBuilder("secured-parent").startSpan();
    try (FrontendServer frontend = FrontendServer.start(db, CONFIG.withCredentialsRequired(true));
         ApiaryClient client = ApiaryClient.connect(ClientConfig.of(frontend.endpoint())
             .withAttemptTimeout(Duration.ofSeconds(5)).withCredential(key.apiKey()))) {
      String id;
      try (Scope ignored = parent.makeCurrent()) {
        id = client.invoke("bumpAndReport", 78L, 1L).invocationId();
      } finally {
        parent.end();
      }
      String stored = Credentials.invocationId("tracer", id);
      SpanData graph = only(spansOnce(graphSpanOf(stored)), graphSpanOf(stored), "the graph's span");
      assertEquals(parent.getSpanContext().getTraceId(), graph.getTraceId());
      assertTrue(graph.getParentSpanContext().isValid() && graph.getParentSpanContext().isRemote(),
          "the client's attempt is its parent");
    }
  }

  @Test
  void partitionKeysAreOnFunctionSpansOnlyWhenEnabled() throws Exception {
    System.setProperty("apiary.trace.partitionKeys", "true"); // read when a frontend starts
    try (FrontendServer frontend = FrontendServer.start(db, CONFIG); ApiaryClient client = client(frontend)) {
      String id = client.invoke("bumpAndReport", 77L, 1L).invocationId();
      List<SpanData> functions = spansOnce(graphSpanOf(id)).stream()
          .filter(s -> id.equals(s.getAttributes().get(INVOCATION)) && s.getName().startsWith("apiary.function "))
          .toList();
      assertEquals(2, functions.size(), functions.toString());
      for (SpanData f : functions) {
        assertEquals("77", f.getAttributes().get(AttributeKey.stringKey("apiary.partition_key")));
      }
    } finally {
      System.clearProperty("apiary.trace.partitionKeys");
    }
  }

  @Test
  void aMalformedOrOversizedTraceparentStartsANewTraceAndTheCallSucceeds() throws Exception {
    String oversized = "00-" + "a".repeat(32) + "-" + "b".repeat(16) + "-01" + "c".repeat(200);
    String[] fields = {"\"traceparent\":\"\\u0000\\u00ff garbage\"", "\"traceparent\":\"" + oversized + "\"",
        "\"traceparent\":\"00-00000000000000000000000000000000-bbbbbbbbbbbbbbbb-01\"",
        "\"traceparent\":42,\"tracestate\":{\"x\":1}"};
    try (FrontendServer frontend = FrontendServer.start(db, CONFIG); ZContext ctx = new ZContext()) {
      ZMQ.Socket socket = ctx.createSocket(SocketType.DEALER);
      socket.setReceiveTimeOut(10_000);
      assertTrue(socket.connect(frontend.endpoint()));
      for (int i = 0; i < fields.length; i++) {
        String id = "bad-trace-" + i + "-" + System.nanoTime();
        String frame = new String(WireRequest.invoke(id, "bumpAndReport", Json.tree(900L + i),
            List.of(Json.tree(2L)), null).toBytes(), StandardCharsets.UTF_8);
        frame = frame.substring(0, frame.length() - 1) + "," + fields[i] + "}";
        assertTrue(socket.send(frame.getBytes(StandardCharsets.UTF_8)));
        byte[] answer = socket.recv();
        assertTrue(answer != null, "no reply within 10 s for " + fields[i]);
        WireReply reply = WireReply.fromBytes(answer);
        assertEquals(WireReply.OK, reply.status(), fields[i] + ": " + reply.message());
        SpanData graph = only(spansOnce(graphSpanOf(id)), graphSpanOf(id), "the graph's span");
        assertFalse(graph.getParentSpanContext().isValid(), "a new trace for " + fields[i]);
        assertNotEquals("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", graph.getTraceId());
      }
    }
  }

  @Test
  void aFailedFunctionsSpanAndItsGraphsHaveErrorStatus() throws Exception {
    try (FrontendServer frontend = FrontendServer.start(db, CONFIG); ApiaryClient client = client(frontend)) {
      FunctionFailedException failed = assertThrows(FunctionFailedException.class,
          () -> client.invoke("failing", 31L, 1L));
      List<SpanData> spans = spansOnce(s -> s.getName().equals("apiary.graph failing"));
      SpanData explode = only(spans, s -> "explode".equals(s.getAttributes().get(FUNCTION)), "explode's span");
      assertEquals(StatusCode.ERROR, explode.getStatus().getStatusCode());
      assertEquals("failed", explode.getAttributes().get(AttributeKey.stringKey("apiary.outcome")));
      SpanData bump = only(spans, s -> "bump".equals(s.getAttributes().get(FUNCTION)), "bump's span");
      assertEquals(StatusCode.UNSET, bump.getStatus().getStatusCode());
      assertEquals(StatusCode.ERROR, only(spans, s -> s.getName().equals("apiary.graph failing"), "graph")
          .getStatus().getStatusCode(), failed.getMessage());
      assertEquals(StatusCode.ERROR, only(spans, s -> s.getName().equals("apiary.invoke failing"), "call")
          .getStatus().getStatusCode());
    }
  }

  @Test
  void aTakenOverInvocationsGraphSpanLinksToTheTraceItsRequestCameWith() throws Exception {
    // A frontend that logged the request and died before running it (as after SIGKILL): its lease has run out.
    String dead = "dead-" + System.nanoTime();
    new FrontendLeases(db, dead, "tcp://127.0.0.1:1").renew(Duration.ofMillis(1));
    String id = "traced-orphan-" + System.nanoTime();
    Span original = sdk.getTracer("test").spanBuilder("original-attempt").startSpan();
    original.end();
    String traceparent = "00-" + original.getSpanContext().getTraceId() + "-" + original.getSpanContext().getSpanId()
        + "-01";
    byte[] request = WireRequest.withTraceContext(Json.bytes(WireRequest.invoke(id, "bumpAndReport", Json.tree(7L),
        List.of(Json.tree(4L)), null)), traceparent, null);
    int version = new GraphCatalog(db, Duration.ZERO).latest("bumpAndReport").orElseThrow().version();
    new InvocationLog(db).begin(id, "bumpAndReport", version, request, dead).get();
    try (FrontendServer frontend = FrontendServer.start(db, CONFIG); ApiaryClient client = client(frontend)) {
      assertEquals(id, client.awaitResult(id, Duration.ofSeconds(15)).invocationId());
      SpanData graph = only(spansOnce(graphSpanOf(id)), graphSpanOf(id), "the takeover's graph span");
      assertEquals(1, graph.getLinks().size(), graph.toString());
      assertEquals(original.getSpanContext().getTraceId(), graph.getLinks().get(0).getSpanContext().getTraceId());
      assertEquals(original.getSpanContext().getSpanId(), graph.getLinks().get(0).getSpanContext().getSpanId());
      assertEquals(true, graph.getAttributes().get(AttributeKey.booleanKey("apiary.taken_over")));
      assertTrue(spansOnce(graphSpanOf(id)).stream().anyMatch(s -> s.getName().equals("apiary.function report")
          && s.getParentSpanId().equals(graph.getSpanId())), "its functions' spans are under it");
    }
  }
}
