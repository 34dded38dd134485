package org.apiary.frontend;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import com.fasterxml.jackson.databind.JsonNode;
import org.apiary.AccessPolicy;
import org.apiary.InvalidRequestException;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.wire.SocketLoop;
import org.apiary.internal.wire.WireGuard;
import org.apiary.internal.wire.WireReply;
import org.apiary.internal.wire.WireRequest;
import org.apiary.runtime.SystemSchema;
import org.zeromq.SocketType;
import org.zeromq.ZMQ;

/**
 * A frontend: serves graph invocations from clients over ZeroMQ. It owns the sockets and the request intake; the
 * {@link InvocationCoordinator} runs each invocation's exactly-once lifecycle with the {@link Dispatcher}, and
 * {@link FrontendMaintenance} holds the lease, takes over dead frontends' invocations and applies the retention. A
 * frontend keeps no state that another frontend would need: any frontend serves any graph, any retry and any result
 * request.
 *
 * <p>Threads: a {@link SocketLoop} owns the ZeroMQ socket; executions continue on the database client's callback
 * thread; a small scheduled pool runs the maintenance duties and retries; one loads the catalog for graph names not
 * known yet.
 */
public final class FrontendServer implements AutoCloseable {
  private static final Logger LOG = System.getLogger(FrontendServer.class.getName());

  /** Replies queued for one client connection before more are dropped (see the constructor). */
  static final int MAX_QUEUED_REPLIES_PER_CLIENT = 100_000;

  private final ApiaryDatabase db;
  private final FrontendConfig config;
  private final FrontendHooks hooks;
  private final String id = UUID.randomUUID().toString();
  private final GraphCatalog catalog;
  /** The live API keys, if this frontend requires credentials; else {@code null}. */
  private final CredentialCheck credentials;
  private final InvocationCoordinator coordinator;
  private final Dispatcher dispatcher;
  private final FrontendMaintenance maintenance;
  /** This frontend's lease by its own clock, renewed by the maintenance and read before calls to the outside. */
  private final LeaseTerm lease;
  /** Durable queues (issue 42): enqueue, and the claiming of waiting items. */
  private final QueueRunner queues;
  /** Schedules (issue 42): due ticks put on their queues. */
  private final ScheduleRunner schedules;
  /** Maintenance duties and retries; each duty gets a thread, so a slow one never delays the lease. */
  private final ScheduledExecutorService scheduler;
  /** Owns the ROUTER socket clients connect to; replies from other threads reach it as tasks. */
  private final SocketLoop sockets = new SocketLoop("apiary-frontend-io");
  private final ZMQ.Socket router;
  /** The limits on the router's connections, enforced in JeroMQ's I/O thread. */
  private final WireGuard guard;
  /** The refusals last summarized in the log ({@link #logWireRefusals}); the summarizing thread only. */
  private Map<WireGuard.Refusal, Long> loggedRefusals;
  /** Replies queued by the socket thread's current round, per client connection (identity); socket thread only. */
  private final Map<ByteBuffer, List<byte[]>> queuedReplies = new LinkedHashMap<>();
  private final String endpoint;
  private volatile boolean running = true;
  /** Completes once this frontend has stopped serving, by {@link #close} or because its socket thread failed. */
  private final CompletableFuture<Void> stopped = new CompletableFuture<>();
  private volatile Throwable failure;
  /** Reads the catalog for names not known yet, so the socket thread never waits for the database. */
  private final ExecutorService catalogThread = Executors.newSingleThreadExecutor(r -> daemon(r,
      "apiary-frontend-catalog"));
  private final List<Runnable> waitingForCatalog = new ArrayList<>();
  /** Most keys and addresses whose refusals are tracked at once; refusals of others are counted, not recorded. */
  static final int MAX_REFUSAL_BUCKETS = 10_000;
  private final RefusalLimiter refusals = new RefusalLimiter(REFUSALS_BURST, REFUSALS_PER_SECOND,
      MAX_REFUSAL_BUCKETS);
  /** Refusals waiting to be recorded before more are only logged. */
  static final int MAX_QUEUED_DENIALS = 10_000;
  /** Records refusals in provenance, so the socket thread never waits for the database client. */
  private final java.util.concurrent.ThreadPoolExecutor denialThread = new java.util.concurrent.ThreadPoolExecutor(
      1, 1, 0, TimeUnit.MILLISECONDS, new java.util.concurrent.ArrayBlockingQueue<>(MAX_QUEUED_DENIALS),
      r -> daemon(r, "apiary-frontend-denials"));
  private boolean catalogLoadScheduled;
  /** This frontend's meters ({@link FrontendMetrics#OFF} unless {@link FrontendConfig#metrics()} is enabled). */
  private final FrontendMetrics metrics;
  /** Serves /metrics, /health and /ready, or {@code null}; started last, stopped first. */
  private volatile org.apiary.internal.http.HttpEndpoint http;
  private long lastCatalogLoadNanos = System.nanoTime() - TimeUnit.SECONDS.toNanos(1);

