package org.apiary.client;

import static java.lang.System.Logger.Level.DEBUG;
import static java.lang.System.Logger.Level.WARNING;

import com.fasterxml.jackson.core.JsonProcessingException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apiary.ApiaryException;
import org.apiary.DatabaseException;
import org.apiary.InvalidRequestException;
import org.apiary.OutcomeUnknownException;
import org.apiary.OverloadedException;
import org.apiary.internal.wire.SocketLoop;
import org.apiary.internal.wire.WireReply;
import org.zeromq.SocketType;
import org.zeromq.ZMQ;

/**
 * The client's side of the wire, on one {@link SocketLoop}: per frontend one DEALER for invoke requests and one for
 * result requests (a ROUTER answers on the connection a request came in on, so a reply's socket tells which kind of
 * request it answers, and an invoke and a result poll for the same ID never take each other's reply).
 *
 * <p>Other threads only {@link #submit} calls, as tasks of the loop. On the loop thread the client tracks pending
 * calls by ID per kind, sends attempts round-robin, fails over on a timeout or a retryable error, and completes each
 * call's future with the definite reply. It never runs application code: {@link ApiaryClient} maps replies to
 * results on the caller's or the callback thread.
 */
final class ClientIoLoop {
  static final String THREAD_NAME = "apiary-client-io";

  private static final System.Logger LOG = System.getLogger(ApiaryClient.class.getName());
  /** Requests queued on one socket before a send would block; then that attempt moves on to the next frontend. */
  private static final int SEND_QUEUE_LIMIT = 10_000;
  private static final int LOGGED_FRAME_CHARS = 200;

  /**
   * An attempt's deadline. It waits in the queue until due even if the call is answered first, so the answer clears
   * {@link #call}: the queue then holds a few bytes per call, never a reply.
   */
  static final class Deadline {
    PendingCall call;
    final int attempt;
    final long atNanos;

    Deadline(PendingCall call, int attempt, long atNanos) {
      this.call = call;
      this.attempt = attempt;
      this.atNanos = atNanos;
    }
  }

  /** An attempt of a call queued on a socket; stale once the call has answered or moved on to another attempt. */
  private record QueuedAttempt(PendingCall call, int attempt) {}

  private final ClientConfig config;
  private final int frontendCount;
  private final long attemptTimeoutNanos;
  private final ClientTracing tracing;
  /** How long after it begins a call stops waiting: the expiry its invoke requests carry. */
  private final long callBudgetMillis;
  private final Consumer<Throwable> onFailure;
  private final SocketLoop loop;

  // Everything below belongs to the loop thread.
  private final ZMQ.Socket[] invokeSockets;
  private final ZMQ.Socket[] resultSockets;
  private final Map<String, PendingCall> pendingInvokes = new HashMap<>();
  private final Map<String, PendingCall> pendingResults = new HashMap<>();
  /** Attempts waiting for the round's flush, per socket (invoke sockets, then result sockets, by frontend). */
  private final List<List<QueuedAttempt>> queued = new ArrayList<>();
  /** Attempt deadlines in the order they fall due (every attempt gets the same timeout). */
  private final ArrayDeque<Deadline> deadlines = new ArrayDeque<>();
  private int nextFrontend;
  /**
   * Per frontend, until when (System.nanoTime) new calls avoid it because an attempt there went unanswered; any
   * reply from it clears this. Without it, after a frontend dies every other call would first wait out a timeout.
   */
  private final long[] suspectUntil;
  /** How many attempt timeouts a frontend that did not answer is avoided for. */
  private static final int SUSPECT_FOR_TIMEOUTS = 5;

  /**
   * Sets up the sockets (connections are made in the background).
   *
   * @param onFailure called on the I/O thread if the loop fails; it must fail every call the client has open
   * @throws ApiaryException if the sockets could not be set up (for example an endpoint ZeroMQ rejects)
   */
  ClientIoLoop(ClientConfig config, Consumer<Throwable> onFailure, ClientTracing tracing) {
    this.tracing = tracing;
    this.config = config;
    this.frontendCount = config.frontends().size();
    this.suspectUntil = new long[frontendCount];
    this.attemptTimeoutNanos = config.attemptTimeout().toNanos();
    this.callBudgetMillis = config.callBudget().toMillis();
    this.onFailure = onFailure;
    this.loop = new SocketLoop(THREAD_NAME);
    this.invokeSockets = new ZMQ.Socket[frontendCount];
    this.resultSockets = new ZMQ.Socket[frontendCount];
    try {
      for (int i = 0; i < frontendCount; i++) {
        int frontend = i;
        invokeSockets[i] = dealer(config.frontends().get(i));
        loop.register(invokeSockets[i], (s, max) -> receiveAll(PendingCall.Kind.INVOKE, frontend, max));
        resultSockets[i] = dealer(config.frontends().get(i));
        loop.register(resultSockets[i], (s, max) -> receiveAll(PendingCall.Kind.RESULT, frontend, max));
      }
    } catch (RuntimeException e) {
      loop.stop(Duration.ZERO);
      throw new org.apiary.FrontendUnreachableException("cannot set up connections to the frontends "
          + config.frontends() + ": " + e.getMessage(), e);
    }
    for (int i = 0; i < 2 * frontendCount; i++) {
      queued.add(new ArrayList<>());
    }
    loop.onFlush(this::sendQueued);
    loop.onRoundStart(now -> {
      expireAttempts(now);
      return pollTimeoutMillis(System.nanoTime());
    });
  }

