package org.apiary.client;

import static java.lang.System.Logger.Level.WARNING;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.apiary.ApiaryException;
import org.apiary.DatabaseException;
import org.apiary.FunctionFailedException;
import org.apiary.InvalidRequestException;
import org.apiary.OutcomeUnknownException;
import org.apiary.internal.wire.WireReply;
import org.apiary.internal.wire.WireRequest;

/**
 * Invokes Apiary graphs through the frontends, with failover and exactly-once retries.
 *
 * <pre>{@code
 * ClientConfig config = ClientConfig.of("tcp://10.0.0.1:5555", "tcp://10.0.0.2:5555");
 * try (ApiaryClient client = ApiaryClient.connect(config)) {
 *   long count = client.invoke("addItem", "cart-42", "apple", 3).value(Long.class);
 *
 *   InvocationRequest checkout = InvocationRequest.of("checkout", "cart-42");
 *   saveForLater(checkout.id());               // to ask for the outcome after a crash
 *   client.invokeAsync(checkout).thenAccept(result -> ship(result.values(String.class)));
 *
 *   Optional<GraphResult> done = client.result(checkout.id());   // empty while it still runs
 * }
 * }</pre>
 *
 * <p><b>Exactly once.</b> Every request carries its invocation ID. When a frontend does not answer within
 * {@link ClientConfig#attemptTimeout()}, or answers that it cannot tell what happened, the client sends the same
 * request, with the same ID, to the next frontend, up to {@link ClientConfig#maxAttempts()} times; Apiary runs an ID
 * at most once and gives every attempt the same answer. The first definite answer wins; later ones are ignored.
 *
 * <p><b>Errors.</b> A call fails with {@link FunctionFailedException} if a function threw (its transaction was
 * rolled back), {@link InvalidRequestException} if the request is wrong (nothing ran; it is not retried on another
 * frontend), {@link OutcomeUnknownException} if no attempt got a definite answer (the invocation may have run;
 * retrying with the same ID, or {@link #result}, is safe), or {@link DatabaseException} if every attempt that got
 * an answer was refused by the database (it did not run).
 *
 * <p><b>Threads.</b> The client is thread-safe. One daemon thread, {@code apiary-client-io}, does all the
 * network I/O, and futures from the {@code ...Async} methods complete on it (as VoltDB's own client runs its
 * callbacks on its network thread): a hand-over to another thread per reply cost more than half the client's
 * throughput on a 2-core machine. So keep callbacks short and never block in them; use {@code thenApplyAsync} and
 * friends with your own executor for slow work. A callback may start further {@code ...Async} calls; the blocking
 * methods called from a callback throw {@link IllegalStateException} instead of deadlocking. The calls still open
 * when {@link #close()} is called fail on the closing thread.
 *
 * <p>Close the client when done: {@link #close()} fails the calls still in flight and releases the sockets.
 */
public final class ApiaryClient implements AutoCloseable {

  private static final System.Logger LOG = System.getLogger(ApiaryClient.class.getName());
  private static final Duration WAIT_MARGIN = Duration.ofSeconds(1);
  private static final Duration RESULT_POLL_INTERVAL = Duration.ofMillis(50);
  private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(5);

  private final ClientConfig config;
  private final ClientIoLoop io;
  /** Every call not yet completed, so that close() or an I/O failure can fail them all. */
  private final Set<PendingCall> live = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile Throwable ioFailure;
  private final ClientTracing tracing = new ClientTracing();

  private ApiaryClient(ClientConfig config) {
    this.config = config;
    this.io = new ClientIoLoop(config, this::ioFailed, tracing);
  }

  /**
   * Starts a client for the configured frontends. Connections are made in the background: a frontend that is not
   * up yet is not an error here, its requests just wait for it or time out.
   *
   * @throws ApiaryException if the client's sockets cannot be set up, for example for an endpoint ZeroMQ rejects
   */
  public static ApiaryClient connect(ClientConfig config) {
    Objects.requireNonNull(config, "config");
    ApiaryClient client = new ApiaryClient(config);
    client.io.start();
    return client;
  }

