package org.apiary.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.apiary.ApiaryException;
import org.apiary.DatabaseException;
import org.apiary.FunctionFailedException;
import org.apiary.InvalidRequestException;
import org.apiary.OutcomeUnknownException;
import org.apiary.internal.Output;
import org.apiary.internal.Json;
import org.apiary.internal.wire.WireReply;
import org.apiary.internal.wire.WireRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

@Timeout(value = 20, unit = TimeUnit.SECONDS)
class ApiaryClientTest {
  private static final AtomicLong ARRIVALS = new AtomicLong();
  private static final List<byte[][]> SILENT = List.of();

  private final List<AutoCloseable> toClose = new ArrayList<>();

  @AfterEach
  void closeEverything() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  @Test
  void okReplyBecomesTheResult() {
    FakeFrontend frontend = frontend(r -> replies(ok(r.id(), r.args().get(0).asLong() + 1)));
    ApiaryClient client = client(ClientConfig.of(frontend.endpoint));

    InvocationRequest request = InvocationRequest.of("increment", "account-7", 41);
    GraphResult result = client.invoke(request);

    assertEquals(request.id(), result.invocationId());
    assertEquals(42L, result.value(Long.class));
    Received seen = frontend.received.get(0);
    assertEquals(WireRequest.INVOKE, seen.request().type());
    assertEquals("increment", seen.request().graph());
    assertEquals("account-7", seen.request().key().asText());
    assertEquals(List.of(41L), seen.request().args().stream().map(JsonNode::asLong).toList());
  }

  @Test
  void everyInvokeAttemptCarriesWhenTheClientStopsWaitingAndAnExpiredRefusalIsNotAFailureOfTheCall() {
    // The first frontend refuses the attempt as expired; the call moves on to the second, which answers.
    FakeFrontend refusing = frontend(r -> replies(WireReply.error(r.id(), WireReply.EXPIRED, "too late here")));
    FakeFrontend answering = frontend(r -> replies(ok(r.id(), 7)));
    ClientConfig config = ClientConfig.of(refusing.endpoint, answering.endpoint)
        .withAttemptTimeout(java.time.Duration.ofSeconds(3)).withMaxAttempts(2);
    ApiaryClient client = client(config);
    long before = System.currentTimeMillis();
    assertEquals(7L, client.invoke("g", "k", 1).value(Long.class));
    long after = System.currentTimeMillis();
    Received seen = answering.received.get(0);
    long expires = seen.request().expires();
    assertTrue(expires >= before + 6_000 && expires <= after + 6_000, "expires " + expires + ", sent between "
        + before + " and " + after + " with a wait of 2 x 3 s");
    assertEquals(expires, refusing.received.get(0).request().expires(), "every attempt of a call has one expiry");

    // Refused as expired everywhere (a client clock far behind the frontends'): nothing ran, and it says why.
    ApiaryClient lagging = client(ClientConfig.of(refusing.endpoint).withMaxAttempts(2));
    ApiaryException refused = assertThrows(ApiaryException.class, () -> lagging.invoke("g", "k", 1));
    assertFalse(refused instanceof org.apiary.OutcomeUnknownException, refused.toString());
    assertTrue(refused.getMessage().contains("not started") && refused.getMessage().contains("nothing ran")
        && refused.getMessage().contains("too late here"), refused.getMessage());
  }