  /** Whether the calling thread is this loop's I/O thread. */
  boolean isIoThread() {
    return loop.inLoop();
  }

  /** Starts the I/O thread. */
  void start() {
    loop.start(onFailure);
  }

  /** Hands a call to the I/O thread. Safe from any thread. */
  void submit(PendingCall call) {
    loop.execute(() -> begin(call));
  }

  /**
   * Asks the thread to stop and waits up to {@code timeout} for it; it closes its sockets and the context itself.
   *
   * @return whether the thread has ended
   */
  boolean stop(Duration timeout) {
    return loop.stop(timeout);
  }

  private ZMQ.Socket dealer(String endpoint) {
    ZMQ.Socket socket = loop.socket(SocketType.DEALER);
    socket.setSndHWM(SEND_QUEUE_LIMIT);
    socket.setRcvHWM(0); // never drop a reply; the loop reads them as fast as they come
    if (!socket.connect(endpoint)) {
      throw new IllegalArgumentException("cannot connect to frontend " + endpoint + " (ZeroMQ error "
          + socket.errno() + ")");
    }
    return socket;
  }

  private long pollTimeoutMillis(long now) {
    Deadline first = deadlines.peekFirst();
    if (first == null) {
      return SocketLoop.MAX_POLL_MILLIS;
    }
    long nanos = first.atNanos - now;
    return nanos <= 0 ? 0 : Math.min(SocketLoop.MAX_POLL_MILLIS, TimeUnit.NANOSECONDS.toMillis(nanos) + 1);
  }

  private Map<String, PendingCall> pending(PendingCall.Kind kind) {
    return kind == PendingCall.Kind.INVOKE ? pendingInvokes : pendingResults;
  }

  private boolean isPending(PendingCall call) {
    return pending(call.kind).get(call.id) == call && !call.reply.isDone();
  }

  private void begin(PendingCall call) {
    if (call.reply.isDone()) {
      return; // failed by close() before the I/O thread got to it
    }
    PendingCall running = pending(call.kind).putIfAbsent(call.id, call);
    if (running != null) {
      share(running, call);
      return;
    }
    if (call.starts) {
      call.expireAt(System.currentTimeMillis() + callBudgetMillis);
    }
    call.firstFrontend = firstLiveFrontend(System.nanoTime());
    nextFrontend = (nextFrontend + 1) % frontendCount;
    sendNextAttempt(call);
  }

  /** The next frontend in turn that is not suspected of being down (or the next in turn if all are). */
  private int firstLiveFrontend(long now) {
    for (int i = 0; i < frontendCount; i++) {
      int f = (nextFrontend + i) % frontendCount;
      if (suspectUntil[f] - now <= 0) {
        return f;
      }
    }
    return nextFrontend;
  }

  /** A second call for an ID already in flight waits for the first one's answer instead of sending again. */
  private static void share(PendingCall running, PendingCall call) {
    // Start, cancel and result requests for one ID all go as result-kind calls: only equal requests share an answer.
    if (!(call.plainResult && running.plainResult) && !running.sameRequest(call)) {
      call.reply.completeExceptionally(new InvalidRequestException("invocation ID '" + call.id
          + "' is already in flight with a different request; nothing was sent for this one"));
      return;
    }
    running.reply.whenComplete((reply, error) -> {
      if (error != null) {
        call.reply.completeExceptionally(error);
      } else {
        call.reply.complete(reply);
      }
    });
  }

