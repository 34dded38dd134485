package org.apiary.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apiary.ApiaryException;
import org.apiary.DatabaseException;
import org.apiary.FunctionFailedException;
import org.apiary.InvalidRequestException;
import org.apiary.OutcomeUnknownException;
import org.apiary.Output;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.Json;
import org.apiary.internal.wire.WireReply;
import org.apiary.internal.wire.WireRequest;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * A frontend: serves graph invocations from clients over ZeroMQ, runs them with the {@link Dispatcher}, logs them
 * in the {@link InvocationLog}, holds a lease in the database and completes the unfinished invocations of
 * frontends whose lease expired. A frontend keeps no state that another frontend would need: any frontend serves
 * any graph, any retry and any result request.
 *
 * <p>Threads: one owns the ZeroMQ sockets; executions continue on the database client's callback thread; one
 * renews the lease, recovers dead frontends' work and deletes old records.
 */
public final class FrontendServer implements AutoCloseable {
  private static final Logger LOG = System.getLogger(FrontendServer.class.getName());
  private static final AtomicInteger INSTANCES = new AtomicInteger();

  private final ApiaryDatabase db;
  private final FrontendConfig config;
  private final String id = UUID.randomUUID().toString();
  private final GraphCatalog catalog;
  private final Dispatcher dispatcher;
  private final InvocationLog log;
  private final ScheduledExecutorService maintenance;
  private final ZContext zmq = new ZContext();
  /** Wakes the socket thread when another thread queued a reply; sent without blocking, under its own lock. */
  private final ZMQ.Socket wakeUps;
  /** Replies waiting for the socket thread. Threads that finish work (VoltDB's callback threads) never block here. */
  private final java.util.concurrent.ConcurrentLinkedQueue<ZMsg> outbox = new java.util.concurrent.ConcurrentLinkedQueue<>();
  private final java.util.concurrent.atomic.AtomicBoolean wakeUpPending = new java.util.concurrent.atomic.AtomicBoolean();
  private final String endpoint;
  private final Thread ioThread;
  private final Map<String, Pending> inFlight = new ConcurrentHashMap<>();
  private final FrontendLeases leases;
  private final FrontendHooks hooks;
  private volatile boolean running = true;

  /** An invocation this frontend is running, with the clients waiting for its reply. */
  private static final class Pending {
    final List<byte[]> waiters = new ArrayList<>();
    final String graph;
    final JsonNode key;
    final List<JsonNode> args;
    WireReply reply;

    Pending(String graph, JsonNode key, List<JsonNode> args) {
      this.graph = graph;
      this.key = key;
      this.args = args;
    }

    boolean sameRequest(String otherGraph, JsonNode otherKey, List<JsonNode> otherArgs) {
      return graph.equals(otherGraph) && Objects.equals(key, otherKey) && Objects.equals(args, otherArgs);
    }
  }