  private FrontendServer(ApiaryDatabase db, FrontendConfig config, FrontendHooks hooks) {
    this.db = db;
    this.config = config;
    this.hooks = hooks;
    this.catalog = new GraphCatalog(db, Duration.ofSeconds(1));
    this.credentials = config.credentialsRequired() ? new CredentialCheck(db) : null;
    this.metrics = config.metrics().enabled() ? FrontendMetrics.create() : FrontendMetrics.OFF;
    this.scheduler = Executors.newScheduledThreadPool(4, r -> daemon(r, "apiary-frontend-maintenance"));
    // A function answered before its completion was attached would complete on the thread that launched it: when
    // that is the socket thread, intake would wait for the routing and the hooks, so such a completion moves off it.
    this.dispatcher = new Dispatcher(db, catalog,
        (graph, invocation, function, result) -> hooks.afterFunction(graph, invocation, function),
        task -> {
          if (sockets.inLoop()) {
            scheduler.execute(task);
          } else {
            task.run();
          }
        }, metrics);
    this.lease = new LeaseTerm(config.leaseDuration());
    this.coordinator = new InvocationCoordinator(db, config, id, catalog, this.dispatcher, hooks, this::reply, scheduler,
        metrics, lease);
    this.router = sockets.socket(SocketType.ROUTER);
    // A ROUTER drops a reply when its client's queue is full (ZeroMQ's default is 1,000 messages), and the client
    // then waits out its timeout: keep room for every call a client may have open (an overloaded frontend answers
    // thousands of calls at once), bounded so a client that never reads cannot take unbounded memory.
    router.setSndHWM(MAX_QUEUED_REPLIES_PER_CLIENT);
    // ZeroMQ drops a peer that sends a frame above this hard cap; frames between the configured limit and the cap
    // are read whole and get a "too large" reply, so a client that sent one learns why and keeps its connection.
    router.setMaxMsgSize(config.maxFrameBytes());
    this.guard = WireGuard.install(router, wireLimits(config), hooks::receivingFrame);
    this.loggedRefusals = guard.refusals();
    String bound = config.port() == 0 ? "tcp://" + config.bindAddress() + ":*" : "tcp://" + config.bindAddress() + ":" + config.port();
    router.bind(bound);
    String last = router.getLastEndpoint();
    // What the lease row advertises: where other hosts reach this frontend (the bound port, whatever was picked).
    this.endpoint = config.advertisedAddress() == null ? last
        : "tcp://" + config.advertisedAddress() + last.substring(last.lastIndexOf(':'));
    sockets.register(router, this::receiveAll);
    sockets.onFlush(this::sendQueuedReplies);
    this.queues = new QueueRunner(db, config, id, catalog, coordinator, hooks, scheduler);
    coordinator.queues(queues);
    this.schedules = new ScheduleRunner(db, config, id, scheduler);
    dispatcher.enqueuer(queues::enqueueFromFunction);
    this.maintenance = new FrontendMaintenance(db, config, id, endpoint, catalog, coordinator, hooks, scheduler,
        metrics, queues, lease);
    metrics.bind(this, guard, FrontendServer::leaseRemainingSeconds, config.invocationLog());
  }

  /** The guard's limits: the configured ones as they apply in this process (see {@link FrontendConfig.Wire}). */
  static WireGuard.Limits wireLimits(FrontendConfig config) {
    FrontendConfig.Wire wire = config.wire();
    long perConnection = Math.max(wire.maxUnfinishedBytesPerConnection(), config.maxFrameBytes());
    return new WireGuard.Limits(config.effectiveMaxConnections(fileDescriptorLimit()),
        wire.maxConnectionsPerAddress(), perConnection, Math.max(perConnection, wire.maxUnfinishedBytes()),
        wire.timeout());
  }