  private void sendNextAttempt(PendingCall call) {
    while (call.attempts < config.maxAttempts()) {
      int frontend = (call.firstFrontend + call.attempts) % frontendCount;
      call.attempts++;
      call.currentFrontend = frontend;
      tracing.startAttempt(call, endpoint(frontend));
      queued.get(socketIndex(call.kind, frontend)).add(new QueuedAttempt(call, call.attempts));
      forgetDeadline(call);
      call.deadline = new Deadline(call, call.attempts, System.nanoTime() + attemptTimeoutNanos);
      deadlines.addLast(call.deadline);
      return;
    }
    ClientTracing.endAttempt(call, call.history.isEmpty() ? null : call.history.get(call.history.size() - 1));
    fail(call, exhausted(call));
  }

  private int socketIndex(PendingCall.Kind kind, int frontend) {
    return kind == PendingCall.Kind.INVOKE ? frontend : frontendCount + frontend;
  }

  /**
   * Sends the attempts the round queued, each socket's as few messages as it can. An attempt a full socket refuses
   * moves on to its next frontend (queued again, so this goes on until every queue is empty).
   */
  private void sendQueued() {
    boolean again = true;
    while (again) {
      again = false;
      for (int i = 0; i < queued.size(); i++) {
        List<QueuedAttempt> attempts = queued.get(i);
        if (attempts.isEmpty()) {
          continue;
        }
        List<QueuedAttempt> batch = new ArrayList<>(attempts.size());
        List<byte[]> frames = new ArrayList<>(attempts.size());
        for (QueuedAttempt a : attempts) {
          if (a.call().attempts == a.attempt() && a.call().bytes != null && isPending(a.call())) {
            batch.add(a);
            frames.add(a.call().attemptBytes != null ? a.call().attemptBytes : a.call().bytes);
          }
        }
        attempts.clear();
        int frontend = i % frontendCount;
        ZMQ.Socket socket = i < frontendCount ? invokeSockets[frontend] : resultSockets[frontend];
        int sent = SocketLoop.sendBatched(socket, null, frames);
        for (QueuedAttempt refused : batch.subList(sent, batch.size())) {
          refused.call().history.add(endpoint(frontend) + ": not sent, " + SEND_QUEUE_LIMIT
              + " messages already queued for it");
          sendNextAttempt(refused.call());
          again = true;
        }
      }
    }
  }

  private void expireAttempts(long now) {
    Deadline due = deadlines.peekFirst();
    while (due != null && due.atNanos - now <= 0) {
      deadlines.removeFirst();
      PendingCall call = due.call;
      if (call != null && call.attempts == due.attempt && isPending(call)) {
        call.history.add(endpoint(call.currentFrontend) + ": no answer within "
            + config.attemptTimeout().toMillis() + " ms");
        suspectUntil[call.currentFrontend] = now + SUSPECT_FOR_TIMEOUTS * attemptTimeoutNanos;
        call.mayHaveRun = true;
        sendNextAttempt(call);
      }
      due = deadlines.peekFirst();
    }
  }

  /** Handles up to {@code max} replies (frames) waiting on one socket; returns how many it read. */
  private int receiveAll(PendingCall.Kind kind, int frontend, int max) {
    ZMQ.Socket socket = kind == PendingCall.Kind.INVOKE ? invokeSockets[frontend] : resultSockets[frontend];
    int read = 0;
    for (byte[] frame = socket.recv(ZMQ.DONTWAIT); frame != null;
         frame = read < max ? socket.recv(ZMQ.DONTWAIT) : null) {
      read++; // a message holds one reply per frame; one left unread here is read in the next round
      suspectUntil[frontend] = System.nanoTime();
      WireReply reply = parse(frame, frontend);
      if (reply != null) {
        handle(kind, frontend, reply);
      }
    }
    return read;
  }

  private WireReply parse(byte[] frame, int frontend) {
    WireReply reply;
    try {
      reply = WireReply.fromBytes(frame);
    } catch (RuntimeException e) {
      String why = e.getCause() instanceof JsonProcessingException json ? json.getOriginalMessage() : e.getMessage();
      LOG.log(WARNING, () -> "ignoring a reply from " + endpoint(frontend) + " that is not a valid reply (" + why
          + "): " + preview(frame));
      return null;
    }
    String problem = problem(reply);
    if (problem != null) {
      LOG.log(WARNING, () -> "ignoring a reply from " + endpoint(frontend) + ": " + problem + ": " + preview(frame));
      return null;
    }
    return reply;
  }

  private static String problem(WireReply reply) {
    if (reply == null) {
      return "it is JSON null";
    }
    if (reply.id() == null) {
      return "it has no invocation ID (the frontend could not read a request)";
    }
    if (WireReply.OK.equals(reply.status())) {
      return reply.outputs() == null ? "status ok without outputs" : null;
    }
    if (WireReply.ERROR.equals(reply.status())) {
      return reply.error() == null ? "status error without an error kind" : null;
    }
    return WireReply.RUNNING.equals(reply.status()) ? null : "unknown status '" + reply.status() + "'";
  }