  /** The configuration this client was started with. */
  public ClientConfig config() {
    return config;
  }

  /**
   * Runs a graph and waits for its result, at most {@code maxAttempts * attemptTimeout} plus one second.
   *
   * @throws FunctionFailedException if a function of the graph threw; its transaction was rolled back
   * @throws InvalidRequestException if the request is wrong or too large; nothing ran
   * @throws OutcomeUnknownException if no definite answer came; retry with the same request (same ID)
   * @throws DatabaseException if the database refused the invocation on every attempt; it did not run
   * @throws IllegalStateException if the client is closed
   */
  public GraphResult invoke(InvocationRequest request) {
    Objects.requireNonNull(request, "request");
    ensureOpen();
    PendingCall call = submit(traced(new PendingCall(PendingCall.Kind.INVOKE, request.id(), encode(request)),
        "invoke", request.graph()));
    return toGraphResult(await(call, config.callBudget().plus(WAIT_MARGIN), null));
  }

  /**
   * Runs a graph under a fresh invocation ID and waits for its result; see {@link #invoke(InvocationRequest)}.
   * Use {@link InvocationRequest#of} and {@link #invoke(InvocationRequest)} instead to keep the ID for a retry.
   *
   * @param partitionKey the partition key for the graph's first local functions, or {@code null} if there are none
   */
  public GraphResult invoke(String graph, Object partitionKey, Object... arguments) {
    return invoke(InvocationRequest.of(graph, partitionKey, arguments));
  }

  /**
   * Runs a graph without waiting. The future completes on the client's I/O thread (see the class comment: keep its
   * callbacks short), or on the thread that closes the client if it closes first, with the result or with one of
   * the exceptions {@link #invoke(InvocationRequest)} throws; a request larger than
   * {@link ClientConfig#maxRequestBytes()} gives an already failed future.
   *
   * @throws IllegalStateException if the client is closed
   */
  public CompletableFuture<GraphResult> invokeAsync(InvocationRequest request) {
    Objects.requireNonNull(request, "request");
    ensureOpen();
    byte[] bytes;
    try {
      bytes = encode(request);
    } catch (InvalidRequestException e) {
      return CompletableFuture.failedFuture(e);
    }
    return deliver(submit(traced(new PendingCall(PendingCall.Kind.INVOKE, request.id(), bytes), "invoke",
        request.graph())), ApiaryClient::toGraphResult);
  }

  /** Runs a graph under a fresh invocation ID without waiting; see {@link #invokeAsync(InvocationRequest)}. */
  public CompletableFuture<GraphResult> invokeAsync(String graph, Object partitionKey, Object... arguments) {
    return invokeAsync(InvocationRequest.of(graph, partitionKey, arguments));
  }

  /**
   * Starts a graph without waiting for its outcome: returns once the invocation is durably logged (a frontend's
   * reply follows the log write's commit, and its journal's, if the database keeps one). From then on it runs to
   * its end whether or not anyone waits, taken over by another frontend if its own stops; follow it with the handle,
   * or from any client with {@link #handle(String)}. Sending the same request again under its ID (start or invoke)
   * attaches to the same invocation; the ID with another graph, key or arguments is refused, naming the first.
   * Waits at most {@code maxAttempts * attemptTimeout} plus one second. Needs frontends that keep the invocation log
   * (the default).
   *
   * @return the handle, also if the invocation had already ended (a repeated start)
   * @throws FunctionFailedException if the invocation had already ended with a failed function
   * @throws InvalidRequestException if the request is wrong, its ID was used for a different request, or the
   *     frontend keeps no invocation log; nothing started
   * @throws OutcomeUnknownException if no frontend said it is logged; starting it again with the same ID is safe
   * @throws IllegalStateException if the client is closed
   */
  public InvocationHandle start(InvocationRequest request) {
    Objects.requireNonNull(request, "request");
    ensureOpen();
    byte[] bytes = encode(request, WireRequest.START);
    PendingCall call = traced(new PendingCall(PendingCall.Kind.RESULT, request.id(), bytes, true, false), "start",
        request.graph());
    toOptionalResult(await(submit(call), config.callBudget().plus(WAIT_MARGIN), null));
    return new InvocationHandle(this, request.id());
  }