  /** The process's file-descriptor limit, or a conservative 4,096 where the platform does not tell it. */
  static long fileDescriptorLimit() {
    if (java.lang.management.ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.UnixOperatingSystemMXBean unix) {
      return unix.getMaxFileDescriptorCount();
    }
    return 4096;
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

  /**
   * Starts a frontend whose steps call {@code hooks}: the seam through which Apiary's drill harness and tests inject
   * faults (see {@link FrontendHooks}). Production frontends use {@link #start(ApiaryDatabase, FrontendConfig)}.
   */
  public static FrontendServer start(ApiaryDatabase db, FrontendConfig config, FrontendHooks hooks) {
    FrontendServer server = new FrontendServer(db, config, hooks);
    if (config.invocationLog()) {
      server.maintenance.start();
      server.queues.start();
      server.schedules.start();
    }
    if (server.credentials != null) {
      server.scheduler.scheduleWithFixedDelay(server::reloadCredentials, 1, 1, TimeUnit.SECONDS);
    }
    server.scheduler.scheduleWithFixedDelay(server::logWireRefusals, WIRE_LOG_SECONDS, WIRE_LOG_SECONDS,
        TimeUnit.SECONDS);
    // Handshakes and unfinished messages are timed here: JeroMQ stops timing a handshake once the greeting is read,
    // and counts a peer's answers to heartbeats as life while its message stays unfinished (see WireGuard).
    long sweep = Math.max(50, Math.min(1_000, config.wire().timeout().toMillis() / 4));
    server.scheduler.scheduleWithFixedDelay(server::closeStalledConnections, sweep,
        sweep, TimeUnit.MILLISECONDS);
    server.sockets.start(server::socketThreadFailed);
    if (config.metrics().enabled()) {
      server.startHttp();
    }
    LOG.log(Level.INFO, () -> "frontend " + server.id + " on " + server.endpoint + ": wire limits " + server.guard.limits());
    return server;
  }

  /** Threads that answer the monitoring endpoint's requests. */
  static final int HTTP_THREADS = 2;

  private void startHttp() {
    FrontendConfig.Metrics m = config.metrics();
    try {
      http = org.apiary.internal.http.HttpEndpoint.start(m.bindAddress(), m.port(), Map.of(
          "/metrics", () -> new org.apiary.internal.http.HttpEndpoint.Response(200,
              "text/plain; version=0.0.4; charset=utf-8",
              metrics.scrape().getBytes(java.nio.charset.StandardCharsets.UTF_8)),
          "/health", () -> org.apiary.internal.http.HttpEndpoint.Response.text(200, "up\n"),
          "/ready", () -> {
            String why = notReady();
            return why == null ? org.apiary.internal.http.HttpEndpoint.Response.text(200, "ready\n")
                : org.apiary.internal.http.HttpEndpoint.Response.text(503, "not ready: " + why + "\n");
          }), "apiary-frontend", HTTP_THREADS);
    } catch (java.io.IOException | RuntimeException e) {
      close();
      throw new IllegalStateException("frontend " + id + ": could not serve its metrics on " + m.bindAddress() + ":"
          + m.port() + ": " + e.getMessage(), e);
    }
    LOG.log(Level.INFO, () -> "frontend " + id + ": metrics, health and readiness at " + http.url());
  }

  /**
   * The base URL of this frontend's monitoring endpoint ({@code /metrics}, {@code /health}, {@code /ready}), e.g.
   * {@code http://127.0.0.1:9464}, if {@link FrontendConfig#metrics()} enabled it.
   */
  public Optional<String> metricsUrl() {
    org.apiary.internal.http.HttpEndpoint h = http;
    return h == null ? Optional.empty() : Optional.of(h.url());
  }

  /**
   * Adds the provenance capture's meters ({@code apiary_provenance_*}) to this frontend's endpoint, from the backlog
   * reports the database servers write under {@code spillRoot} (their provenance spill directory): the capture runs
   * inside those servers, so these files are how their numbers reach a frontend on the same machine, as in
   * {@code apiary start}. Does nothing without an endpoint.
   */
  public void reportProvenanceBacklog(java.nio.file.Path spillRoot) {
    metrics.bindProvenanceBacklog(() -> org.apiary.runtime.provenance.BacklogReport.readAll(spillRoot));
  }

  /**
   * Why this frontend should not get traffic now, or {@code null} if it should: it is stopping, its lease is not held,
   * or the database did not answer (its last lease renewal failed; without an invocation log, and so without a
   * lease, its client has no connection to the database).
   */
  String notReady() {
    if (!running) {
      return "the frontend is stopping";
    }
    if (config.invocationLog()) {
      return maintenance.notReady();
    }
    return db.client().getConnectedHostList().isEmpty() ? "the database is not reachable: no connection to any of "
        + "its hosts" : null;
  }

  private double leaseRemainingSeconds() {
    return maintenance.leaseRemainingSeconds();
  }

  /** How often refusals on the wire are summarized in the log, in one line, if there were any. */
  static final long WIRE_LOG_SECONDS = 10;

  /**
   * What the wire refused so far and what it holds now: connections refused or closed by reason (a connection limit,
   * an unfinished message too large or too slow, a stalled frame, an idle connection), open connections, and bytes
   * held in unfinished messages.
   */
  public WireStats wireStats() {
    Map<String, Long> refusals = new java.util.TreeMap<>();
    guard.refusals().forEach((reason, n) -> refusals.put(reason.name().toLowerCase(java.util.Locale.ROOT), n));
    return new WireStats(guard.connections(), guard.unfinishedBytes(), refusals);
  }

  /** The guard's sweep; a failure is logged and the next sweep still runs (an executor drops a task that throws). */
  private void closeStalledConnections() {
    try {
      guard.closeStalled(System.nanoTime());
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "frontend " + id + ": sweeping stalled connections failed; the next sweep runs as "
          + "planned", e);
    }
  }

