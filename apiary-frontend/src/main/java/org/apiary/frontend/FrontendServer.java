package org.apiary.frontend;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apiary.InvalidRequestException;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.wire.WireReply;
import org.apiary.internal.wire.WireRequest;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * A frontend: serves graph invocations from clients over ZeroMQ. It owns the sockets and the request intake; the
 * {@link InvocationCoordinator} runs each invocation's exactly-once lifecycle with the {@link Dispatcher}, and
 * {@link FrontendMaintenance} holds the lease, takes over dead frontends' invocations and applies the retention. A
 * frontend keeps no state that another frontend would need: any frontend serves any graph, any retry and any result
 * request.
 *
 * <p>Threads: one owns the ZeroMQ sockets; executions continue on the database client's callback thread; a small
 * scheduled pool runs the maintenance duties and retries; one loads the catalog for graph names not known yet.
 */
public final class FrontendServer implements AutoCloseable {
  private static final Logger LOG = System.getLogger(FrontendServer.class.getName());
  private static final AtomicInteger INSTANCES = new AtomicInteger();

  private final FrontendConfig config;
  private final String id = UUID.randomUUID().toString();
  private final GraphCatalog catalog;
  private final InvocationCoordinator coordinator;
  private final FrontendMaintenance maintenance;
  /** Maintenance duties and retries; each duty gets a thread, so a slow one never delays the lease. */
  private final ScheduledExecutorService scheduler;
  private final ZContext zmq = new ZContext();
  /** Wakes the socket thread when another thread queued a reply; sent without blocking, under its own lock. */
  private final ZMQ.Socket wakeUps;
  /** Replies waiting for the socket thread. Threads that finish work (VoltDB's callback threads) never block here. */
  private final ConcurrentLinkedQueue<ZMsg> outbox = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean wakeUpPending = new AtomicBoolean();
  private final String endpoint;
  private final Thread ioThread;
  private volatile boolean running = true;
  /** Reads the catalog for names not known yet, so the socket thread never waits for the database. */
  private final ExecutorService catalogThread = Executors.newSingleThreadExecutor(r -> daemon(r,
      "apiary-frontend-catalog"));
  private final List<Runnable> waitingForCatalog = new ArrayList<>();
  private boolean catalogLoadScheduled;
  private long lastCatalogLoadNanos = System.nanoTime() - TimeUnit.SECONDS.toNanos(1);

  private FrontendServer(ApiaryDatabase db, FrontendConfig config, FrontendHooks hooks) {
    this.config = config;
    this.catalog = new GraphCatalog(db, Duration.ofSeconds(1));
    this.scheduler = Executors.newScheduledThreadPool(4, r -> daemon(r, "apiary-frontend-maintenance"));
    Dispatcher dispatcher = new Dispatcher(db, catalog, (graph, invocation, function, result) -> {
      hooks.afterFunction(invocation, function);
      if (function.equals(config.crashAfterFunction())) {
        System.err.println("frontend " + id + ": fault injection: halting after function '" + function
            + "' in graph '" + graph + "', invocation " + invocation);
        Runtime.getRuntime().halt(137);
      }
    });
    this.coordinator = new InvocationCoordinator(db, config, id, catalog, dispatcher, hooks, this::reply, scheduler);
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
    this.maintenance = new FrontendMaintenance(db, config, id, endpoint, catalog, coordinator, hooks, scheduler);
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
      server.maintenance.start();
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
      request = WireRequest.fromBytes(frame);
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
        case WireRequest.RESULT -> coordinator.result(client, request.id());
        default -> reply(client, WireReply.error(request.id(), WireReply.INVALID_REQUEST, "unknown request type '"
            + request.type() + "'; expected '" + WireRequest.INVOKE + "' or '" + WireRequest.RESULT + "'"));
      }
    } catch (RuntimeException e) {
      reply(client, InvocationCoordinator.toReply(request.id(), e));
    }
  }

  /**
   * Queues a reply for the socket thread. Never blocks: it runs on VoltDB's callback threads, and a callback thread
   * waiting for the socket thread (which may itself wait for the database) would stop every answer.
   */
  private void reply(byte[] client, WireReply reply) {
    ZMsg m = new ZMsg();
    m.add(client);
    m.add(reply.toBytes());
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

  // ---------------------------------------------------------------- request intake

  /** Looks the graph up (off this thread if this frontend does not know it yet) and hands the call on. */
  private void invoke(byte[] client, WireRequest request, byte[] frame) {
    if (request.graph() == null) {
      throw new InvalidRequestException("an invoke request needs a graph name");
    }
    Optional<GraphCatalog.Versioned> known = catalog.known(request.graph());
    if (known.isEmpty()) { // perhaps registered since the last load: look again, off this thread
      afterCatalogReload(client, request, () -> coordinator.invoke(client, request, frame, catalog.known(request.graph())));
      return;
    }
    coordinator.invoke(client, request, frame, known);
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
        reply(client, InvocationCoordinator.toReply(request.id(), e));
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

  /**
   * Runs one retention pass now (normally scheduled every {@link FrontendConfig#cleanupInterval()}): deletes ended
   * invocations and recorded outputs older than the retention by the database's clock, never those of a running
   * invocation.
   */
  public long deleteExpiredRecords() {
    return maintenance.deleteExpiredRecords();
  }

  /** How many invocations this frontend is running. */
  public int inFlight() {
    return coordinator.inFlight();
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
    maintenance.stop();
    scheduler.shutdownNow();
    catalogThread.shutdownNow();
    try {
      ioThread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      if (config.invocationLog()) {
        maintenance.close();
      }
    } finally {
      zmq.close();
    }
  }
}
