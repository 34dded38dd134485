package org.apiary.client;

import static java.lang.System.Logger.Level.DEBUG;
import static java.lang.System.Logger.Level.ERROR;
import static java.lang.System.Logger.Level.WARNING;

import com.fasterxml.jackson.core.JsonProcessingException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.apiary.ApiaryException;
import org.apiary.DatabaseException;
import org.apiary.InvalidRequestException;
import org.apiary.OutcomeUnknownException;
import org.apiary.internal.wire.WireReply;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The client's one I/O thread. It owns the ZeroMQ context and every socket in it: per frontend one DEALER for
 * invoke requests and one for result requests (a ROUTER answers on the connection a request came in on, so a
 * reply's socket tells which kind of request it answers, and an invoke and a result poll for the same ID never
 * take each other's reply).
 *
 * <p>Other threads only {@link #submit} calls: the call goes on a concurrent queue and, unless a wake-up is already
 * on its way, one byte goes through an inproc PAIR socket, under {@code wakeLock}, to end the I/O thread's poll.
 * The I/O thread tracks pending calls by ID per kind, sends attempts round-robin, fails over on a timeout or a
 * retryable error, and completes each call's future with the definite reply. It never runs application code:
 * {@link ApiaryClient} maps replies to results on the caller's or the callback thread.
 */
final class ClientIoLoop implements Runnable {
  static final String THREAD_NAME = "apiary-client-io";

  private static final System.Logger LOG = System.getLogger(ApiaryClient.class.getName());
  private static final String WAKE_ENDPOINT = "inproc://apiary-client-wake";
  private static final byte[] WAKE = {1};
  /** The longest poll: a stop request is seen within this even if its wake-up were lost. */
  private static final long MAX_POLL_MILLIS = 100;
  /** Requests queued on one socket before a send would block; then that attempt moves on to the next frontend. */
  private static final int SEND_QUEUE_LIMIT = 10_000;
  private static final Duration START_TIMEOUT = Duration.ofSeconds(5);
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

  private final ClientConfig config;
  private final int frontendCount;
  private final long attemptTimeoutNanos;
  private final Consumer<Throwable> onFailure;
  private final Thread thread;
  private final ConcurrentLinkedQueue<PendingCall> submitted = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean wakePending = new AtomicBoolean();
  private final Object wakeLock = new Object();
  private final CountDownLatch started = new CountDownLatch(1);
  private volatile Throwable startFailure;
  private volatile boolean stopRequested;

  /** The sending end of the wake-up pipe: made by the I/O thread, then used only under the lock; null once gone. */
  private ZMQ.Socket wakeSender;

  // Everything below belongs to the I/O thread.
  private ZContext context;
  private ZMQ.Socket wakeReceiver;
  private ZMQ.Socket[] invokeSockets;
  private ZMQ.Socket[] resultSockets;
  private ZMQ.Poller poller;
  private final Map<String, PendingCall> pendingInvokes = new HashMap<>();
  private final Map<String, PendingCall> pendingResults = new HashMap<>();
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
   * @param onFailure called on the I/O thread if the loop fails; it must fail every call the client has open
   */
  ClientIoLoop(ClientConfig config, Consumer<Throwable> onFailure) {
    this.config = config;
    this.frontendCount = config.frontends().size();
    this.suspectUntil = new long[frontendCount];
    this.attemptTimeoutNanos = config.attemptTimeout().toNanos();
    this.onFailure = onFailure;
    this.thread = new Thread(this, THREAD_NAME);
    thread.setDaemon(true);
  }

  /** Whether the calling thread is this loop's I/O thread. */
  boolean isIoThread() {
    return Thread.currentThread() == thread;
  }

  /**
   * Starts the thread and waits until its sockets exist.
   *
   * @throws ApiaryException if the sockets could not be set up (for example an endpoint ZeroMQ rejects)
   */
  void start() {
    thread.start();
    boolean ready;
    try {
      ready = started.await(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stop(START_TIMEOUT);
      throw new ApiaryException("interrupted while starting the Apiary client", e);
    }
    if (!ready) {
      stop(START_TIMEOUT);
      throw new ApiaryException("the Apiary client's I/O thread did not start within " + START_TIMEOUT.toMillis()
          + " ms");
    }
    if (startFailure != null) {
      throw new ApiaryException("cannot set up connections to the frontends " + config.frontends() + ": "
          + startFailure.getMessage(), startFailure);
    }
  }

  /** Hands a call to the I/O thread. Safe from any thread. */
  void submit(PendingCall call) {
    submitted.add(call);
    if (wakePending.compareAndSet(false, true)) {
      sendWakeUp();
    }
  }

  /**
   * Asks the thread to stop and waits up to {@code timeout} for it; it closes its sockets and the context itself.
   *
   * @return whether the thread has ended
   */
  boolean stop(Duration timeout) {
    stopRequested = true;
    sendWakeUp();
    if (Thread.currentThread() == thread) {
      return false;
    }
    try {
      thread.join(timeout.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return !thread.isAlive();
  }

  private void sendWakeUp() {
    synchronized (wakeLock) {
      if (wakeSender == null) {
        return;
      }
      try {
        wakeSender.send(WAKE, ZMQ.DONTWAIT);
      } catch (RuntimeException e) {
        LOG.log(WARNING, "could not wake the Apiary client's I/O thread; it will see new work within "
            + MAX_POLL_MILLIS + " ms", e);
      }
    }
  }

  @Override
  public void run() {
    try {
      setUp();
    } catch (RuntimeException | Error e) {
      startFailure = e;
      tearDown();
      return;
    } finally {
      started.countDown();
    }
    Throwable failure = null;
    try {
      loop();
    } catch (RuntimeException | Error e) {
      failure = e;
      LOG.log(ERROR, "the Apiary client's I/O thread failed; failing every pending call", e);
      onFailure.accept(e);
    } finally {
      tearDown();
    }
    if (failure instanceof Error error) {
      throw error;
    }
  }

  private void setUp() {
    context = new ZContext(1);
    wakeReceiver = context.createSocket(SocketType.PAIR);
    wakeReceiver.setLinger(0);
    wakeReceiver.bind(WAKE_ENDPOINT);
    ZMQ.Socket sender = context.createSocket(SocketType.PAIR);
    sender.setLinger(0);
    sender.connect(WAKE_ENDPOINT);
    synchronized (wakeLock) {
      wakeSender = sender;
    }
    invokeSockets = new ZMQ.Socket[frontendCount];
    resultSockets = new ZMQ.Socket[frontendCount];
    poller = context.createPoller(1 + 2 * frontendCount);
    poller.register(wakeReceiver, ZMQ.Poller.POLLIN);
    for (int i = 0; i < frontendCount; i++) {
      invokeSockets[i] = dealer(config.frontends().get(i));
      poller.register(invokeSockets[i], ZMQ.Poller.POLLIN);
    }
    for (int i = 0; i < frontendCount; i++) {
      resultSockets[i] = dealer(config.frontends().get(i));
      poller.register(resultSockets[i], ZMQ.Poller.POLLIN);
    }
  }

  private ZMQ.Socket dealer(String endpoint) {
    ZMQ.Socket socket = context.createSocket(SocketType.DEALER);
    socket.setLinger(0);
    socket.setSndHWM(SEND_QUEUE_LIMIT);
    socket.setRcvHWM(0); // never drop a reply; the loop reads them as fast as they come
    if (!socket.connect(endpoint)) {
      throw new IllegalArgumentException("cannot connect to frontend " + endpoint + " (ZeroMQ error "
          + socket.errno() + ")");
    }
    return socket;
  }

  private void tearDown() {
    synchronized (wakeLock) {
      wakeSender = null; // closed with the context below; no caller can be using it now
    }
    if (poller != null) {
      poller.close();
    }
    if (context != null) {
      context.close();
    }
  }

  private void loop() {
    boolean busy = false;
    while (!stopRequested) {
      expireAttempts(System.nanoTime());
      // Block only when the last round found nothing to do: under load, polling every round costs more (JeroMQ
      // re-registers its sockets with the selector each time) than the work itself.
      if (!busy) {
        poller.poll(pollTimeoutMillis(System.nanoTime()));
      }
      busy = false;
      // Drain every socket whatever the poll said: ZeroMQ signals readiness by edges, and a message that arrived
      // while this thread was busy may not raise another one.
      drainWakeUps();
      wakePending.set(false); // before taking the queue: a call added after this sends a new wake-up
      for (PendingCall call = submitted.poll(); call != null; call = submitted.poll()) {
        begin(call);
        busy = true;
      }
      for (int i = 0; i < frontendCount; i++) {
        busy |= receiveAll(PendingCall.Kind.INVOKE, i) > 0;
        busy |= receiveAll(PendingCall.Kind.RESULT, i) > 0;
      }
    }
  }

  private long pollTimeoutMillis(long now) {
    Deadline first = deadlines.peekFirst();
    if (first == null) {
      return MAX_POLL_MILLIS;
    }
    long nanos = first.atNanos - now;
    return nanos <= 0 ? 0 : Math.min(MAX_POLL_MILLIS, TimeUnit.NANOSECONDS.toMillis(nanos) + 1);
  }

  private void drainWakeUps() {
    byte[] frame = wakeReceiver.recv(ZMQ.DONTWAIT);
    while (frame != null) {
      frame = wakeReceiver.recv(ZMQ.DONTWAIT);
    }
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
    PendingCall running = pending(call.kind).get(call.id);
    if (running != null) {
      share(running, call);
      return;
    }
    pending(call.kind).put(call.id, call);
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
    if (call.kind == PendingCall.Kind.INVOKE && !Arrays.equals(running.bytes, call.bytes)) {
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
      ZMQ.Socket socket = call.kind == PendingCall.Kind.INVOKE ? invokeSockets[frontend] : resultSockets[frontend];
      if (socket.send(call.bytes, ZMQ.DONTWAIT)) {
        forgetDeadline(call);
        call.deadline = new Deadline(call, call.attempts, System.nanoTime() + attemptTimeoutNanos);
        deadlines.addLast(call.deadline);
        return;
      }
      call.history.add(endpoint(frontend) + ": not sent, " + SEND_QUEUE_LIMIT + " requests already queued for it");
    }
    fail(call, exhausted(call));
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

  /** Handles every reply waiting on one socket; returns how many frames it read. */
  private int receiveAll(PendingCall.Kind kind, int frontend) {
    ZMQ.Socket socket = kind == PendingCall.Kind.INVOKE ? invokeSockets[frontend] : resultSockets[frontend];
    int read = 0;
    for (byte[] frame = socket.recv(ZMQ.DONTWAIT); frame != null; frame = socket.recv(ZMQ.DONTWAIT)) {
      read++;
      if (socket.hasReceiveMore()) {
        int extra = 0;
        while (socket.hasReceiveMore()) {
          socket.recv(0); // the rest of a message already arrived whole, so this does not block
          extra++;
        }
        int frames = extra + 1;
        LOG.log(WARNING, () -> "ignoring a " + frames + "-frame reply from " + endpoint(frontend)
            + "; the protocol has one frame per message");
        continue;
      }
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
      } else {
        call.mayHaveRun = true;
      }
      sendNextAttempt(call);
      return;
    }
    // A definite answer, even from an attempt that already timed out: the ID makes every attempt the same call.
    pending(kind).remove(call.id);
    call.bytes = null;
    forgetDeadline(call);
    call.reply.complete(reply);
  }

  private void fail(PendingCall call, ApiaryException error) {
    pending(call.kind).remove(call.id, call);
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
    if (call.refusedByDatabase) {
      return new DatabaseException(call.describe() + " was refused by the database" + tried + "; "
          + (invoke ? "it did not run, and retrying with the same invocation ID is safe." : "asking again is safe."));
    }
    return new ApiaryException(call.describe() + " was not sent" + tried + "; nothing ran.");
  }

  private String endpoint(int frontend) {
    return config.frontends().get(frontend);
  }

  private static String preview(byte[] frame) {
    String text = new String(frame, 0, Math.min(frame.length, LOGGED_FRAME_CHARS), StandardCharsets.UTF_8);
    return frame.length > LOGGED_FRAME_CHARS ? text + "... (" + frame.length + " bytes)" : text;
  }
}