  /** Starts a graph under a fresh invocation ID; see {@link #start(InvocationRequest)}. */
  public InvocationHandle start(String graph, Object partitionKey, Object... arguments) {
    return start(InvocationRequest.of(graph, partitionKey, arguments));
  }

  /**
   * Starts a graph after a delay (issue 42): returns once the start is durably stored, as an item of Apiary's queue of
   * delayed starts ({@link org.apiary.Queue#DELAYED}, without limits); no sooner than {@code delay} after that, by
   * the database's clock, a frontend claims it and runs it as an invocation under the request's ID, exactly once,
   * whichever frontends stop meanwhile (the item is a row in the database). Until then its status is
   * {@link InvocationStatus#QUEUED}, and it can be cancelled. Sending the same request again (same ID) answers with
   * the same item and keeps the first one's time. {@code delay} zero starts it as soon as a frontend claims it.
   *
   * @param delay zero or more, at most 366 days
   * @throws IllegalArgumentException if the delay is negative or longer than 366 days
   * @throws InvalidRequestException if the request is wrong, or the database was registered by an Apiary older than
   *     delayed starts (deploy the application again); nothing started
   * @throws OutcomeUnknownException if no frontend said it is stored; starting it again with the same ID is safe
   * @throws IllegalStateException if the client is closed
   */
  public InvocationHandle start(InvocationRequest request, Duration delay) {
    return enqueue(org.apiary.Queue.DELAYED, null, request, delay);
  }

  /**
   * Starts a graph under a fresh invocation ID after a delay; see {@link #start(InvocationRequest, Duration)}. The
   * delay comes before the partition key's arguments: a {@link Duration} there is always the delay.
   */
  public InvocationHandle start(String graph, Object partitionKey, Duration delay, Object... arguments) {
    return start(InvocationRequest.of(graph, partitionKey, arguments), delay);
  }

  /**
   * Puts an invocation on a durable queue declared with the application ({@link org.apiary.Queue}): returns once the
   * item is stored in the database, where it waits until a frontend claims it within the queue's limits and runs it
   * as an invocation under the request's ID. Follow it with the handle (it is {@link InvocationStatus#QUEUED} while
   * it waits), or from any client with {@link #handle(String)}. Sending the same request again (same ID) is safe: it
   * answers with the same item. Waits at most {@code maxAttempts * attemptTimeout} plus one second.
   *
   * @throws InvalidRequestException if the queue or graph is unknown or the request is wrong; nothing was enqueued
   * @throws OutcomeUnknownException if no frontend said it is stored; enqueuing it again with the same ID is safe
   * @throws IllegalStateException if the client is closed
   */
  public InvocationHandle enqueue(String queue, InvocationRequest request) {
    return enqueue(queue, null, request);
  }

  /**
   * Puts an invocation on a durable queue under a deduplication ID, which names one item of the queue: if an item
   * with this ID is already queued, running or done (within the frontends' retention), nothing is enqueued and the
   * handle is the existing item's invocation (whose ID may differ from the request's); if that item was enqueued
   * with another graph, partition key or arguments, the request is refused, naming the conflict. Otherwise as
   * {@link #enqueue(String, InvocationRequest)}.
   *
   * @param deduplicationId 1 to 64 characters, or {@code null} for none
   * @throws InvalidRequestException if the deduplication ID is taken by a different request, the queue or graph is
   *     unknown, or the request is wrong; nothing was enqueued
   * @throws OutcomeUnknownException if no frontend said it is stored; enqueuing it again is safe
   * @throws IllegalStateException if the client is closed
   */
  public InvocationHandle enqueue(String queue, String deduplicationId, InvocationRequest request) {
    return enqueue(queue, deduplicationId, request, Duration.ZERO);
  }