  @Test
  void eachAttemptIsASpanUnderTheCallsAndItsFrameCarriesThatSpansTraceContext() {
    // Issue 43, traces: with an SDK installed, a call is a span under the caller's, each attempt a span under it.
    FakeFrontend refusing = frontend(r -> replies(WireReply.error(r.id(), WireReply.DATABASE, "not now")));
    FakeFrontend answering = frontend(r -> replies(ok(r.id(), 7)));
    ClientConfig config = ClientConfig.of(refusing.endpoint, answering.endpoint).withMaxAttempts(2);
    io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter spans =
        io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter.create();
    io.opentelemetry.sdk.OpenTelemetrySdk sdk = io.opentelemetry.sdk.OpenTelemetrySdk.builder()
        .setTracerProvider(io.opentelemetry.sdk.trace.SdkTracerProvider.builder().addSpanProcessor(
            io.opentelemetry.sdk.trace.export.SimpleSpanProcessor.create(spans)).build()).build();
    io.opentelemetry.api.GlobalOpenTelemetry.resetForTest();
    io.opentelemetry.api.GlobalOpenTelemetry.set(sdk);
    try {
      ApiaryClient client = client(config);
      io.opentelemetry.api.trace.Span parent = sdk.getTracer("test").spanBuilder("parent").startSpan();
      try (io.opentelemetry.context.Scope ignored = parent.makeCurrent()) {
        assertEquals(7L, client.invoke("g", "k", 1).value(Long.class));
      } finally {
        parent.end();
      }
      String trace = parent.getSpanContext().getTraceId();
      String first = refusing.received.get(0).trace().validTraceparent();
      String second = answering.received.get(0).trace().validTraceparent();
      assertTrue(first != null && second != null, first + " / " + second);
      assertTrue(first.contains(trace) && second.contains(trace), "both attempts are in the caller's trace");
      List<io.opentelemetry.sdk.trace.data.SpanData> attempts = spans.getFinishedSpanItems().stream()
          .filter(s -> s.getName().equals("apiary.attempt")).toList();
      assertEquals(2, attempts.size(), spans.getFinishedSpanItems().toString());
      io.opentelemetry.sdk.trace.data.SpanData call = spans.getFinishedSpanItems().stream()
          .filter(s -> s.getName().equals("apiary.invoke g")).findFirst().orElseThrow();
      assertEquals(parent.getSpanContext().getSpanId(), call.getParentSpanId());
      for (int i = 0; i < 2; i++) {
        assertEquals(call.getSpanId(), attempts.get(i).getParentSpanId());
        assertTrue((i == 0 ? first : second).contains(attempts.get(i).getSpanId()), "attempt " + i + "'s frame "
            + "names its span");
      }
      assertEquals(io.opentelemetry.api.trace.StatusCode.ERROR, attempts.get(0).getStatus().getStatusCode());
      assertEquals(io.opentelemetry.api.trace.StatusCode.UNSET, attempts.get(1).getStatus().getStatusCode());
    } finally {
      io.opentelemetry.api.GlobalOpenTelemetry.resetForTest();
      sdk.close();
    }
    // Without an SDK nothing is added to the frame.
    FakeFrontend plain = frontend(r -> replies(ok(r.id(), 8)));
    assertEquals(8L, client(ClientConfig.of(plain.endpoint)).invoke("g", "k", 1).value(Long.class));
    assertEquals(WireRequest.TraceContext.NONE, plain.received.get(0).trace());
  }