  /** One log line for the refusals since the last one, so a flood of bad connections never floods the log. */
  private void logWireRefusals() {
    logRefusedCalls();
    Map<WireGuard.Refusal, Long> now = guard.refusals();
    StringBuilder line = new StringBuilder();
    now.forEach((reason, n) -> {
      long since = n - loggedRefusals.getOrDefault(reason, 0L);
      if (since > 0) {
        line.append(line.length() == 0 ? "" : ", ").append(reason.name().toLowerCase(java.util.Locale.ROOT))
            .append('=').append(since);
      }
    });
    loggedRefusals = now;
    if (line.length() > 0) {
      LOG.log(Level.WARNING, "frontend " + id + ": connections refused or closed on the wire in the last "
          + WIRE_LOG_SECONDS + " s: " + line + "; " + guard.connections() + " open");
    }
  }

  /** One log line for the calls refused since the last one, with what was not recorded one by one. */
  private void logRefusedCalls() {
    RefusalLimiter.Summary s = refusals.drain(System.nanoTime());
    if (!s.isEmpty()) {
      // WARNING only when refusals went unrecorded; INFO when the line only adds up the ones logged one by one.
      LOG.log(s.recorded() < s.refused() ? Level.WARNING : Level.INFO, "frontend " + id + ": calls refused in the last " + WIRE_LOG_SECONDS + " s: "
          + s.refused() + " by access policies (" + s.recorded() + " recorded in provenance one by one, the rest only "
          + "counted: by caller " + s.unrecordedByKey() + ", by address " + s.unrecordedByAddress() + "), "
          + s.unauthenticated() + " without a valid API key");
    }
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

  private void reloadCredentials() {
    try {
      credentials.reload();
    } catch (RuntimeException e) {
      if (running) {
        LOG.log(Level.WARNING, "frontend " + id + ": reading the credentials failed; retrying in 1 s: "
            + e.getMessage());
      }
    }
  }

  /**
   * Handles the requests waiting on the socket, about {@code max} at most (a message's frames are read whole);
   * returns how many it read. A message holds one request per frame after the client's identity.
   */
  private int receiveAll(ZMQ.Socket socket, int max) {
    int read = 0;
    while (read < max) {
      // zmq.Msg rather than ZMsg: its metadata carries the connection's remote address (for refusal limits).
      zmq.Msg identity = socket.recvMsg(ZMQ.DONTWAIT);
      if (identity == null) {
        break;
      }
      byte[] client = identity.data();
      int frames = 0;
      String address = null;
      for (boolean more = identity.hasMore(); more; ) {
        zmq.Msg frame = socket.recvMsg(ZMQ.DONTWAIT); // a message's frames arrive together
        if (frame == null) {
          break;
        }
        more = frame.hasMore();
        frames++;
        if (address == null) {
          address = remoteAddress(frame);
        }
        receive(client, address, frame.data());
      }
      read += Math.max(1, frames);
    }
    return read;
  }

  /** The remote IP address JeroMQ noted on a received frame, without the port; "unknown" if none. */
  private static String remoteAddress(zmq.Msg frame) {
    zmq.io.Metadata metadata = frame.getMetadata();
    String peer = metadata == null ? null : metadata.get(zmq.io.Metadata.PEER_ADDRESS);
    if (peer == null || peer.isEmpty()) {
      return "unknown";
    }
    int port = peer.lastIndexOf(':');
    return port > 0 ? peer.substring(0, port) : peer;
  }

  /**
   * The socket thread failed, or the loop found JeroMQ's I/O thread dead (logged by the loop): stop visibly, so other
   * frontends take over what ran here. The process that runs the frontend learns it through {@link #stopped()} and
   * {@link #failure()} (the command line then exits with a non-zero status).
   */
  private void socketThreadFailed(Throwable e) {
    failure = e;
    LOG.log(Level.ERROR, "frontend " + id + ": the socket thread stopped; this frontend answers no one and "
        + "releases its lease");
    Thread stop = new Thread(this::close, "apiary-frontend-stop");
    stop.setDaemon(true);
    stop.start();
  }

  private void receive(byte[] client, String address, byte[] frame) {
    if (frame.length > config.maxRequestBytes()) {
      metrics.oversizedRequest();
      // Up to the socket's hard cap (FrontendConfig.maxFrameBytes); the connection stays usable.
      reply(client, WireReply.error(null, WireReply.INVALID_REQUEST, "request too large: a request of "
          + frame.length + " bytes exceeds this frontend's limit of " + config.maxRequestBytes() + " bytes"));
      return;
    }
    WireRequest request;
    try {
      request = WireRequest.fromBytes(frame);
      // A result request may name another caller's invocation as IDENTITY/ID (admins; see Credentials.invocationId).
      int maxId = request != null && (WireRequest.RESULT.equals(request.type())
          || WireRequest.CANCEL.equals(request.type())) ? WireRequest.MAX_QUALIFIED_ID_LENGTH
          : WireRequest.MAX_ID_LENGTH;
      if (request == null || request.type() == null || request.id() == null || request.id().isEmpty()
          || request.id().length() > maxId) {
        throw new IllegalArgumentException("a request needs a type and an invocation ID of 1 to " + maxId
            + " characters");
      }
      if (request.expires() != null && (request.expires() < 0 || request.expires() > MAX_EXPIRES)) {
        // Checked before any arithmetic on it: Long.MIN_VALUE overflowed the lateness check, and the call ran.
        throw new IllegalArgumentException("field '" + WireRequest.EXPIRES_FIELD + "' is milliseconds since the epoch "
            + "from 0 to " + MAX_EXPIRES + " (the end of year 9999), not " + request.expires());
      }
      if (request.caller() != null && request.caller().length() > WireRequest.MAX_CALLER_LENGTH) {
        throw new IllegalArgumentException("a caller has at most " + WireRequest.MAX_CALLER_LENGTH
            + " characters, not " + request.caller().length());
      }
    } catch (IllegalArgumentException e) {
      metrics.malformedRequest();
      reply(client, WireReply.error(null, WireReply.INVALID_REQUEST, "malformed request: " + e.getMessage()));
      return;
    }
    hooks.receivedRequest(request.id());
    if (request.expires() != null && request.starts()) {
      long late = System.currentTimeMillis() - request.expires();
      if (late > config.clockSkewAllowance().toMillis()) {
        String stale = request.id();
        LOG.log(Level.DEBUG, () -> "frontend " + id + ": not starting invocation " + stale + ", which arrived "
            + late + " ms after its client stopped waiting");
        reply(client, WireReply.error(request.id(), WireReply.EXPIRED, "invocation " + request.id() + " reached "
            + "frontend " + id + " " + late + " ms after its expiry (" + request.expires() + " ms since the epoch by "
            + "the client's clock), more than the " + config.clockSkewAllowance().toMillis() + " ms of clock skew it "
            + "allows; it was not started here"));
        return;
      }
    }
    String caller = request.caller();
    Set<String> roles = Set.of(); // a caller without credentials has no roles
    Credentials.Parsed key = null; // the key the caller presented, which the database checks again for a denial
    if (credentials != null) {
      CredentialCheck.Verdict verdict = credentials.verify(request.credential());
      if (!verdict.accepted()) {
        refusals.unauthenticated();
        reply(client, WireReply.error(request.id(), WireReply.UNAUTHENTICATED, verdict.refusal()));
        return;
      }
      caller = verdict.identity();
      roles = verdict.roles();
      key = Credentials.parse(request.credential()).orElseThrow();
    }
    String rolesText = roles.isEmpty() ? null : String.join(",", new java.util.TreeSet<>(roles));
    if (request.credential() != null || !java.util.Objects.equals(caller, request.caller())
        || !java.util.Objects.equals(rolesText, request.roles())) {
      // What is logged and recorded: the established caller and roles (never what a client claims), never the secret.
      request = request.asStored(caller, rolesText);
      WireRequest.TraceContext trace = WireRequest.traceContext(frame); // kept with the invocation (issue 43)
      frame = WireRequest.withTraceContext(request.toBytes(), trace.validTraceparent(), trace.tracestate());
    }
    try {
      switch (request.type()) {
        case WireRequest.INVOKE, WireRequest.START -> invoke(client, address, request, frame, roles, key);
        case WireRequest.RESULT -> coordinator.result(client, request.id(), caller, roles);
        case WireRequest.CANCEL -> coordinator.cancel(client, request.id(), caller, roles, request.reason());
        case WireRequest.ENQUEUE -> enqueue(client, address, request, roles, key);
        default -> reply(client, WireReply.error(request.id(), WireReply.INVALID_REQUEST, "unknown request type '"
            + request.type() + "'; expected '" + WireRequest.INVOKE + "', '" + WireRequest.START + "', '"
            + WireRequest.RESULT + "', '" + WireRequest.CANCEL + "' or '" + WireRequest.ENQUEUE + "'"));
      }
    } catch (RuntimeException e) {
      reply(client, InvocationCoordinator.toReply(request.id(), e));
    }
  }

  /**
   * Sends a reply, from the socket thread at once, from any other thread through the socket loop. Never blocks: it
   * runs on VoltDB's callback threads, and a callback thread waiting for the socket thread (which may itself wait
   * for the database) would stop every answer.
   */
  private void reply(byte[] client, WireReply reply) {
    byte[] frame = reply.toBytes();
    if (sockets.inLoop()) {
      send(client, frame);
    } else {
      sockets.execute(() -> send(client, frame));
    }
  }

  /** Queues a reply for the round's flush ({@link #sendQueuedReplies}). Socket thread only. */
  private void send(byte[] client, byte[] frame) {
    queuedReplies.computeIfAbsent(ByteBuffer.wrap(client), c -> new ArrayList<>()).add(frame);
  }

  /** Sends the replies the round queued, each client's as few messages as {@link SocketLoop#sendBatched} makes. */
  private void sendQueuedReplies() {
    if (queuedReplies.isEmpty()) {
      return;
    }
    // A ROUTER drops what it cannot route (a client gone) rather than block; the client then times out and resends.
    queuedReplies.forEach((client, frames) -> SocketLoop.sendBatched(router, client.array(), frames));
    queuedReplies.clear();
  }

  // ---------------------------------------------------------------- request intake

  /**
   * Looks the graph up (off this thread if this frontend does not know it yet), checks its access policy and hands
   * the call on.
   */
  private void invoke(byte[] client, String address, WireRequest request, byte[] frame, Set<String> roles,
                      Credentials.Parsed key) {
    if (request.graph() == null) {
      throw new InvalidRequestException("an invoke request needs a graph name");
    }
    if (request.purpose() != null && !AccessPolicy.validName(request.purpose())) {
      throw new InvalidRequestException("a purpose is 1 to 64 letters, digits, '_', '.', ':' or '-'");
    }
    if (coordinator.inFlight() >= config.maxInFlight()) {
      reply(client, WireReply.error(request.id(), WireReply.OVERLOADED, "frontend " + id + " has "
          + config.maxInFlight() + " invocations in flight, its limit; nothing ran for invocation " + request.id()
          + "; retry after " + WireReply.OVERLOADED_RETRY_AFTER_MS + " ms"));
      return;
    }
    long held = coordinator.inFlightBytes();
    if (held > 0 && held + frame.length > config.maxInFlightBytes()) {
      reply(client, WireReply.error(request.id(), WireReply.OVERLOADED, "frontend " + id + " holds " + held
          + " bytes of requests in running invocations; this one's " + frame.length + " bytes would pass its limit "
          + "of " + config.maxInFlightBytes() + " bytes; nothing ran for invocation " + request.id() + "; retry after "
          + WireReply.OVERLOADED_RETRY_AFTER_MS + " ms"));
      return;
    }
    Optional<GraphCatalog.Versioned> known = catalog.known(request.graph());
    if (known.isEmpty()) { // perhaps registered since the last load: look again, off this thread
      afterCatalogReload(client, request, () -> {
        Optional<GraphCatalog.Versioned> found = catalog.known(request.graph());
        if (found.isEmpty()) {
          metrics.unknownGraph().refused(WireReply.INVALID_REQUEST); // one series for every unknown name
        }
        if (found.isEmpty() && credentials != null && roles.contains(Credentials.ADMIN_ROLE)) {
          // Only an admin key, which may call every graph, is told which exist; others only that this one does not.
          throw new InvalidRequestException("unknown graph '" + request.graph() + "'; registered graphs are "
              + catalog.graphNames());
        }
        if (allowed(client, address, request, found, roles, key)) {
          coordinator.invoke(client, request, frame, found);
        }
      });
      return;
    }
    if (allowed(client, address, request, known, roles, key)) {
      coordinator.invoke(client, request, frame, known);
    }
  }

  /**
   * Puts a call on a durable queue (issue 42), after the checks an invoke gets (graph known, access policy, key and
   * argument types): the item runs later, on whichever frontend claims it, without these checks again.
   */
  private void enqueue(byte[] client, String address, WireRequest request, Set<String> roles,
                       Credentials.Parsed key) {
    if (request.graph() == null) {
      throw new InvalidRequestException("an enqueue request needs a graph name");
    }
    if (request.purpose() != null && !AccessPolicy.validName(request.purpose())) {
      throw new InvalidRequestException("a purpose is 1 to 64 letters, digits, '_', '.', ':' or '-'");
    }
    Runnable checkAndEnqueue = () -> {
      Optional<GraphCatalog.Versioned> found = catalog.known(request.graph());
      if (found.isEmpty()) {
        throw new InvalidRequestException("unknown graph '" + request.graph() + "'; nothing was enqueued");
      }
      if (!allowed(client, address, request, found, roles, key)) {
        return;
      }
      JsonNode partitionKey = request.key() == null || request.key().isNull() ? null : request.key();
      List<JsonNode> args = request.args() == null ? List.of() : request.args();
      Dispatcher.checkRequest(found.get().graph(), partitionKey, args);
      long hash = OneTransactionOutcomes.requestHash(request.graph(), partitionKey, args,
          config.credentialsRequired() ? request.caller() : null);
      queues.enqueue(request, hash, r -> reply(client, r));
    };
    if (catalog.known(request.graph()).isEmpty()) {
      afterCatalogReload(client, request, checkAndEnqueue);
    } else {
      checkAndEnqueue.run();
    }
  }

  /**
   * Checks the call against its graph's access policy and its functions' (the newest version's). A refused call is answered at once
   * with {@link WireReply#FORBIDDEN}, runs nothing, and is recorded in provenance ({@code DeniedCalls}) through the
   * database's {@code CheckAndRecordDenial} procedure, which checks the presented {@code key} ({@code null} where no
   * credentials are required) and the graph version's policy again and hands the row to the server's provenance
   * spooler: the one path by which rows reach the sink, and one this frontend's database user cannot use to record a
   * refusal that no check made. An unknown graph is left to the coordinator, which refuses it as before.
   */
  private boolean allowed(byte[] client, String address, WireRequest request,
                          Optional<GraphCatalog.Versioned> graph, Set<String> roles, Credentials.Parsed key) {
    if (graph.isEmpty()) {
      return true;
    }
    String refusal = graph.get().graph().refusal(request.caller(), roles, request.purpose());
    if (refusal == null) {
      return true;
    }
    reply(client, WireReply.error(request.id(), WireReply.FORBIDDEN, refusal));
    recordDenial(request, refusal, address, key, graph.get().version());
    return false;
  }

  /**
   * Hands a refusal to the database for provenance on {@link #denialThread} (a VoltDB client call may wait for
   * capacity, and the socket thread never waits); a failure is logged (the client was answered). Past the caller's
   * or the address's allowance ({@link #REFUSALS_BURST}, then {@link #REFUSALS_PER_SECOND}), a refusal is only
   * counted, and the counts summarized in the log every {@link #WIRE_LOG_SECONDS} s. Beyond
   * {@link #MAX_QUEUED_DENIALS} refusals waiting, more are logged but not recorded.
   */
  private void recordDenial(WireRequest request, String reason, String address, Credentials.Parsed presented,
                            int graphVersion) {
    String key = request.caller() == null ? "(no caller)" : request.caller();
    if (!refusals.admit(key, address, System.nanoTime())) {
      return;
    }
    String denialId = UUID.randomUUID().toString();
    LOG.log(Level.INFO, "frontend " + id + ": refused invocation " + request.id() + " (denial " + denialId + "): "
        + reason);
    try {
      denialThread.execute(() -> sendDenial(request, denialId, presented, graphVersion));
    } catch (java.util.concurrent.RejectedExecutionException e) {
      LOG.log(Level.WARNING, "frontend " + id + ": the refusal of invocation " + request.id() + " (denial "
          + denialId + ") was not recorded in provenance: " + (running ? MAX_QUEUED_DENIALS
          + " refusals already wait to be recorded" : "the frontend is closing"));
    }
  }

  private void sendDenial(WireRequest request, String denialId, Credentials.Parsed key, int graphVersion) {
    try {
      boolean queued = db.client().callProcedure(response -> {
        if (response.getStatus() != org.voltdb.client.ClientResponse.SUCCESS) {
          LOG.log(Level.WARNING, "frontend " + id + ": the refusal of invocation " + request.id() + " (denial "
              + denialId + ") was not recorded in provenance: " + response.getStatusString());
        }
      }, SystemSchema.CHECK_AND_RECORD_DENIAL, request.id(), denialId, key == null ? null : key.keyId(),
          key == null ? null : key.secret(), request.graph(), (long) graphVersion, request.purpose());
      if (!queued) {
        LOG.log(Level.WARNING, "frontend " + id + ": the refusal of invocation " + request.id() + " (denial "
            + denialId + ") was not recorded in provenance: the database client refused the call (backpressure)");
      }
    } catch (java.io.IOException | RuntimeException e) {
      LOG.log(Level.WARNING, "frontend " + id + ": the refusal of invocation " + request.id() + " (denial "
          + denialId + ") was not recorded in provenance: " + e);
    }
  }

  /** Refusals recorded (and logged) one by one per key and per address before the rest are only counted. */
  public static final int REFUSALS_BURST = 20;
  /** How fast that allowance refills, per key and per address. */
  public static final int REFUSALS_PER_SECOND = 1;

  /** The latest expiry a request may state: 9999-12-31T23:59:59.999Z, in milliseconds since the epoch. */
  static final long MAX_EXPIRES = 253_402_300_799_999L;

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

  /**
   * Completes once this frontend has stopped serving: after {@link #close}, or after its socket thread failed and it
   * stopped itself (lease released; {@link #failure} says why). A process that runs a frontend waits on this.
   */
  public CompletionStage<Void> stopped() {
    return stopped.minimalCompletionStage();
  }

  /** The error that made this frontend stop itself, if one did. */
  public Optional<Throwable> failure() {
    return Optional.ofNullable(failure);
  }

  /** How many times this frontend's recovery has read the invocation log (tests). */
  long recoveryScans() {
    return coordinator.recoveryScans();
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
    org.apiary.internal.http.HttpEndpoint h = http;
    if (h != null) {
      h.close();
    }
    maintenance.stop();
    queues.stop();
    schedules.stop();
    dispatcher.close();
    scheduler.shutdownNow();
    catalogThread.shutdownNow();
    denialThread.shutdown(); // refusals already queued are still handed to the database
    if (!sockets.stop(Duration.ofSeconds(5))) {
      LOG.log(Level.WARNING, "frontend " + id + ": the socket thread did not stop within 5 s");
    }
    logWireRefusals(); // the last interval's, so no refusal (on the wire or of a call) goes uncounted
    try {
      if (config.invocationLog()) {
        maintenance.close();
      }
    } finally {
      metrics.close();
      stopped.complete(null);
    }
  }
}