  private FrontendServer(ApiaryDatabase db, FrontendConfig config, FrontendHooks hooks) {
    this.db = db;
    this.config = config;
    this.hooks = hooks;
    this.catalog = new GraphCatalog(db, Duration.ofSeconds(1));
    this.log = new InvocationLog(db);
    this.maintenance = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "apiary-frontend-maintenance"));
    this.dispatcher = new Dispatcher(db, catalog, (graph, invocation, function, result) -> {
      hooks.afterFunction(invocation, function);
      if (function.equals(config.crashAfterFunction())) {
        System.err.println("frontend " + id + ": fault injection: halting after function '" + function + "'");
        Runtime.getRuntime().halt(137);
      }
    });
    String wakeUpEndpoint = "inproc://apiary-frontend-wake-ups-" + INSTANCES.incrementAndGet();
    ZMQ.Socket router = zmq.createSocket(SocketType.ROUTER);
    router.setLinger(0);
    // ZeroMQ drops a peer that sends a frame above this; frames between the configured limit and this get a reply.
    router.setMaxMsgSize(4L * config.maxRequestBytes());
    String bound = config.port() == 0 ? "tcp://" + config.bindAddress() + ":*" : "tcp://" + config.bindAddress() + ":" + config.port();
    router.bind(bound);
    this.endpoint = router.getLastEndpoint();
    ZMQ.Socket pull = zmq.createSocket(SocketType.PULL);
    pull.bind(wakeUpEndpoint);
    this.wakeUps = zmq.createSocket(SocketType.PUSH);
    wakeUps.setLinger(0);
    wakeUps.connect(wakeUpEndpoint);
    this.leases = new FrontendLeases(db, id, endpoint);
    this.ioThread = new Thread(() -> serve(router, pull), "apiary-frontend-io");
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  /** Starts a frontend on a database that has Apiary's system schema (any registered application). */
  public static FrontendServer start(ApiaryDatabase db, FrontendConfig config) {
    return start(db, config, FrontendHooks.NONE);
  }

  /** Starts a frontend with fault-injection hooks (tests). */
  static FrontendServer start(ApiaryDatabase db, FrontendConfig config, FrontendHooks hooks) {
    FrontendServer server = new FrontendServer(db, config, hooks);
    if (config.invocationLog()) {
      server.leases.renew(config.leaseDuration());
      long every = config.heartbeatInterval().toMillis();
      server.maintenance.scheduleWithFixedDelay(server::heartbeat, every, every, TimeUnit.MILLISECONDS);
      long clean = config.cleanupInterval().toMillis();
      server.maintenance.scheduleWithFixedDelay(server::cleanUp, clean, clean, TimeUnit.MILLISECONDS);
    }
    server.ioThread.start();
    return server;
  }

  /** The ZeroMQ endpoint clients connect to, e.g. {@code tcp://127.0.0.1:5555}. */
  public String endpoint() {
    return endpoint;
  }

  /** This frontend's unique ID (its lease and invocation-log owner name). */
  public String id() {
    return id;
  }

  // ---------------------------------------------------------------- socket thread

  private void serve(ZMQ.Socket router, ZMQ.Socket pull) {
    ZMQ.Poller poller = zmq.createPoller(2);
    poller.register(router, ZMQ.Poller.POLLIN);
    poller.register(pull, ZMQ.Poller.POLLIN);
    try {
      boolean busy = false;
      while (running && !Thread.currentThread().isInterrupted()) {
        // Block only when the last round found nothing: under load, polling every round costs more (JeroMQ
        // re-registers its sockets with the selector each time) than the work itself.
        if (!busy && poller.poll(100) < 0) {
          break;
        }
        busy = false;
        // Drain both sockets whatever the poll said: ZeroMQ signals readiness by edges, and a message that arrived
        // while this thread was busy may not raise another one.
        while (pull.recv(ZMQ.DONTWAIT) != null) {
          busy = true;
        }
        wakeUpPending.set(false); // before taking the outbox: a reply queued after this sends a new wake-up
        for (ZMsg reply = outbox.poll(); reply != null; reply = outbox.poll()) {
          busy = true;
          reply.send(router);
        }
        ZMsg request = ZMsg.recvMsg(router, false);
        while (request != null) {
          busy = true;
          receive(request);
          request = ZMsg.recvMsg(router, false);
        }
      }
    } catch (RuntimeException e) {
      if (running) {
        LOG.log(Level.ERROR, "frontend " + id + ": the socket thread stopped", e);
      }
    } finally {
      poller.close();
    }
  }

  private void receive(ZMsg message) {
    byte[] client = message.pop().getData();
    if (message.size() != 1) {
      reply(client, WireReply.error(null, WireReply.INVALID_REQUEST, "a request is exactly one frame of JSON; got "
          + message.size() + " frames"));
      return;
    }
    byte[] frame = message.pop().getData();
    if (frame.length > config.maxRequestBytes()) {
      reply(client, WireReply.error(null, WireReply.INVALID_REQUEST, "request of " + frame.length
          + " bytes exceeds this frontend's limit of " + config.maxRequestBytes() + " bytes"));
      return;
    }
    WireRequest request;
    try {
      request = Json.read(frame, WireRequest.class, "request");
      if (request == null || request.type() == null || request.id() == null || request.id().isEmpty()
          || request.id().length() > WireRequest.MAX_ID_LENGTH) {
        throw new IllegalArgumentException("a request needs a type and an invocation ID of 1 to "
            + WireRequest.MAX_ID_LENGTH + " characters");
      }
    } catch (IllegalArgumentException e) {
      reply(client, WireReply.error(null, WireReply.INVALID_REQUEST, "malformed request: " + e.getMessage()));
      return;
    }
    try {
      switch (request.type()) {
        case WireRequest.INVOKE -> invoke(client, request, frame);
        case WireRequest.RESULT -> result(client, request.id());
        default -> reply(client, WireReply.error(request.id(), WireReply.INVALID_REQUEST, "unknown request type '"
            + request.type() + "'; expected '" + WireRequest.INVOKE + "' or '" + WireRequest.RESULT + "'"));
      }
    } catch (RuntimeException e) {
      reply(client, toReply(request.id(), e));
    }
  }

  /**
   * Queues a reply for the socket thread. Never blocks: it runs on VoltDB's callback threads, and a callback thread
   * waiting for the socket thread (which may itself wait for the database) would stop every answer.
   */
  private void reply(byte[] client, WireReply reply) {
    ZMsg m = new ZMsg();
    m.add(client);
    m.add(Json.bytes(reply));
    outbox.add(m);
    if (Thread.currentThread() != ioThread && wakeUpPending.compareAndSet(false, true)) {
      synchronized (wakeUps) {
        // At most one wake-up is in the pipe at a time, so this cannot meet a full pipe; if it ever did, a wake-up
        // would already be waiting.
        wakeUps.send(WAKE_UP, ZMQ.DONTWAIT);
      }
    }
  }

  private static final byte[] WAKE_UP = {0};

  // ---------------------------------------------------------------- invocations

  private void invoke(byte[] client, WireRequest request, byte[] frame) {
    if (request.graph() == null) {
      throw new InvalidRequestException("an invoke request needs a graph name");
    }
    List<JsonNode> args = request.args() == null ? List.of() : request.args();
    JsonNode key = request.key() == null || request.key().isNull() ? null : request.key();
    RegisteredGraph graph = catalog.graph(request.graph()).orElseThrow(() -> new InvalidRequestException(
        "unknown graph '" + request.graph() + "'; registered graphs are " + catalog.graphNames()));
    Dispatcher.checkRequest(graph, key, args);

    Pending pending = new Pending(graph.name(), key, args);
    synchronized (pending) {
      Pending existing = inFlight.putIfAbsent(request.id(), pending);
      if (existing != null) {
        synchronized (existing) {
          if (!existing.sameRequest(graph.name(), key, args)) {
            reply(client, WireReply.error(request.id(), WireReply.INVALID_REQUEST, "invocation ID " + request.id()
                + " was already used for a different request (graph '" + existing.graph + "'); use a new ID"));
            return;
          }
          if (existing.reply == null) {
            existing.waiters.add(client); // the same invocation, resent while it runs here
            return;
          }
          reply(client, withId(existing.reply, request.id()));
          return;
        }
      }
      pending.waiters.add(client);
    }
    if (!config.invocationLog()) {
      run(request.id(), graph, key, args, request.caller(), false);
      return;
    }
    log.begin(request.id(), graph.name(), frame, id).whenComplete((ok, err) -> {
      if (err == null) {
        run(request.id(), graph, key, args, request.caller(), true); // logged as new: nothing can be recorded yet
      } else {
        resume(request, graph, key, args, unwrap(err));
      }
    });
  }

  /** The ID is already logged: a retry (after a frontend failure) or a client reusing an ID. */
  private void resume(WireRequest request, RegisteredGraph graph, JsonNode key, List<JsonNode> args, Throwable beginFailure) {
    String invocation = request.id();
    log.get(invocation).whenComplete((entry, err) -> guarded(invocation, () -> {
      if (err != null || entry.isEmpty()) {
        complete(invocation, toReply(invocation, err != null ? unwrap(err) : beginFailure), false);
        return;
      }
      InvocationLog.Entry e = entry.get();
      WireRequest logged = Json.read(e.request(), WireRequest.class, "logged request of invocation " + invocation);
      if (!e.graph().equals(graph.name()) || !Objects.equals(logged.key(), request.key())
          || !Objects.equals(normalize(logged.args()), normalize(request.args()))) {
        complete(invocation, WireReply.error(invocation, WireReply.INVALID_REQUEST, "invocation ID " + invocation
            + " was already used for a different request (graph '" + e.graph() + "'); use a new ID"), false);
      } else if (!InvocationLog.RUNNING.equals(e.status())) {
        complete(invocation, withId(Json.read(e.result(), WireReply.class, "logged result"), invocation), false);
      } else {
        log.claim(invocation, id).whenComplete((ok, claimErr) -> {
          if (claimErr != null) {
            complete(invocation, toReply(invocation, unwrap(claimErr)), false);
          } else {
            run(invocation, graph, key, args, request.caller(), false);
          }
        });
      }
    }));
  }

  /** Runs a continuation; if it throws, the invocation ends with that error instead of hanging its clients. */
  private void guarded(String invocation, Runnable body) {
    try {
      body.run();
    } catch (RuntimeException e) {
      complete(invocation, toReply(invocation, e), false);
    }
  }

  private static List<JsonNode> normalize(List<JsonNode> args) {
    return args == null ? List.of() : args;
  }

  private void run(String invocation, RegisteredGraph graph, JsonNode key, List<JsonNode> args, String caller,
                   boolean firstRun) {
    dispatcher.execute(graph, invocation, key, args, caller, firstRun).whenComplete((outputs, err) -> {
      WireReply reply = err == null ? WireReply.ok(invocation, outputs) : toReply(invocation, unwrap(err));
      boolean ended = WireReply.OK.equals(reply.status()) || WireReply.FUNCTION_FAILED.equals(reply.error())
          || WireReply.INVALID_REQUEST.equals(reply.error());
      complete(invocation, reply, ended && config.invocationLog());
    });
  }

  /**
   * Replies to every waiting client and, if the outcome is final, stores it in the log. The invocation stays in
   * flight here until it is stored, so a request for it in between gets the same answer from memory.
   */
  private void complete(String invocation, WireReply reply, boolean store) {
    Pending pending = inFlight.get(invocation);
    List<byte[]> waiters = List.of();
    if (pending != null) {
      synchronized (pending) {
        pending.reply = reply;
        waiters = List.copyOf(pending.waiters);
        pending.waiters.clear();
      }
    }
    for (byte[] client : waiters) {
      reply(client, reply);
    }
    if (!store) {
      inFlight.remove(invocation);
      return;
    }
    String status = WireReply.OK.equals(reply.status()) ? InvocationLog.DONE : InvocationLog.FAILED;
    try {
      hooks.beforeStoringOutcome(invocation);
    } catch (RuntimeException e) {
      inFlight.remove(invocation);
      return;
    }
    log.finish(invocation, status, Json.bytes(reply)).whenComplete((ok, err) -> {
      if (err != null) {
        // The invocation stays RUNNING in the log; recovery runs it again, replaying its recorded functions.
        LOG.log(Level.WARNING, "frontend " + id + ": could not store the outcome of invocation " + invocation + ": "
            + unwrap(err).getMessage());
      }
      inFlight.remove(invocation);
    });
  }

  private void result(byte[] client, String invocation) {
    Pending pending = inFlight.get(invocation);
    if (pending != null) {
      synchronized (pending) {
        reply(client, pending.reply != null ? withId(pending.reply, invocation) : WireReply.running(invocation));
      }
      return;
    }
    if (!config.invocationLog()) {
      reply(client, WireReply.error(invocation, WireReply.INVALID_REQUEST, "invocation " + invocation + " is not "
          + "running here, and this frontend keeps no invocation log to look it up"));
      return;
    }
    log.get(invocation).whenComplete((entry, err) -> {
      try {
        answerFromLog(client, invocation, entry, err);
      } catch (RuntimeException e) {
        reply(client, toReply(invocation, e));
      }
    });
  }

  private void answerFromLog(byte[] client, String invocation, Optional<InvocationLog.Entry> entry, Throwable err) {
    if (err != null) {
      reply(client, toReply(invocation, unwrap(err)));
    } else if (entry.isEmpty()) {
      reply(client, WireReply.error(invocation, WireReply.INVALID_REQUEST, "no invocation with ID " + invocation
          + " is known: it never started, or it ended more than " + config.retention() + " ago"));
    } else if (InvocationLog.RUNNING.equals(entry.get().status())) {
      reply(client, WireReply.running(invocation));
    } else {
      reply(client, withId(Json.read(entry.get().result(), WireReply.class, "logged result"), invocation));
    }
  }

  private static WireReply withId(WireReply r, String invocation) {
    return new WireReply(invocation, r.status(), r.outputs(), r.error(), r.function(), r.functionError(), r.message());
  }

  private static Throwable unwrap(Throwable e) {
    return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
  }

  static WireReply toReply(String invocation, Throwable e) {
    if (e instanceof FunctionFailedException f) {
      return WireReply.functionFailed(invocation, f.functionName(), f.errorType(), f.errorMessage());
    }
    if (e instanceof InvalidRequestException) {
      return WireReply.error(invocation, WireReply.INVALID_REQUEST, e.getMessage());
    }
    if (e instanceof OutcomeUnknownException) {
      return WireReply.error(invocation, WireReply.OUTCOME_UNKNOWN, e.getMessage());
    }
    if (e instanceof DatabaseException || e instanceof ApiaryException) {
      return WireReply.error(invocation, WireReply.DATABASE, e.getMessage());
    }
    LOG.log(Level.ERROR, "invocation " + invocation + " failed unexpectedly", e);
    return WireReply.error(invocation, WireReply.OUTCOME_UNKNOWN, "the frontend failed: " + e);
  }

  // ---------------------------------------------------------------- leases, recovery, retention

  private void heartbeat() {
    try {
      leases.renew(config.leaseDuration());
      for (String dead : leases.expired()) {
        if (!dead.equals(id) && leases.takeOver(dead)) {
          hooks.duringTakeover(dead);
          long moved = log.reassign(dead, id);
          LOG.log(Level.INFO, "frontend " + id + ": took over " + moved + " running invocation(s) of dead frontend " + dead);
        }
      }
      recover();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "frontend " + id + ": lease renewal or recovery failed; retrying in "
          + config.heartbeatInterval() + ": " + e.getMessage());
    }
  }

  /** Runs every invocation logged as ours that is not running here (taken over, or left by a failed dispatch). */
  private void recover() {
    for (InvocationLog.Entry e : log.running(id)) {
      if (inFlight.containsKey(e.invocationId())) {
        continue;
      }
      Optional<RegisteredGraph> graph = catalog.graph(e.graph());
      WireRequest request = Json.read(e.request(), WireRequest.class, "logged request of invocation " + e.invocationId());
      Pending pending = new Pending(e.graph(), request.key() == null || request.key().isNull() ? null : request.key(),
          normalize(request.args()));
      if (inFlight.putIfAbsent(e.invocationId(), pending) != null) {
        continue;
      }
      if (graph.isEmpty()) {
        complete(e.invocationId(), WireReply.error(e.invocationId(), WireReply.INVALID_REQUEST, "graph '" + e.graph()
            + "' is no longer registered"), true);
        continue;
      }
      // The scan may predate this invocation's end here: run it only if the log still says it is ours and running.
      log.get(e.invocationId()).whenComplete((now, err) -> guarded(e.invocationId(), () -> {
        if (err != null || now.isEmpty() || !InvocationLog.RUNNING.equals(now.get().status())
            || !id.equals(now.get().frontend())) {
          inFlight.remove(e.invocationId());
          return;
        }
        LOG.log(Level.INFO, "frontend " + id + ": recovering invocation " + e.invocationId() + " of graph " + e.graph());
        run(e.invocationId(), graph.get(), request.key() == null || request.key().isNull() ? null : request.key(),
            normalize(request.args()), request.caller(), false);
      }));
    }
  }

  private void cleanUp() {
    try {
      hooks.beforeCleanup();
      long deleted = log.deleteBefore(System.currentTimeMillis() - config.retention().toMillis());
      if (deleted > 0) {
        LOG.log(Level.DEBUG, "frontend " + id + ": deleted " + deleted + " old invocation record(s)");
      }
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "frontend " + id + ": retention cleanup failed: " + e.getMessage());
    }
  }

  /** Runs one retention pass now (normally scheduled every {@link FrontendConfig#cleanupInterval()}). */
  public long deleteExpiredRecords() {
    return log.deleteBefore(System.currentTimeMillis() - config.retention().toMillis());
  }

  /** How many invocations this frontend is running. */
  public int inFlight() {
    return inFlight.size();
  }

  /**
   * Stops serving. Invocations still running are left to other frontends: the lease is released, so one of them
   * takes them over at its next heartbeat.
   */
  @Override
  public void close() {
    if (!running) {
      return;
    }
    running = false;
    maintenance.shutdownNow();
    try {
      ioThread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      if (config.invocationLog()) {
        leases.release();
      }
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "frontend " + id + ": could not release its lease; it expires in "
          + config.leaseDuration() + ": " + e.getMessage());
    } finally {
      zmq.close();
    }
  }
}