  @Test
  void aBlockingCallFromACallbackIsRefusedInsteadOfDeadlocking() throws Exception {
    // The reply waits until the callback is attached: a reply first would run the callback on this thread.
    java.util.concurrent.CountDownLatch attached = new java.util.concurrent.CountDownLatch(1);
    FakeFrontend frontend = frontend(r -> {
      try {
        attached.await(10, java.util.concurrent.TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return replies(ok(r.id(), 1));
    });
    ApiaryClient client = client(ClientConfig.of(frontend.endpoint));
    java.util.concurrent.CompletableFuture<Throwable> seen = client.invokeAsync("increment", "k", 1)
        .handle((r, e) -> {
          try {
            client.invoke("increment", "k", 2);
            return null;
          } catch (RuntimeException refused) {
            return refused;
          }
        });
    attached.countDown();
    Throwable refused = seen.get(10, java.util.concurrent.TimeUnit.SECONDS);
    assertTrue(refused instanceof IllegalStateException, String.valueOf(refused));
    // Async calls from a callback are fine.
    assertEquals(1L, client.invokeAsync("increment", "k", 1)
        .thenCompose(r -> client.invokeAsync("increment", "k", 1)).get(10, java.util.concurrent.TimeUnit.SECONDS)
        .value(Long.class));
  }

  @Test
  void severalOutputsKeepTheirOrder() {
    FakeFrontend frontend = frontend(r -> replies(WireReply.ok(r.id(), List.of(
        new Output("sink", null, Json.tree(3)), new Output("sink", null, Json.tree(1))))));
    ApiaryClient client = client(ClientConfig.of(frontend.endpoint));

    assertEquals(List.of(3L, 1L), client.invoke("fanOut", null).values(Long.class));
  }

  @Test
  void silentFrontendFailsOverToTheNextWithTheSameId() {
    FakeFrontend silent = frontend(r -> SILENT);
    FakeFrontend answering = frontend(r -> replies(ok(r.id(), 5)));
    ApiaryClient client = client(ClientConfig.of(silent.endpoint, answering.endpoint)
        .withAttemptTimeout(Duration.ofMillis(300)));

    InvocationRequest request = InvocationRequest.of("g", null);
    long start = System.nanoTime();
    GraphResult result = client.invoke(request);
    long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

    assertEquals(request.id(), result.invocationId());
    assertEquals(5L, result.value(Long.class));
    assertEquals(List.of(request.id()), silent.ids());
    assertEquals(List.of(request.id()), answering.ids());
    assertTrue(silent.received.get(0).arrival() < answering.received.get(0).arrival(),
        "the silent frontend must have been tried first");
    assertTrue(elapsedMillis >= 300 && elapsedMillis < 3_000, "took " + elapsedMillis + " ms");
  }

  @Test
  void allFrontendsSilentGivesOutcomeUnknownNamingTheIdAndTheFrontends() {
    FakeFrontend a = frontend(r -> SILENT);
    FakeFrontend b = frontend(r -> SILENT);
    ApiaryClient client = client(ClientConfig.of(a.endpoint, b.endpoint)
        .withAttemptTimeout(Duration.ofMillis(200)).withMaxAttempts(3));

    InvocationRequest request = InvocationRequest.of("g", null);
    long start = System.nanoTime();
    OutcomeUnknownException e = assertThrows(OutcomeUnknownException.class, () -> client.invoke(request));
    long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

    assertTrue(elapsedMillis >= 600 && elapsedMillis < 2_000, "took " + elapsedMillis + " ms");
    assertTrue(e.getMessage().startsWith("invocation '" + request.id() + "' got no definite answer after 3 attempts ["
        + a.endpoint + ": no answer within 200 ms; " + b.endpoint + ": no answer within 200 ms; " + a.endpoint
        + ": no answer within 200 ms]"), e.getMessage());
    assertTrue(e.getMessage().contains("may or may not have run; retrying with the same invocation ID, or asking "
        + "result(\"" + request.id() + "\"), is safe"), e.getMessage());
    a.awaitReceived(2);
    assertEquals(List.of(request.id(), request.id()), a.ids());
    assertEquals(List.of(request.id()), b.ids());
  }

  @Test
  void functionFailureIsReportedWithTheFunctionAndItsMessage() {
    FakeFrontend frontend = frontend(r -> replies(WireReply.functionFailed(r.id(), "debit",
        "java.lang.IllegalStateException", "insufficient funds")));
    ApiaryClient client = client(ClientConfig.of(frontend.endpoint));

    FunctionFailedException e = assertThrows(FunctionFailedException.class, () -> client.invoke("pay", "acct", 10));
    assertEquals("debit", e.functionName());
    assertEquals("java.lang.IllegalStateException", e.errorType());
    assertEquals("insufficient funds", e.errorMessage());

    ExecutionException async = assertThrows(ExecutionException.class,
        () -> client.invokeAsync("pay", "acct", 10).get(5, TimeUnit.SECONDS));
    assertInstanceOf(FunctionFailedException.class, async.getCause());
  }

  @Test
  void invalidRequestIsNotRetriedOnAnotherFrontend() {
    FakeFrontend refusing = frontend(r -> replies(WireReply.error(r.id(), WireReply.INVALID_REQUEST,
        "unknown graph 'nope'")));
    FakeFrontend other = frontend(r -> replies(ok(r.id(), 1)));
    ApiaryClient client = client(ClientConfig.of(refusing.endpoint, other.endpoint));

    InvocationRequest bad = InvocationRequest.of("nope", null);
    InvalidRequestException e = assertThrows(InvalidRequestException.class, () -> client.invoke(bad));
    assertEquals("invocation '" + bad.id() + "' was refused: unknown graph 'nope'", e.getMessage());

    // The next request goes to the other frontend; had the bad one failed over, it would have arrived there first.
    InvocationRequest good = InvocationRequest.of("g", null);
    assertEquals(1L, client.invoke(good).value(Long.class));
    assertEquals(List.of(bad.id()), refusing.ids());
    assertEquals(List.of(good.id()), other.ids());
  }

  @Test
  void retryableDatabaseErrorFailsOverToTheNextFrontend() {
    FakeFrontend broken = frontend(r -> replies(WireReply.error(r.id(), WireReply.DATABASE, "partition 3 down")));
    FakeFrontend healthy = frontend(r -> replies(ok(r.id(), 9)));
    ApiaryClient client = client(ClientConfig.of(broken.endpoint, healthy.endpoint));

    InvocationRequest request = InvocationRequest.of("g", null);
    assertEquals(9L, client.invoke(request).value(Long.class));
    assertEquals(List.of(request.id()), broken.ids());
    assertEquals(List.of(request.id()), healthy.ids());
  }

  @Test
  void databaseRefusalOnEveryAttemptIsADatabaseException() {
    FakeFrontend broken = frontend(r -> replies(WireReply.error(r.id(), WireReply.DATABASE, "partition 3 down")));
    ApiaryClient client = client(ClientConfig.of(broken.endpoint).withMaxAttempts(2));

    InvocationRequest request = InvocationRequest.of("g", null);
    DatabaseException e = assertThrows(DatabaseException.class, () -> client.invoke(request));
    assertEquals("invocation '" + request.id() + "' was refused by the database after 2 attempts [" + broken.endpoint
        + ": database: partition 3 down; " + broken.endpoint + ": database: partition 3 down]; it did not run, and "
        + "retrying with the same invocation ID is safe.", e.getMessage());
    assertEquals(List.of(request.id(), request.id()), broken.ids());
  }

  @Test
  void outcomeUnknownErrorOnTheLastAttemptIsOutcomeUnknown() {
    FakeFrontend unsure = frontend(r -> replies(WireReply.error(r.id(), WireReply.OUTCOME_UNKNOWN, "lost node")));
    ApiaryClient client = client(ClientConfig.of(unsure.endpoint).withMaxAttempts(2));

    OutcomeUnknownException e = assertThrows(OutcomeUnknownException.class, () -> client.invoke("g", null));
    assertTrue(e.getMessage().contains(unsure.endpoint + ": outcome-unknown: lost node"), e.getMessage());
    assertEquals(2, unsure.received.size());
  }

  @Test
  void resultIsEmptyWhileRunningThenPresent() {
    AtomicInteger polls = new AtomicInteger();
    FakeFrontend frontend = frontend(r -> replies(polls.incrementAndGet() == 1 ? WireReply.running(r.id())
        : ok(r.id(), 77)));
    ApiaryClient client = client(ClientConfig.of(frontend.endpoint));

    assertEquals(Optional.empty(), client.result("inv-1"));
    Optional<GraphResult> done = client.result("inv-1");
    assertTrue(done.isPresent());
    assertEquals("inv-1", done.get().invocationId());
    assertEquals(77L, done.get().value(Long.class));
    assertEquals(List.of(WireRequest.RESULT, WireRequest.RESULT),
        frontend.received.stream().map(r -> r.request().type()).toList());
  }

  @Test
  void awaitResultPollsUntilTheInvocationFinishes() {
    AtomicInteger polls = new AtomicInteger();
    FakeFrontend frontend = frontend(r -> replies(polls.incrementAndGet() <= 3 ? WireReply.running(r.id())
        : ok(r.id(), 8)));
    ApiaryClient client = client(ClientConfig.of(frontend.endpoint));

    assertEquals(8L, client.awaitResult("inv-2", Duration.ofSeconds(5)).value(Long.class));
    assertEquals(4, polls.get());

    AtomicInteger never = new AtomicInteger();
    FakeFrontend stuck = frontend(r -> {
      never.incrementAndGet();
      return replies(WireReply.running(r.id()));
    });
    ApiaryClient stuckClient = client(ClientConfig.of(stuck.endpoint));
    long start = System.nanoTime();
    OutcomeUnknownException e = assertThrows(OutcomeUnknownException.class,
        () -> stuckClient.awaitResult("inv-3", Duration.ofMillis(300)));
    long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertTrue(elapsedMillis >= 300 && elapsedMillis < 1_500, "took " + elapsedMillis + " ms");
    assertTrue(e.getMessage().startsWith("invocation 'inv-3' had not finished after 300 ms"), e.getMessage());
    assertTrue(never.get() >= 3, "polled only " + never.get() + " times");
  }

  @Test
  void resultPollDoesNotTakeTheReplyOfAnInvokeInFlight() throws Exception {
    FakeFrontend frontend = frontend(r -> WireRequest.INVOKE.equals(r.type())
        ? SILENT : replies(WireReply.running(r.id())));
    ApiaryClient client = client(ClientConfig.of(frontend.endpoint));

    InvocationRequest request = InvocationRequest.of("slow", null);
    CompletableFuture<GraphResult> invoked = client.invokeAsync(request);
    frontend.awaitReceived(1);
    assertEquals(Optional.empty(), client.result(request.id()));
    assertFalse(invoked.isDone(), "the 'running' reply to the result poll must not complete the invoke");

    frontend.replyLater(frontend.received.get(0), ok(request.id(), 3));
    assertEquals(3L, invoked.get(5, TimeUnit.SECONDS).value(Long.class));
  }

  @Test
  void malformedRepliesAreIgnored() {
    FakeFrontend frontend = frontend(r -> List.of(
        new byte[][] {"not json".getBytes(StandardCharsets.UTF_8)},
        new byte[][] {"{\"status\":\"ok\",\"outputs\":[]}".getBytes(StandardCharsets.UTF_8)},
        new byte[][] {("{\"id\":\"" + r.id() + "\",\"status\":\"ok\"}").getBytes(StandardCharsets.UTF_8)},
        new byte[][] {("{\"id\":\"" + r.id() + "\",\"status\":\"weird\"}").getBytes(StandardCharsets.UTF_8)},
        new byte[][] {"[]".getBytes(StandardCharsets.UTF_8), "{\"id\":1}".getBytes(StandardCharsets.UTF_8)},
        new byte[][] {Json.bytes(ok(r.id(), 6))}));
    ApiaryClient client = client(ClientConfig.of(frontend.endpoint));

    assertEquals(6L, client.invoke("g", null).value(Long.class));
    assertEquals(6L, client.invoke("g", null).value(Long.class), "the I/O thread must still be serving");
  }

  @Test
  void eachFrameOfAReplyMessageAnswersItsOwnCall() throws Exception {
    // The frontend sends the replies of a round to one client as one message; hold every answer until the last
    // request is in, then send them all at once.
    List<WireRequest> held = new CopyOnWriteArrayList<>();
    FakeFrontend frontend = frontend(r -> {
      held.add(r);
      if (held.size() < 20) {
        return List.of();
      }
      return List.<byte[][]>of(held.stream().map(h -> Json.bytes(ok(h.id(), Long.parseLong(h.id().substring(1)))))
          .toArray(byte[][]::new));
    });
    ApiaryClient client = client(ClientConfig.of(frontend.endpoint));
    List<CompletableFuture<GraphResult>> calls = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      calls.add(client.invokeAsync(InvocationRequest.of("g", null).withId("c" + i)));
    }
    for (int i = 0; i < 20; i++) {
      assertEquals(i, calls.get(i).get(5, TimeUnit.SECONDS).value(Long.class));
    }
  }

  @Test
  void thousandConcurrentCallsEachGetTheirOwnAnswer() throws Exception {
    FakeFrontend echo = frontend(r -> replies(WireReply.ok(r.id(), List.of(new Output("sink", null, r.args().get(0))))));
    ApiaryClient client = client(ClientConfig.of(echo.endpoint));

    int calls = 1_000;
    List<InvocationRequest> requests = new ArrayList<>();
    List<CompletableFuture<GraphResult>> futures = new ArrayList<>();
    for (int i = 0; i < calls; i++) {
      InvocationRequest request = InvocationRequest.of("echo", null, i);
      requests.add(request);
      futures.add(client.invokeAsync(request));
    }
    CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);

    for (int i = 0; i < calls; i++) {
      GraphResult result = futures.get(i).get();
      assertEquals(requests.get(i).id(), result.invocationId());
      assertEquals(i, result.value(Integer.class));
    }
    assertEquals(calls, echo.received.size());
    Set<String> distinct = new HashSet<>(echo.ids());
    assertEquals(calls, distinct.size(), "every request must have been sent exactly once");
  }