  private void handle(PendingCall.Kind kind, int frontend, WireReply reply) {
    PendingCall call = pending(kind).get(reply.id());
    if (call == null || call.reply.isDone()) {
      LOG.log(DEBUG, () -> "ignoring a late " + kind.wireName + " reply for invocation '" + reply.id() + "' from "
          + endpoint(frontend));
      return;
    }
    if (kind == PendingCall.Kind.INVOKE && WireReply.RUNNING.equals(reply.status())) {
      LOG.log(WARNING, () -> "ignoring a 'running' reply to an invoke request for '" + reply.id() + "' from "
          + endpoint(frontend) + "; only result requests get one");
      return;
    }
    if (reply.retryable()) {
      if (frontend != call.currentFrontend) {
        LOG.log(DEBUG, () -> "ignoring a retryable error for " + call.describe() + " from " + endpoint(frontend)
            + ", an earlier attempt; the call has moved on");
        return;
      }
      call.history.add(endpoint(frontend) + ": " + reply.error() + ": " + reply.message());
      if (WireReply.DATABASE.equals(reply.error())) {
        call.refusedByDatabase = true;
      } else if (WireReply.OVERLOADED.equals(reply.error())) {
        call.refusedAsOverloaded = true;
      } else if (WireReply.EXPIRED.equals(reply.error())) {
        call.refusedAsExpired = true;
      } else {
        call.mayHaveRun = true;
      }
      sendNextAttempt(call);
      return;
    }
    // A definite answer, even from an attempt that already timed out: the ID makes every attempt the same call.
    pending(kind).remove(call.id);
    ClientTracing.endAttempt(call, WireReply.ERROR.equals(reply.status()) ? reply.error() + ": " + reply.message()
        : null);
    call.bytes = null;
    forgetDeadline(call);
    call.reply.complete(reply);
  }

  private void fail(PendingCall call, ApiaryException error) {
    pending(call.kind).remove(call.id, call);
    ClientTracing.endAttempt(call, error.getMessage());
    call.bytes = null;
    forgetDeadline(call);
    call.reply.completeExceptionally(error);
  }

  private static void forgetDeadline(PendingCall call) {
    if (call.deadline != null) {
      call.deadline.call = null;
      call.deadline = null;
    }
  }

  private static ApiaryException exhausted(PendingCall call) {
    String tried = " after " + call.attempts + " attempt" + (call.attempts == 1 ? "" : "s") + " ["
        + String.join("; ", call.history) + "]";
    boolean invoke = call.kind == PendingCall.Kind.INVOKE;
    if (call.mayHaveRun) {
      return new OutcomeUnknownException(call.describe() + " got no definite answer" + tried + ". "
          + (invoke ? "It may or may not have run; retrying with the same invocation ID, or asking result(\""
              + call.id + "\"), is safe." : "Asking again is safe."), null);
    }
    if (call.refusedAsOverloaded && !call.refusedByDatabase) {
      return new OverloadedException(call.describe() + " was refused: every frontend tried was at its limit of "
          + "invocations in flight" + tried + "; nothing ran. Retry after "
          + WireReply.OVERLOADED_RETRY_AFTER_MS + " ms.", Duration.ofMillis(WireReply.OVERLOADED_RETRY_AFTER_MS));
    }
    if (call.refusedAsExpired && !call.refusedByDatabase && !call.refusedAsOverloaded) {
      return new org.apiary.RequestExpiredException(call.describe() + " was not started: every frontend that got it "
          + "found it expired"
          + tried + "; nothing ran. The frontends' clocks are ahead of this client's by more than they allow; fix "
          + "the clocks and retry with the same invocation ID.");
    }
    if (call.refusedByDatabase) {
      return new DatabaseException(call.describe() + " was refused by the database" + tried + "; "
          + (invoke ? "it did not run, and retrying with the same invocation ID is safe." : "asking again is safe."));
    }
    return new org.apiary.FrontendUnreachableException(call.describe() + " was not sent" + tried + "; nothing ran.",
        null);
  }

  private String endpoint(int frontend) {
    return config.frontends().get(frontend);
  }

  private static String preview(byte[] frame) {
    String text = new String(frame, 0, Math.min(frame.length, LOGGED_FRAME_CHARS), StandardCharsets.UTF_8);
    return frame.length > LOGGED_FRAME_CHARS ? text + "... (" + frame.length + " bytes)" : text;
  }
}