  /**
   * Puts an invocation on a durable queue to start no sooner than {@code delay} after it is stored (a delayed start,
   * issue 42): the database's clock decides when the item is due, and from then on it waits for a claim within the
   * queue's limits as any item does. Until it starts its status is {@link InvocationStatus#QUEUED}; it can be
   * cancelled meanwhile. Otherwise as {@link #enqueue(String, String, InvocationRequest)}; a repeated enqueue of the
   * same item (same ID or deduplication ID) keeps the first one's time.
   *
   * @param deduplicationId 1 to 64 characters, or {@code null} for none
   * @param delay zero or more, at most 366 days
   * @throws IllegalArgumentException if the delay is negative or longer than 366 days
   */
  public InvocationHandle enqueue(String queue, String deduplicationId, InvocationRequest request, Duration delay) {
    return enqueue(queue, deduplicationId, request, delay, 0);
  }

  /**
   * Puts an invocation on a durable queue declared with {@link org.apiary.Queue#priority()}, with a priority: waiting
   * items are claimed highest priority first, oldest first within one priority. Otherwise as
   * {@link #enqueue(String, String, InvocationRequest, Duration)}; a repeated enqueue of the same item keeps the first
   * one's priority.
   *
   * @param priority any value; 0 is the priority of items enqueued without one
   * @throws InvalidRequestException also if {@code priority} is not 0 and the queue was declared without priority
   */
  public InvocationHandle enqueue(String queue, String deduplicationId, InvocationRequest request, Duration delay,
                                  int priority) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(delay, "delay");
    if (delay.isNegative() || delay.toMillis() > WireRequest.MAX_DELAY_MS) {
      throw new IllegalArgumentException("an enqueue's delay is 0 to 366 days, not " + delay);
    }
    if (deduplicationId != null && (deduplicationId.isEmpty()
        || deduplicationId.length() > WireRequest.MAX_DEDUP_LENGTH)) {
      throw new IllegalArgumentException("a deduplication ID has 1 to " + WireRequest.MAX_DEDUP_LENGTH
          + " characters, not " + deduplicationId.length());
    }
    ensureOpen();
    byte[] bytes = new WireRequest(WireRequest.ENQUEUE, request.id(), request.graph(), request.partitionKey(),
        request.arguments(), config.caller(), null, null, null, null, queue, deduplicationId,
        delay.isZero() ? null : delay.toMillis(), priority == 0 ? null : priority)
        .withCredential(config.credential())
        .withPurpose(request.purpose() != null ? request.purpose() : config.purpose()).toBytes();
    if (bytes.length > config.maxRequestBytes()) {
      throw new InvalidRequestException("invocation '" + request.id() + "' of graph '" + request.graph() + "' is "
          + bytes.length + " bytes encoded, more than maxRequestBytes (" + config.maxRequestBytes()
          + "); nothing was sent");
    }
    PendingCall call = traced(new PendingCall(PendingCall.Kind.RESULT, request.id(), bytes, true, false), "enqueue",
        request.graph());
    WireReply reply = await(submit(call), config.callBudget().plus(WAIT_MARGIN), null);
    if (!WireReply.OK.equals(reply.status()) || reply.outputs() == null || reply.outputs().size() != 1) {
      throw toException(reply);
    }
    return new InvocationHandle(this, reply.outputs().get(0).value().asText());
  }

  /**
   * A handle on an invocation started earlier, by this or any other client (nothing is sent until it is used).
   *
   * @throws IllegalArgumentException if the ID is empty or too long
   */
  public InvocationHandle handle(String invocationId) {
    checkResultId(invocationId);
    return new InvocationHandle(this, invocationId);
  }

  /**
   * Asks for the outcome of an earlier invocation, for example one whose call ended with
   * {@link OutcomeUnknownException}. Waits at most {@code maxAttempts * attemptTimeout} plus one second.
   *
   * <p>Where the frontend requires credentials, an ID names an invocation this client's key's identity started: the
   * same ID sent with another identity's key names that identity's invocation, and one it never started is answered
   * as unknown. A key with the admin role may also name another identity's invocation as {@code IDENTITY/ID} (up to
   * {@value WireRequest#MAX_QUALIFIED_ID_LENGTH} characters).
   *
   * @return the result if the invocation finished, empty if it is still running
   * @throws FunctionFailedException if the invocation finished with a failed function
   * @throws InvalidRequestException if Apiary does not know the ID (for example it never arrived)
   * @throws OutcomeUnknownException if no frontend gave a definite answer; asking again is safe
   * @throws IllegalStateException if the client is closed
   */
  public Optional<GraphResult> result(String invocationId) {
    return toOptionalResult(resultReply(invocationId));
  }

  /**
   * Cancels an invocation; a frontend's definite answer is its stored outcome afterwards (see
   * {@link InvocationHandle#cancel}).
   */
  WireReply cancelReply(String invocationId, String reason) {
    checkResultId(invocationId);
    Objects.requireNonNull(reason, "reason");
    if (reason.isBlank() || reason.length() > WireRequest.MAX_REASON_LENGTH) {
      throw new IllegalArgumentException("a cancel's reason has 1 to " + WireRequest.MAX_REASON_LENGTH
          + " characters and is not blank, not " + reason.length() + " characters");
    }
    ensureOpen();
    byte[] bytes = WireRequest.cancel(invocationId, reason).withCredential(config.credential()).toBytes();
    PendingCall call = submit(new PendingCall(PendingCall.Kind.RESULT, invocationId, bytes, false, false));
    return await(call, config.callBudget().plus(WAIT_MARGIN), null);
  }

  /** A frontend's definite answer to a result request ({@link #result}), not yet turned into a result. */
  WireReply resultReply(String invocationId) {
    checkResultId(invocationId);
    ensureOpen();
    PendingCall call = submit(PendingCall.Kind.RESULT, invocationId, resultRequest(invocationId));
    return await(call, config.callBudget().plus(WAIT_MARGIN), null);
  }

  /**
   * Waits for an earlier invocation to finish, asking with {@link #result} about every 50 ms.
   *
   * @throws OutcomeUnknownException if it has not finished within {@code timeout}, or no frontend answered
   * @throws FunctionFailedException if it finished with a failed function
   * @throws InvalidRequestException if Apiary does not know the ID
   * @throws IllegalStateException if the client is closed
   */
  public GraphResult awaitResult(String invocationId, Duration timeout) {
    checkResultId(invocationId);
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must not be negative, not " + timeout);
    }
    ensureOpen();
    byte[] bytes = resultRequest(invocationId);
    String notFinished = "invocation '" + invocationId + "' had not finished after " + timeout.toMillis()
        + " ms; it may still commit. Asking result(\"" + invocationId + "\") again later is safe.";
    long deadline = System.nanoTime() + timeout.toNanos();
    Duration callBound = config.callBudget().plus(WAIT_MARGIN);
    while (true) {
      PendingCall call = submit(PendingCall.Kind.RESULT, invocationId, bytes);
      Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
      boolean deadlineFirst = left.compareTo(callBound) < 0;
      Optional<GraphResult> result = toOptionalResult(await(call, deadlineFirst ? left : callBound,
          deadlineFirst ? notFinished : null));
      if (result.isPresent()) {
        return result.get();
      }
      long leftNanos = deadline - System.nanoTime();
      if (leftNanos <= 0) {
        throw new OutcomeUnknownException(notFinished, null);
      }
      try {
        Thread.sleep(Math.min(RESULT_POLL_INTERVAL.toMillis(), TimeUnit.NANOSECONDS.toMillis(leftNanos) + 1));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new OutcomeUnknownException("interrupted while waiting for invocation '" + invocationId + "'", e);
      }
    }
  }

  /**
   * Stops the I/O thread (waiting at most 5 s), fails every call still in flight with an {@link ApiaryException}
   * saying the client closed (such an invocation may have run; retry it with the same ID elsewhere), and releases
   * the sockets. When it returns, the futures of those calls have been failed too, on this thread. Calling it again
   * does nothing; any other method then throws {@link IllegalStateException}.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    if (!io.stop(CLOSE_TIMEOUT)) {
      LOG.log(WARNING, "the Apiary client's I/O thread did not stop within " + CLOSE_TIMEOUT.toMillis()
          + " ms; failing its calls anyway");
    }
    failAll(null);
  }

  private void ensureOpen() {
    if (closed.get()) {
      throw new IllegalStateException("this ApiaryClient is closed");
    }
    Throwable failure = ioFailure;
    if (failure != null) {
      throw new IllegalStateException("this ApiaryClient stopped working after its I/O thread failed ("
          + failure + "); connect a new one", failure);
    }
  }

  /** A call that starts an invocation, with its span if tracing is on (see {@link ClientTracing}). */
  private PendingCall traced(PendingCall call, String operation, String graph) {
    tracing.startCall(call, operation, graph);
    return call;
  }

  private PendingCall submit(PendingCall.Kind kind, String id, byte[] bytes) {
    return submit(new PendingCall(kind, id, bytes));
  }

  private PendingCall submit(PendingCall call) {
    live.add(call);
    call.reply.whenComplete((reply, error) -> live.remove(call));
    io.submit(call);
    if (closed.get() || ioFailure != null) {
      // close() or an I/O failure raced with this call and may have failed the others before it was added.
      call.reply.completeExceptionally(stopped(call, ioFailure));
    }
    return call;
  }

  private void ioFailed(Throwable failure) {
    ioFailure = failure;
    failAll(failure);
  }

  private void failAll(Throwable ioError) {
    for (PendingCall call : live) {
      call.reply.completeExceptionally(stopped(call, ioError));
    }
  }

  private static ApiaryException stopped(PendingCall call, Throwable ioError) {
    String advice = call.kind == PendingCall.Kind.INVOKE
        ? "; it may or may not have run, and retrying with the same invocation ID on another client is safe"
        : "; asking again on another client is safe";
    return ioError == null
        ? new OutcomeUnknownException("client closed while " + call.describe() + " was in flight" + advice, null)
        : new OutcomeUnknownException("client I/O thread failed while " + call.describe() + " was in flight"
            + advice, ioError);
  }

  private byte[] encode(InvocationRequest request) {
    return encode(request, WireRequest.INVOKE);
  }

  private byte[] encode(InvocationRequest request, String type) {
    byte[] bytes = new WireRequest(type, request.id(), request.graph(), request.partitionKey(), request.arguments(),
        config.caller(), null, null, null, null).withCredential(config.credential())
        .withPurpose(request.purpose() != null ? request.purpose() : config.purpose()).toBytes();
    if (bytes.length > config.maxRequestBytes()) {
      throw new InvalidRequestException("invocation '" + request.id() + "' of graph '" + request.graph() + "' is "
          + bytes.length + " bytes encoded, more than maxRequestBytes (" + config.maxRequestBytes()
          + "); nothing was sent");
    }
    return bytes;
  }

  private byte[] resultRequest(String invocationId) {
    return WireRequest.result(invocationId).withCredential(config.credential()).toBytes();
  }

  /** An ID {@link #result} may name: a client's (1 to 64 characters), or an admin's {@code IDENTITY/ID}. */
  private static void checkResultId(String invocationId) {
    Objects.requireNonNull(invocationId, "invocationId");
    if (invocationId.isEmpty() || invocationId.length() > WireRequest.MAX_QUALIFIED_ID_LENGTH) {
      throw new IllegalArgumentException("an invocation ID must have 1 to " + WireRequest.MAX_ID_LENGTH
          + " characters (or, naming another caller's invocation as IDENTITY/ID, up to "
          + WireRequest.MAX_QUALIFIED_ID_LENGTH + "), not " + invocationId.length());
    }
  }

  /**
   * Waits for a call's definite reply.
   *
   * @param timeoutMessage the message if {@code bound} passes, or {@code null} for the default one
   */
  private WireReply await(PendingCall call, Duration bound, String timeoutMessage) {
    if (io.isIoThread()) {
      throw new IllegalStateException("a blocking Apiary client call was made from a callback on the client's I/O "
          + "thread, which would wait for itself; use invokeAsync/thenCompose, or run the callback on your own "
          + "executor (thenApplyAsync)");
    }
    try {
      return call.reply.get(bound.toNanos(), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      throw unchecked(e.getCause());
    } catch (TimeoutException e) {
      throw new OutcomeUnknownException(timeoutMessage != null ? timeoutMessage : call.describe()
          + " got no answer within " + bound.toMillis() + " ms" + retryAdvice(call), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new OutcomeUnknownException("interrupted while waiting for " + call.describe() + retryAdvice(call), e);
    }
  }

  private static String retryAdvice(PendingCall call) {
    return call.kind == PendingCall.Kind.INVOKE
        ? "; it may or may not have run. Retrying with the same invocation ID, or asking result(\"" + call.id
            + "\"), is safe."
        : "; asking again is safe.";
  }

  private static RuntimeException unchecked(Throwable cause) {
    if (cause instanceof RuntimeException runtime) {
      return runtime;
    }
    if (cause instanceof Error error) {
      throw error;
    }
    return new ApiaryException("unexpected failure: " + cause, cause);
  }

  /** A future for the caller, completed where the reply completes: normally on the I/O thread. */
  private <T> CompletableFuture<T> deliver(PendingCall call, Function<WireReply, T> toResult) {
    CompletableFuture<T> future = new CompletableFuture<>();
    call.reply.whenComplete((reply, error) -> {
      if (error != null) {
        future.completeExceptionally(error);
        return;
      }
      try {
        future.complete(toResult.apply(reply));
      } catch (RuntimeException e) {
        future.completeExceptionally(e);
      }
    });
    return future;
  }

  private static GraphResult toGraphResult(WireReply reply) {
    if (WireReply.OK.equals(reply.status())) {
      return new GraphResult(reply.id(), reply.outputs());
    }
    throw toException(reply);
  }

  private static Optional<GraphResult> toOptionalResult(WireReply reply) {
    if (WireReply.RUNNING.equals(reply.status())) {
      return Optional.empty();
    }
    return Optional.of(toGraphResult(reply));
  }

  static ApiaryException toException(WireReply reply) {
    String message = reply.message() == null ? "(no message)" : reply.message();
    if (!WireReply.ERROR.equals(reply.status())) {
      return new ApiaryException("unexpected '" + reply.status() + "' reply for invocation '" + reply.id() + "'");
    }
    return switch (reply.error()) {
      case WireReply.FUNCTION_FAILED -> new FunctionFailedException(
          Objects.requireNonNullElse(reply.function(), "(unknown)"),
          Objects.requireNonNullElse(reply.functionError(), "(unknown)"), reply.message());
      case WireReply.INVALID_REQUEST -> new InvalidRequestException("invocation '" + reply.id() + "' was refused: "
          + message);
      case WireReply.UNAUTHENTICATED, WireReply.FORBIDDEN -> new org.apiary.AccessDeniedException("invocation '"
          + reply.id() + "' was refused: " + message, WireReply.FORBIDDEN.equals(reply.error()));
      case WireReply.CANCELLED -> new org.apiary.InvocationCancelledException(message);
      case WireReply.INVOCATION_FAILED -> new org.apiary.InvocationFailedException(message);
      // An error this client does not know (a newer frontend's): the root, with the code.
      default -> new ApiaryException("invocation '" + reply.id() + "' failed with error '" + reply.error() + "': "
          + message);
    };
  }
}