  /**
   * An answered call keeps no reply in the client, even while its attempt's deadline has not passed: 300 answers of
   * 900 KB each, with a one-minute attempt timeout, must not stay on the heap.
   */
  @Test
  void answeredCallsDoNotHoldTheirRepliesUntilTheirDeadline() throws Exception {
    String large = "x".repeat(900_000);
    FakeFrontend frontend = frontend(r -> replies(WireReply.ok(r.id(), List.of(new Output("sink", null, Json.tree(large))))));
    ApiaryClient client = client(ClientConfig.of(frontend.endpoint).withAttemptTimeout(Duration.ofSeconds(60)));
    java.lang.management.MemoryMXBean memory = java.lang.management.ManagementFactory.getMemoryMXBean();
    System.gc();
    long before = memory.getHeapMemoryUsage().getUsed();
    for (int i = 0; i < 300; i++) {
      assertEquals(900_000, client.invoke("big", null).value(String.class).length());
    }
    frontend.received.clear();
    System.gc();
    long retainedMb = (memory.getHeapMemoryUsage().getUsed() - before) >> 20;
    assertTrue(retainedMb < 100, "the client still holds about " + retainedMb + " MB after 270 MB of answers");
  }

  @Test
  void oversizedRequestIsRejectedWithoutSending() throws Exception {
    FakeFrontend frontend = frontend(r -> replies(ok(r.id(), 1)));
    ApiaryClient client = client(ClientConfig.of(frontend.endpoint).withMaxRequestBytes(300));

    InvocationRequest big = InvocationRequest.of("g", null, "x".repeat(1_000));
    InvalidRequestException e = assertThrows(InvalidRequestException.class, () -> client.invoke(big));
    assertTrue(e.getMessage().startsWith("invocation '" + big.id() + "' of graph 'g' is "), e.getMessage());
    assertTrue(e.getMessage().endsWith("bytes encoded, more than maxRequestBytes (300); nothing was sent"),
        e.getMessage());
    CompletableFuture<GraphResult> async = client.invokeAsync(big);
    assertTrue(async.isCompletedExceptionally());
    assertInstanceOf(InvalidRequestException.class,
        assertThrows(ExecutionException.class, () -> async.get(1, TimeUnit.SECONDS)).getCause());

    InvocationRequest small = InvocationRequest.of("g", null, "x");
    assertEquals(1L, client.invoke(small).value(Long.class));
    assertEquals(List.of(small.id()), frontend.ids());
  }

