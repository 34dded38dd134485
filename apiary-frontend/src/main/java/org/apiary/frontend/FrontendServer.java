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
import java.util.concurrent.ExecutorService;
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
import org.apiary.runtime.SystemSchema;
import org.apiary.internal.Invocation;
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
  private final OneTransactionOutcomes oneTransactionOutcomes;
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
  /** Invocations whose outcome this frontend stored recently (nanoTime), which recovery need not look at. */
  private final Map<String, Long> concludedHere = new ConcurrentHashMap<>();
  private final FrontendLeases leases;
  private final FrontendHooks hooks;
  private volatile boolean running = true;
  /** Reads the catalog for names not known yet, so the socket thread never waits for the database. */
  private final ExecutorService catalogThread = Executors.newSingleThreadExecutor(r -> daemon(r,
      "apiary-frontend-catalog"));
  private final List<Runnable> waitingForCatalog = new ArrayList<>();
  private boolean catalogLoadScheduled;
  private long lastCatalogLoadNanos = System.nanoTime() - TimeUnit.SECONDS.toNanos(1);

  /** An invocation this frontend is running, with the clients waiting for its reply. */
  private static final class Pending {
    final List<byte[]> waiters = new ArrayList<>();
    final String graph;
    final JsonNode key;
    final List<JsonNode> args;
    WireReply reply;
    /** Whether the invocation has an invocation-log entry (its outcome is stored there). */
    volatile boolean logged;
    /** For a one-transaction invocation, where its outcome is recorded; else {@code null}. */
    volatile OneTransactionOutcomes.Location oneTransaction;

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
    this.oneTransactionOutcomes = new OneTransactionOutcomes(db);
    // Lease renewal, recovery, retention and retries each get a thread, so a slow one never delays the lease.
    this.maintenance = Executors.newScheduledThreadPool(4, r -> daemon(r, "apiary-frontend-maintenance"));
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
      server.maintenance.scheduleWithFixedDelay(server::renewLease, every, every, TimeUnit.MILLISECONDS);
      server.maintenance.scheduleWithFixedDelay(server::recoverDeadFrontends, every, every, TimeUnit.MILLISECONDS);
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
      while (running) {
        // Block only when the last round found nothing: under load, polling every round costs more (JeroMQ
        // re-registers its sockets with the selector each time) than the work itself.
        if (!busy && poller.poll(100) < 0 && running) {
          // JeroMQ reports an interrupt (EINTR) this way. Only close() ends this loop: a socket thread that stopped
          // here would leave a frontend that renews its lease but answers no one.
          boolean interrupted = Thread.interrupted();
          LOG.log(Level.WARNING, "frontend " + id + ": polling its sockets failed (errno " + router.errno()
              + (interrupted ? ", thread interrupted" : "") + "); polling again");
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
    } catch (RuntimeException | Error e) {
      if (running) {
        LOG.log(Level.ERROR, "frontend " + id + ": the socket thread stopped; this frontend answers no one and "
            + "releases its lease", e);
        // Stop visibly: without its lease, other frontends take over what was running here.
        Thread stop = new Thread(this::close, "apiary-frontend-stop");
        stop.setDaemon(true);
        stop.start();
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

  /** The most attempts an invocation gets (the first, retries after transient errors, takeovers) before it fails. */
  static final int MAX_ATTEMPTS = 8;
  /** Back-off before the second attempt; doubled for each later one, up to {@link #MAX_BACKOFF_MS}. */
  static final long FIRST_BACKOFF_MS = 50;
  static final long MAX_BACKOFF_MS = 2_000;

  /** One attempt at an invocation: what to run, under which graph version, and whether it is the very first. */
  private record Attempt(String invocation, RegisteredGraph graph, int version, JsonNode key, List<JsonNode> args,
                         String caller, int number, boolean firstRun) {
    Attempt next(RegisteredGraph newGraph, int newVersion) {
      return new Attempt(invocation, newGraph, newVersion, key, args, caller, number + 1, false);
    }
  }

  private void invoke(byte[] client, WireRequest request, byte[] frame) {
    if (request.graph() == null) {
      throw new InvalidRequestException("an invoke request needs a graph name");
    }
    Optional<GraphCatalog.Versioned> known = catalog.known(request.graph());
    if (known.isEmpty()) { // perhaps registered since the last load: look again, off this thread
      afterCatalogReload(client, request, () -> invoke(client, request, frame, catalog.known(request.graph())));
      return;
    }
    invoke(client, request, frame, known);
  }

  private void invoke(byte[] client, WireRequest request, byte[] frame, Optional<GraphCatalog.Versioned> known) {
    List<JsonNode> args = request.args() == null ? List.of() : request.args();
    JsonNode key = request.key() == null || request.key().isNull() ? null : request.key();
    GraphCatalog.Versioned graph = known.orElseThrow(() -> new InvalidRequestException(
        "unknown graph '" + request.graph() + "'; registered graphs are " + catalog.graphNames()));
    Dispatcher.checkRequest(graph.graph(), key, args);

    Pending pending = new Pending(graph.graph().name(), key, args);
    synchronized (pending) {
      Pending existing = inFlight.putIfAbsent(request.id(), pending);
      if (existing != null) {
        synchronized (existing) {
          if (!existing.sameRequest(graph.graph().name(), key, args)) {
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
    Attempt first = new Attempt(request.id(), graph.graph(), graph.version(), key, args, request.caller(), 1, true);
    if (!logged(graph.graph())) {
      pending.oneTransaction = oneTransactionLocation(first);
      execute(first);
      return;
    }
    pending.logged = true;
    log.begin(request.id(), graph.graph().name(), graph.version(), frame, id).whenComplete((logged, err) -> {
      if (err == null && logged) {
        execute(first); // logged as new: nothing can be recorded yet
      } else {
        resume(request, key, args, err == null ? new InvalidRequestException("invocation " + request.id()
            + " is already logged") : unwrap(err));
      }
    });
  }

  /**
   * Whether invocations of a graph version get an invocation-log entry: not when the log is off, not when the graph
   * records nothing (running it again is safe), not when it is one recorded transaction (its record is its outcome).
   */
  private boolean logged(RegisteredGraph graph) {
    return config.invocationLog() && !graph.recordsNothing() && !graph.oneTransaction();
  }

  /** Where a one-transaction invocation's outcome is recorded, or {@code null} if it is not one. */
  private OneTransactionOutcomes.Location oneTransactionLocation(Attempt attempt) {
    RegisteredGraph graph = attempt.graph();
    if (!config.invocationLog() || !graph.oneTransaction()) {
      return null;
    }
    RegisteredGraph.Node node = graph.nodes().get(0);
    Object recordKey = !node.local() ? attempt.invocation()
        : node.keyType().fromJson(attempt.key(), "partition key for function '" + node.function() + "'");
    if (recordKey instanceof Number n) {
      recordKey = n.longValue();
    }
    return new OneTransactionOutcomes.Location(SystemSchema.recordedTable(node.local() ? node.keyType() : null),
        recordKey, node.function(), OneTransactionOutcomes.requestHash(graph.name(), attempt.key(), attempt.args()));
  }

  private Pending pending(String invocation) {
    return inFlight.get(invocation);
  }

  /** Most requests that may wait at once for a catalog load (names this frontend does not know). */
  static final int MAX_WAITING_FOR_CATALOG = 10_000;
  /** The shortest time between two catalog loads for unknown names. */
  static final long MIN_CATALOG_LOAD_SPACING_MS = 50;

  /**
   * Runs {@code then} on the catalog thread after a load of the catalog that began after this call, so a graph
   * registered before the request was sent is found. Requests that wait at the same time share one load; loads are
   * at least {@link #MIN_CATALOG_LOAD_SPACING_MS} apart. Beyond {@link #MAX_WAITING_FOR_CATALOG} waiting requests, a
   * request is refused rather than queued.
   */
  private void afterCatalogReload(byte[] client, WireRequest request, Runnable then) {
    Runnable guardedThen = () -> {
      try {
        then.run();
      } catch (RuntimeException e) {
        reply(client, toReply(request.id(), e));
      }
    };
    synchronized (waitingForCatalog) {
      if (waitingForCatalog.size() >= MAX_WAITING_FOR_CATALOG) {
        reply(client, WireReply.error(request.id(), WireReply.INVALID_REQUEST, "graph '" + request.graph()
            + "' is not known here yet and " + MAX_WAITING_FOR_CATALOG + " other requests wait for the catalog; "
            + "retry later"));
        return;
      }
      waitingForCatalog.add(guardedThen);
      if (catalogLoadScheduled) {
        return;
      }
      catalogLoadScheduled = true;
    }
    catalogThread.execute(this::loadCatalogForWaitingRequests);
  }

  private void loadCatalogForWaitingRequests() {
    long wait = lastCatalogLoadNanos + TimeUnit.MILLISECONDS.toNanos(MIN_CATALOG_LOAD_SPACING_MS) - System.nanoTime();
    if (wait > 0) {
      try {
        TimeUnit.NANOSECONDS.sleep(wait);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt(); // closing: the requests get no answer, as any request at close
        return;
      }
    }
    List<Runnable> waiting;
    synchronized (waitingForCatalog) { // every request taken here arrived before the load below begins
      waiting = new ArrayList<>(waitingForCatalog);
      waitingForCatalog.clear();
      catalogLoadScheduled = false;
    }
    try {
      catalog.reload();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "frontend " + id + ": reading the graph catalog failed: " + e.getMessage());
    }
    lastCatalogLoadNanos = System.nanoTime();
    waiting.forEach(Runnable::run);
  }

  /** The ID is already logged: a retry (after a frontend failure) or a client reusing an ID. */
  private void resume(WireRequest request, JsonNode key, List<JsonNode> args, Throwable beginFailure) {
    String invocation = request.id();
    log.get(invocation).whenComplete((entry, err) -> guarded(invocation, () -> {
      if (err != null || entry.isEmpty()) {
        deliver(invocation, toReply(invocation, err != null ? unwrap(err) : beginFailure));
        return;
      }
      InvocationLog.Entry e = entry.get();
      WireRequest logged = Json.read(e.request(), WireRequest.class, "logged request of invocation " + invocation);
      if (!e.graph().equals(request.graph()) || !Objects.equals(logged.key(), request.key())
          || !Objects.equals(normalize(logged.args()), normalize(request.args()))) {
        deliver(invocation, WireReply.error(invocation, WireReply.INVALID_REQUEST, "invocation ID " + invocation
            + " was already used for a different request (graph '" + e.graph() + "'); use a new ID"));
      } else if (!InvocationLog.RUNNING.equals(e.status())) {
        deliver(invocation, storedReply(e, invocation));
      } else {
        Optional<RegisteredGraph> graph = catalog.graph(e.graph(), e.graphVersion());
        if (graph.isEmpty()) { // registered after our last catalog load: load it off this (database) thread
          maintenance.execute(() -> guarded(invocation, () -> {
            catalog.reload();
            claimAndRun(new Attempt(invocation, catalog.graph(e.graph(), e.graphVersion()).orElseThrow(() ->
                new IllegalStateException("graph '" + e.graph() + "' version " + e.graphVersion() + " is not "
                    + "registered")), e.graphVersion(), key, args, request.caller(), e.attempts() + 1, false));
          }));
        } else {
          claimAndRun(new Attempt(invocation, graph.get(), e.graphVersion(), key, args, request.caller(),
              e.attempts() + 1, false));
        }
      }
    }));
  }

  /** Runs a continuation; if it throws, the invocation ends with that error instead of hanging its clients. */
  private void guarded(String invocation, Runnable body) {
    try {
      body.run();
    } catch (RuntimeException e) {
      conclude(invocation, toReply(invocation, e));
    }
  }

  private static List<JsonNode> normalize(List<JsonNode> args) {
    return args == null ? List.of() : args;
  }

  /** Takes a logged, running invocation for another attempt here, unless it has had its attempts or has ended. */
  private void claimAndRun(Attempt attempt) {
    String invocation = attempt.invocation();
    if (attempt.number() > MAX_ATTEMPTS) {
      conclude(invocation, WireReply.error(invocation, WireReply.INVOCATION_FAILED, "invocation " + invocation
          + " gave up after " + MAX_ATTEMPTS + " attempts without a definite outcome"));
      return;
    }
    Pending pending = pending(invocation);
    if (pending != null && !pending.logged) {
      execute(attempt); // nothing to claim: a one-transaction invocation's record decides, or nothing is stored
      return;
    }
    log.claim(invocation, id, attempt.version()).whenComplete((stillRunning, err) -> guarded(invocation, () -> {
      if (err != null) {
        deliver(invocation, toReply(invocation, unwrap(err))); // stays running in the log; recovery retries
      } else if (stillRunning) {
        execute(attempt);
      } else {
        answerFromLog(invocation); // another frontend stored its outcome meanwhile
      }
    }));
  }

  private void execute(Attempt attempt) {
    String invocation = attempt.invocation();
    Pending pending = pending(invocation);
    OneTransactionOutcomes.Location one = pending == null ? null : pending.oneTransaction;
    dispatcher.execute(attempt.graph(), invocation, attempt.key(), attempt.args(), attempt.caller(),
        attempt.firstRun(), one == null ? null : one.requestHash()).whenComplete((outputs, err) -> guarded(invocation, () -> {
          if (err == null) {
            conclude(invocation, WireReply.ok(invocation, outputs));
            return;
          }
          Throwable cause = unwrap(err);
          if (!config.invocationLog() || !transientFailure(cause)) {
            conclude(invocation, toReply(invocation, cause));
          } else if (attempt.number() >= MAX_ATTEMPTS) {
            conclude(invocation, WireReply.error(invocation, WireReply.INVOCATION_FAILED, "invocation " + invocation
                + " gave up after " + attempt.number() + " attempts; the last failed with: " + cause.getMessage()));
          } else {
            retryLater(attempt, cause);
          }
        }));
  }

  /**
   * Errors after which running the invocation again may succeed: no answer from the database, the database
   * refusing work, or a graph version older than a function's deployment. Every other error is final.
   */
  private static boolean transientFailure(Throwable cause) {
    return cause instanceof OutcomeUnknownException || cause instanceof DatabaseException
        || cause instanceof FunctionFailedException f && Invocation.STALE_GRAPH.equals(f.errorType());
  }

  private void retryLater(Attempt attempt, Throwable cause) {
    long backoff = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS << Math.min(20, attempt.number() - 1));
    boolean stale = cause instanceof FunctionFailedException f && Invocation.STALE_GRAPH.equals(f.errorType());
    LOG.log(Level.DEBUG, () -> "frontend " + id + ": attempt " + attempt.number() + " of invocation "
        + attempt.invocation() + " failed (" + cause.getMessage() + "); retrying in " + backoff + " ms");
    maintenance.schedule(() -> guarded(attempt.invocation(), () -> {
      if (!stale) {
        claimAndRun(attempt.next(attempt.graph(), attempt.version()));
        return;
      }
      // The graph was registered again: the next attempt runs its newest version, which matches the functions.
      catalog.reload();
      GraphCatalog.Versioned newest = catalog.latest(attempt.graph().name()).orElseThrow(() ->
          new InvalidRequestException("graph '" + attempt.graph().name() + "' is no longer registered"));
      Attempt next = attempt.next(newest.graph(), newest.version());
      Pending pending = pending(attempt.invocation());
      if (pending != null && !pending.logged && !sameKeeping(attempt.graph(), newest.graph())) {
        // An unlogged invocation may take up a version kept another way only if nothing of it can have committed
        // (it wrote nothing, or its only attempt was refused as stale), and not one that needs the log entry that
        // a new invocation writes first.
        boolean nothingCommitted = attempt.graph().recordsNothing() || attempt.number() == 1;
        if (!nothingCommitted || logged(newest.graph())) {
          deliver(attempt.invocation(), WireReply.error(attempt.invocation(), WireReply.OUTCOME_UNKNOWN, "graph '"
              + attempt.graph().name() + "' was registered again while invocation " + attempt.invocation()
              + " ran; resending the same ID is safe"));
          return;
        }
        pending.oneTransaction = oneTransactionLocation(next);
      }
      claimAndRun(next);
    }), backoff, TimeUnit.MILLISECONDS);
  }

  /** Whether two versions of a graph keep their invocations alike (log, one record of the same function, or none). */
  private boolean sameKeeping(RegisteredGraph a, RegisteredGraph b) {
    return logged(a) == logged(b) && a.oneTransaction() == b.oneTransaction()
        && (!a.oneTransaction() || a.nodes().get(0).function().equals(b.nodes().get(0).function()));
  }

  /**
   * Ends an invocation with a final outcome: stores it unless another attempt stored one first, then tells every
   * waiting client the stored outcome. Without an invocation log the outcome goes to the clients directly; so does
   * the outcome of a graph that records nothing. A one-transaction invocation's success is its record; its errors
   * are stored by a compare-and-set on that record.
   */
  private void conclude(String invocation, WireReply outcome) {
    Pending pending = pending(invocation);
    if (!config.invocationLog() || pending != null && !pending.logged) {
      OneTransactionOutcomes.Location one = pending == null ? null : pending.oneTransaction;
      if (one == null || standsWithoutStoring(outcome)) {
        deliver(invocation, outcome);
        return;
      }
      oneTransactionOutcomes.storeFailure(one, invocation, outcome).whenComplete((stored, err) -> deliver(invocation,
          err == null ? stored : WireReply.error(invocation, WireReply.OUTCOME_UNKNOWN, "the outcome of invocation "
              + invocation + " could not be stored (" + unwrap(err).getMessage() + "); resending the same ID is safe")));
      return;
    }
    byte[] bytes = Json.bytes(outcome);
    if (bytes.length > SystemSchema.MAX_RESULT_BYTES) {
      outcome = WireReply.error(invocation, WireReply.INVOCATION_FAILED, "the result of invocation " + invocation
          + " is too large: " + bytes.length + " bytes encoded, and at most " + SystemSchema.MAX_RESULT_BYTES
          + " bytes can be stored as its outcome; return less to the sink");
      bytes = Json.bytes(outcome);
    }
    WireReply reply = outcome;
    String status = WireReply.OK.equals(reply.status()) ? InvocationLog.DONE : InvocationLog.FAILED;
    try {
      hooks.beforeStoringOutcome(invocation);
    } catch (RuntimeException e) {
      outcomeNotStored(invocation, e);
      return;
    }
    log.finish(invocation, status, bytes).whenComplete((stored, err) -> {
      if (err != null) {
        outcomeNotStored(invocation, unwrap(err));
        return;
      }
      concludedHere.put(invocation, System.nanoTime());
      if (stored) {
        deliver(invocation, reply);
      } else {
        answerFromLog(invocation); // another attempt ended it first: its outcome is the one
      }
    });
  }

  /**
   * Outcomes of a one-transaction invocation that need no record: success (the function's transaction recorded it),
   * a refused request (nothing ran), and an unknown outcome (the client resends).
   */
  private static boolean standsWithoutStoring(WireReply outcome) {
    return WireReply.OK.equals(outcome.status()) || WireReply.INVALID_REQUEST.equals(outcome.error())
        || WireReply.OUTCOME_UNKNOWN.equals(outcome.error());
  }

  /** The outcome could not be stored: the invocation stays running in the log and is attempted again later. */
  private void outcomeNotStored(String invocation, Throwable cause) {
    LOG.log(Level.WARNING, "frontend " + id + ": could not store the outcome of invocation " + invocation
        + "; it will be attempted again: " + cause.getMessage());
    deliver(invocation, WireReply.error(invocation, WireReply.OUTCOME_UNKNOWN, "the outcome of invocation "
        + invocation + " could not be stored (" + cause.getMessage() + "); it will be completed, and resending "
        + "the same ID returns its outcome"));
  }

  /** Tells the waiting clients the stored outcome of an invocation that ended (here or elsewhere). */
  private void answerFromLog(String invocation) {
    log.get(invocation).whenComplete((entry, err) -> {
      if (err == null && entry.isPresent() && !InvocationLog.RUNNING.equals(entry.get().status())) {
        deliver(invocation, storedReply(entry.get(), invocation));
      } else {
        deliver(invocation, WireReply.error(invocation, WireReply.OUTCOME_UNKNOWN, "the outcome of invocation "
            + invocation + " could not be read" + (err == null ? "" : ": " + unwrap(err).getMessage())
            + "; resending the same ID is safe"));
      }
    });
  }

  private static WireReply storedReply(InvocationLog.Entry e, String invocation) {
    return withId(Json.read(e.result(), WireReply.class, "logged result of invocation " + invocation), invocation);
  }

  /** Replies to every client waiting for an invocation and forgets it here. */
  private void deliver(String invocation, WireReply reply) {
    Pending pending = inFlight.get(invocation);
    if (pending == null) {
      return;
    }
    List<byte[]> waiters;
    synchronized (pending) {
      pending.reply = reply;
      waiters = List.copyOf(pending.waiters);
      pending.waiters.clear();
    }
    for (byte[] client : waiters) {
      reply(client, reply);
    }
    inFlight.remove(invocation, pending);
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
      oneTransactionOutcomes.find(invocation).whenComplete((found, findErr) -> {
        if (findErr != null) {
          reply(client, toReply(invocation, unwrap(findErr)));
        } else if (found.isPresent()) {
          reply(client, found.get());
        } else {
          reply(client, WireReply.error(invocation, WireReply.INVALID_REQUEST, "no invocation with ID " + invocation
              + " is known: it never started, it ran a graph that writes nothing (such outcomes are not kept), or it "
              + "ended more than " + config.retention() + " ago"));
        }
      });
    } else if (InvocationLog.RUNNING.equals(entry.get().status())) {
      reply(client, WireReply.running(invocation));
    } else {
      reply(client, storedReply(entry.get(), invocation));
    }
  }

  private static WireReply withId(WireReply r, String invocation) {
    return new WireReply(invocation, r.status(), r.outputs(), r.error(), r.function(), r.functionError(), r.message());
  }

  private static Throwable unwrap(Throwable e) {
    return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
  }

  static WireReply toReply(String invocation, Throwable e) {
    if (e instanceof FunctionFailedException f && Invocation.CONFLICTING_REQUEST.equals(f.errorType())) {
      return WireReply.error(invocation, WireReply.INVALID_REQUEST, f.errorMessage());
    }
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
    return WireReply.error(invocation, WireReply.INVOCATION_FAILED, "the frontend failed: " + e);
  }

  // ---------------------------------------------------------------- leases, recovery, retention

  private void renewLease() {
    try {
      leases.renew(config.leaseDuration());
    } catch (RuntimeException e) {
      if (running) { // after close, an interrupted call is expected
        LOG.log(Level.WARNING, "frontend " + id + ": lease renewal failed; retrying in " + config.heartbeatInterval()
            + ": " + e.getMessage());
      }
    }
  }

  /** Refreshes the catalog, takes over dead frontends' invocations and runs whatever is ours and not running. */
  private void recoverDeadFrontends() {
    try {
      catalog.reload();
      for (String dead : leases.expired()) {
        if (!dead.equals(id)) {
          // Invocations first, lease last: a takeover cut short leaves the lease for the next round to find.
          long moved = log.reassign(dead, id);
          hooks.duringTakeover(dead);
          if (leases.forget(dead) || moved > 0) {
            LOG.log(Level.INFO, "frontend " + id + ": took over " + moved + " running invocation(s) of dead frontend "
                + dead);
          }
        }
      }
      recover();
    } catch (RuntimeException e) {
      if (running) { // after close, an interrupted call is expected
        LOG.log(Level.WARNING, "frontend " + id + ": recovery failed; retrying in " + config.heartbeatInterval() + ": "
            + e.getMessage());
      }
    }
  }

  /** Runs every invocation logged as ours that is not running here (taken over, or left by a failed attempt). */
  private void recover() {
    long now = System.nanoTime();
    long forgetAfter = 4 * config.heartbeatInterval().toNanos();
    concludedHere.values().removeIf(at -> now - at > forgetAfter);
    // Only invocations older than two heartbeats: younger ones of this frontend are running here (or ended while
    // the list was read), and a dead frontend's wait a heartbeat or two longer.
    for (InvocationLog.Entry e : log.running(id, config.heartbeatInterval().multipliedBy(2))) {
      if (concludedHere.containsKey(e.invocationId())) {
        continue; // its outcome was stored here after the list was read
      }
      WireRequest request = Json.read(e.request(), WireRequest.class, "logged request of invocation " + e.invocationId());
      JsonNode key = request.key() == null || request.key().isNull() ? null : request.key();
      Pending pending = new Pending(e.graph(), key, normalize(request.args()));
      pending.logged = true;
      if (inFlight.putIfAbsent(e.invocationId(), pending) != null) {
        continue;
      }
      guarded(e.invocationId(), () -> {
        RegisteredGraph graph = catalog.graph(e.graph(), e.graphVersion()).orElseThrow(() ->
            new InvalidRequestException("graph '" + e.graph() + "' version " + e.graphVersion()
                + " is no longer registered"));
        LOG.log(Level.INFO, "frontend " + id + ": recovering invocation " + e.invocationId() + " of graph "
            + e.graph() + " (attempt " + (e.attempts() + 1) + ")");
        hooks.recovering(e.invocationId());
        claimAndRun(new Attempt(e.invocationId(), graph, e.graphVersion(), key, normalize(request.args()),
            request.caller(), e.attempts() + 1, false));
      });
    }
  }

  private void cleanUp() {
    try {
      hooks.beforeCleanup();
      long deleted = deleteExpiredRecords();
      if (deleted > 0) {
        LOG.log(Level.DEBUG, "frontend " + id + ": deleted " + deleted + " old invocation record(s)");
      }
    } catch (RuntimeException e) {
      if (running) { // after close, an interrupted call is expected
        LOG.log(Level.WARNING, "frontend " + id + ": retention cleanup failed: " + e.getMessage());
      }
    }
  }

  /**
   * Runs one retention pass now (normally scheduled every {@link FrontendConfig#cleanupInterval()}): deletes ended
   * invocations and recorded outputs older than the retention by the database's clock, never those of a running
   * invocation.
   */
  public long deleteExpiredRecords() {
    return log.deleteOlderThan(config.retention());
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
    catalogThread.shutdownNow();
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