  @Test
  void closeFailsCallsInFlightAndIsIdempotent() throws Exception {
    FakeFrontend silent = frontend(r -> SILENT);
    ApiaryClient client = ApiaryClient.connect(ClientConfig.of(silent.endpoint));
    InvocationRequest request = InvocationRequest.of("g", null);
    CompletableFuture<GraphResult> inFlight = client.invokeAsync(request);
    silent.awaitReceived(1);

    long start = System.nanoTime();
    client.close();
    assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) < 2_000);
    assertTrue(inFlight.isCompletedExceptionally(), "close() must fail the calls in flight before it returns");
    ExecutionException e = assertThrows(ExecutionException.class, () -> inFlight.get(1, TimeUnit.SECONDS));
    ApiaryException cause = assertInstanceOf(ApiaryException.class, e.getCause());
    assertEquals("client closed while invocation '" + request.id() + "' was in flight; it may or may not have run, "
        + "and retrying with the same invocation ID on another client is safe", cause.getMessage());

    client.close();
    assertThrows(IllegalStateException.class, () -> client.invoke("g", null));
    assertThrows(IllegalStateException.class, () -> client.invokeAsync("g", null));
    assertThrows(IllegalStateException.class, () -> client.result(request.id()));
    assertFalse(Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals("apiary-client-io")),
        "the I/O thread must have ended");
  }

  @Test
  void sameIdInFlightTwiceIsSentOnce() throws Exception {
    FakeFrontend frontend = frontend(r -> SILENT);
    ApiaryClient client = client(ClientConfig.of(frontend.endpoint));
    InvocationRequest request = InvocationRequest.of("g", null, 1);

    CompletableFuture<GraphResult> first = client.invokeAsync(request);
    CompletableFuture<GraphResult> second = client.invokeAsync(request);
    CompletableFuture<GraphResult> conflicting = client.invokeAsync(
        InvocationRequest.of("g", null, 2).withId(request.id()));
    frontend.awaitReceived(1);
    ExecutionException e = assertThrows(ExecutionException.class, () -> conflicting.get(2, TimeUnit.SECONDS));
    assertInstanceOf(InvalidRequestException.class, e.getCause());

    frontend.replyLater(frontend.received.get(0), ok(request.id(), 4));
    assertEquals(4L, first.get(5, TimeUnit.SECONDS).value(Long.class));
    assertEquals(4L, second.get(5, TimeUnit.SECONDS).value(Long.class));
    assertEquals(List.of(request.id()), frontend.ids());
  }

  @Test
  void configIsValidated() {
    assertEquals("an Apiary client needs at least one frontend endpoint",
        assertThrows(IllegalArgumentException.class, ClientConfig::of).getMessage());
    assertEquals("frontend endpoint 'localhost:5555' is not a ZeroMQ endpoint such as tcp://host:port",
        assertThrows(IllegalArgumentException.class, () -> ClientConfig.of("localhost:5555")).getMessage());
    assertEquals("frontend endpoint 'tcp://a:1' is listed twice",
        assertThrows(IllegalArgumentException.class, () -> ClientConfig.of("tcp://a:1", "tcp://a:1")).getMessage());
    assertEquals("maxAttempts must be between 1 and 100, not 0",
        assertThrows(IllegalArgumentException.class, () -> ClientConfig.of("tcp://a:1").withMaxAttempts(0))
            .getMessage());
    assertEquals("attemptTimeout must be between 1 ms and 1 hour, not PT0S",
        assertThrows(IllegalArgumentException.class,
            () -> ClientConfig.of("tcp://a:1").withAttemptTimeout(Duration.ZERO)).getMessage());
    assertEquals("maxRequestBytes must be positive, not 0",
        assertThrows(IllegalArgumentException.class, () -> ClientConfig.of("tcp://a:1").withMaxRequestBytes(0))
            .getMessage());
    ClientConfig defaults = ClientConfig.of("tcp://a:1");
    assertEquals(Duration.ofSeconds(10), defaults.attemptTimeout());
    assertEquals(3, defaults.maxAttempts());
    assertEquals(512 * 1024, defaults.maxRequestBytes());
  }

  // ---- helpers ----

  private FakeFrontend frontend(Function<WireRequest, List<byte[][]>> answer) {
    FakeFrontend frontend = new FakeFrontend(answer);
    toClose.add(frontend);
    return frontend;
  }

  private ApiaryClient client(ClientConfig config) {
    ApiaryClient client = ApiaryClient.connect(config);
    toClose.add(client);
    return client;
  }

  private static WireReply ok(String id, long value) {
    return WireReply.ok(id, List.of(new Output("sink", null, Json.tree(value))));
  }

  private static List<byte[][]> replies(WireReply... replies) {
    List<byte[][]> messages = new ArrayList<>();
    for (WireReply reply : replies) {
      messages.add(new byte[][] {Json.bytes(reply)});
    }
    return messages;
  }

  /** One request as a frontend saw it; {@code arrival} orders arrivals across frontends. */
  record Received(long arrival, byte[] peer, WireRequest request, WireRequest.TraceContext trace) {}

  /** A frontend stand-in: a ROUTER on a free local port, served by its own thread, answering with a function. */
  static final class FakeFrontend implements AutoCloseable {
    final String endpoint;
    final List<Received> received = new CopyOnWriteArrayList<>();
    /** Messages received (a client may send several requests in one). */
    final java.util.concurrent.atomic.AtomicLong messages = new java.util.concurrent.atomic.AtomicLong();
    private final Function<WireRequest, List<byte[][]>> answer;
    private final ConcurrentLinkedQueue<byte[][]> outbox = new ConcurrentLinkedQueue<>();
    private final ZContext context = new ZContext(1);
    private final ZMQ.Socket router;
    private final Thread thread;
    private volatile boolean running = true;

    FakeFrontend(Function<WireRequest, List<byte[][]>> answer) {
      this.answer = answer;
      router = context.createSocket(SocketType.ROUTER);
      router.setLinger(0);
      router.setReceiveTimeOut(5);
      int port = router.bindToRandomPort("tcp://127.0.0.1");
      endpoint = "tcp://127.0.0.1:" + port;
      thread = new Thread(this::serve, "fake-frontend-" + port);
      thread.setDaemon(true);
      thread.start();
    }

    private void serve() {
      while (running) {
        byte[] peer = router.recv(0);
        if (peer != null) {
          messages.incrementAndGet();
          while (router.hasReceiveMore()) { // a client batches requests: one per frame
            byte[] payload = router.recv(0);
            WireRequest request = Json.convert(Json.parse(payload), WireRequest.class, "request");
            received.add(new Received(ARRIVALS.incrementAndGet(), peer, request, WireRequest.traceContext(payload)));
            for (byte[][] message : answer.apply(request)) {
              send(peer, message);
            }
          }
        }
        for (byte[][] message = outbox.poll(); message != null; message = outbox.poll()) {
          send(message[0], Arrays.copyOfRange(message, 1, message.length));
        }
      }
      router.close();
    }

    private void send(byte[] peer, byte[][] frames) {
      router.send(peer, ZMQ.SNDMORE);
      for (int i = 0; i < frames.length; i++) {
        router.send(frames[i], i < frames.length - 1 ? ZMQ.SNDMORE : 0);
      }
    }

    /** Answers a request later, from the frontend's own thread. */
    void replyLater(Received request, WireReply reply) {
      outbox.add(new byte[][] {request.peer(), Json.bytes(reply)});
    }

    List<String> ids() {
      return received.stream().map(r -> r.request().id()).toList();
    }

    void awaitReceived(int count) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
      while (received.size() < count && System.nanoTime() < deadline) {
        try {
          Thread.sleep(5);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new AssertionError("interrupted", e);
        }
      }
      assertTrue(received.size() >= count, endpoint + " received " + received.size() + " requests, not " + count);
    }

    @Override
    public void close() {
      running = false;
      try {
        thread.join(2_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while stopping " + endpoint, e);
      }
      assertFalse(thread.isAlive(), "fake frontend thread did not stop");
      context.close();
    }
  }
}
