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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apiary.ApiaryException;
import org.apiary.DatabaseException;
import org.apiary.FunctionFailedException;
import org.apiary.InvalidRequestException;
import org.apiary.OutcomeUnknownException;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.ExecutionRefusedException;
import org.apiary.internal.Invocation;
import org.apiary.internal.wire.WireReply;
import org.apiary.internal.wire.WireRequest;
import org.apiary.runtime.SystemSchema;

/**
 * The exactly-once lifecycle of a frontend's invocations (docs/exactly-once.md): how each graph version's
 * invocations are kept (logged, one recorded transaction, or not at all), attempts and their retries, the single
 * stored outcome and who is told it, re-attaching resends, answering {@code result(id)}, and running the logged
 * invocations recovery hands this frontend. It owns no socket: replies go out through {@link Replies}, which never
 * blocks, so every continuation may run on the database client's callback threads.
 *
 * <p>Where credentials are required an invocation belongs to the identity that started it: the ID a request carries
 * names an invocation of the request's (established) caller, stored as {@link Credentials#invocationId IDENTITY/ID},
 * so another identity's request with the same ID is an invocation of its own, started or answered exactly as an
 * unknown ID would be, and learns nothing of the first. The caller also enters the comparison of a resend with the
 * invocation's request (and a one-transaction record's request hash). Every attempt runs under the caller,
 * purpose and roles of the request that started the invocation, whoever resent it. Replies carry the ID the client
 * sent, not the stored one.
 */
final class InvocationCoordinator {
  private static final Logger LOG = System.getLogger(InvocationCoordinator.class.getName());

  /** Where replies for clients go (the frontend's socket thread sends them). Never blocks. */
  interface Replies {
    void reply(byte[] client, WireReply reply);
  }

  private final FrontendConfig config;
  private final String frontendId;
  private final GraphCatalog catalog;
  private final Dispatcher dispatcher;
  private final InvocationLog log;
  private final OneTransactionOutcomes oneTransactionOutcomes;
  private final FrontendHooks hooks;
  private final Replies replies;
  private final FrontendMetrics metrics;
  private final FrontendTracing tracing = new FrontendTracing();
  /** Runs retries after their back-off, and catalog loads that must not run on a database callback thread. */
  private final ScheduledExecutorService scheduler;
  /** This frontend's lease: an execution calls out (an external step) only while the term it began in holds. */
  private final LeaseTerm lease;
  private final ApiaryDatabase db;
  private final Map<String, Pending> inFlight = new ConcurrentHashMap<>();
  /** How many of {@link #inFlight} each client started ({@link Pending#owner}); clients with none are absent. */
  private final Map<Object, Integer> inFlightByClient = new ConcurrentHashMap<>();
  /** The sum of {@link Pending#bytes} over {@link #inFlight}. */
  private final java.util.concurrent.atomic.AtomicLong inFlightBytes = new java.util.concurrent.atomic.AtomicLong();
  /** Invocations whose outcome this frontend stored recently (nanoTime), which recovery need not look at. */
  private final Map<String, Long> concludedHere = new ConcurrentHashMap<>();
  /**
   * Until when (nanoTime) {@link #recover} reads the log at every heartbeat: a while after something may have left
   * one of this frontend's logged invocations running nowhere (a takeover, an attempt that ended without a stored
   * outcome). Otherwise it reads it every {@link #SAFETY_SCAN_HEARTBEATS}th heartbeat: the read is a
   * multi-partition transaction, which every frontend would otherwise run every second.
   */
  private final java.util.concurrent.atomic.AtomicLong scanUntil = new java.util.concurrent.atomic.AtomicLong(
      System.nanoTime());
  /** Heartbeats since {@link #recover} last read the log (the maintenance thread's only). */
  private int heartbeatsSinceScan;
  /** How many times {@link #recover} has read the log (tests). */
  private final java.util.concurrent.atomic.AtomicLong recoveryScans = new java.util.concurrent.atomic.AtomicLong();
  /** With nothing to recover, recovery reads the log at every this many heartbeats, as a safety net. */
  static final int SAFETY_SCAN_HEARTBEATS = 10;
  /**
   * After a trigger, recovery reads the log at each of this many heartbeats: it takes only invocations older than
   * two heartbeats, so an invocation left running nowhere just now is found by the third.
   */
  static final int SCAN_HEARTBEATS_AFTER_TRIGGER = 5;

  /** A client waiting for an invocation's reply, and the ID its request named the invocation by. */
  private record Waiter(byte[] client, String id, java.util.function.Consumer<WireReply> callback) {
    Waiter(byte[] client, String id) {
      this(client, id, null);
    }
  }

  /** Sends a reply to a waiter: its client's, or its callback's for an invocation this frontend started itself. */
  private void send(Waiter w, WireReply reply) {
    if (w.callback() != null) {
      w.callback().accept(reply);
    } else {
      replies.reply(w.client(), reply);
    }
  }

  /** An invocation this frontend is running, with the clients waiting for its reply. */
  private static final class Pending {
    final List<Waiter> waiters = new ArrayList<>();
    /**
     * A client that started the invocation without waiting for its outcome ({@link WireRequest#START}), until it is
     * told the invocation is logged (or its outcome, if it ended or was refused first); else {@code null}.
     */
    Waiter starter;
    final String graph;
    final JsonNode key;
    final List<JsonNode> args;
    WireReply reply;
    /** Whether the invocation has an invocation-log entry (its outcome is stored there). */
    volatile boolean logged;
    /**
     * Whether this request is still being checked against the log entry its ID already had: it may be a different
     * request under a used ID, so neither it nor a request it differs from can be judged here yet.
     */
    volatile boolean checking;
    /** For a one-transaction invocation, where its outcome is recorded; else {@code null}. */
    volatile OneTransactionOutcomes.Location oneTransaction;
    /** The client whose request started it here, counted against its in-flight limit; {@code null} if recovered. */
    final Object owner;
    /** Who started the invocation, as its frontend established it (a claim, or {@code null}, without credentials). */
    final String caller;
    /** {@link #caller} where credentials are required (a request matches only the same identity's); else {@code null}. */
    final String identity;
    /** The size of its request, counted against {@link FrontendConfig#maxInFlightBytes()} while it is here. */
    final long bytes;
    /** Its graph's meters, and when it arrived (or recovery took it up) here. */
    final FrontendMetrics.GraphMeters meters;
    final long startedNanos;
    /** Its graph execution's span ({@link FrontendTracing}); invalid when not traced. */
    volatile io.opentelemetry.api.trace.Span span = io.opentelemetry.api.trace.Span.getInvalid();

    Pending(String graph, JsonNode key, List<JsonNode> args, Object owner, String caller, String identity,
            long bytes, FrontendMetrics.GraphMeters meters) {
      this.bytes = bytes;
      this.meters = meters;
      this.startedNanos = meters.off() ? 0 : System.nanoTime();
      this.graph = graph;
      this.key = key;
      this.args = args;
      this.owner = owner;
      this.caller = caller;
      this.identity = identity;
    }

    boolean sameRequest(String otherGraph, JsonNode otherKey, List<JsonNode> otherArgs, String otherIdentity) {
      return graph.equals(otherGraph) && Objects.equals(key, otherKey) && Objects.equals(args, otherArgs)
          && Objects.equals(identity, otherIdentity);
    }
  }

  InvocationCoordinator(ApiaryDatabase db, FrontendConfig config, String frontendId, GraphCatalog catalog,
                        Dispatcher dispatcher, FrontendHooks hooks, Replies replies,
                        ScheduledExecutorService scheduler, FrontendMetrics metrics, LeaseTerm lease) {
    this.metrics = metrics;
    this.lease = lease;
    this.db = db;
    this.config = config;
    this.frontendId = frontendId;
    this.catalog = catalog;
    this.dispatcher = dispatcher;
    this.log = new InvocationLog(db);
    this.oneTransactionOutcomes = new OneTransactionOutcomes(db);
    this.hooks = hooks;
    // With a synchronous journal, a reply leaves only once every transaction it reports is on disk.
    this.replies = (client, reply) -> db.whenDurable(
        () -> replies.reply(client, reply), e -> replies.reply(client, WireReply.error(reply.id(),
            WireReply.OUTCOME_UNKNOWN, "the database could not make this outcome durable, so a crash may undo it: "
                + e.getMessage())));
    this.scheduler = scheduler;
  }

  /** The queues whose waiting items {@code result(id)} answers as running (issue 42); set once, after construction. */
  private volatile QueueRunner queues;

  void queues(QueueRunner runner) {
    this.queues = runner;
  }

  /** The invocation log this coordinator writes (maintenance takes over and deletes through it too). */
  InvocationLog log() {
    return log;
  }

  /** How many invocations run here. */
  int inFlight() {
    return inFlight.size();
  }

  /** The bytes of the requests of the invocations that run here. */
  long inFlightBytes() {
    return inFlightBytes.get();
  }

  /** The most attempts an invocation gets (the first, retries after transient errors, takeovers) before it fails. */
  static final int MAX_ATTEMPTS = 8;
  /** Back-off before the second attempt; doubled for each later one, up to {@link #MAX_BACKOFF_MS}. */
  static final long FIRST_BACKOFF_MS = 50;
  static final long MAX_BACKOFF_MS = 2_000;

  /**
   * One attempt at an invocation: what to run, under which graph version, whether it is the very first, and the
   * fences its recorded executions carry ({@link Invocation#notBefore()}, {@link Invocation#deadline()}; either may
   * be {@code null}).
   */
  private record Attempt(String invocation, RegisteredGraph graph, int version, JsonNode key, List<JsonNode> args,
                         String caller, String purpose, String roles, int number, boolean firstRun, Long notBefore,
                         Long deadline) {
    Attempt next(RegisteredGraph newGraph, int newVersion) {
      return new Attempt(invocation, newGraph, newVersion, key, args, caller, purpose, roles, number + 1, false,
          notBefore, deadline);
    }

    /**
     * The next attempt at a logged invocation, from its log entry and its logged request, whose caller, purpose and
     * roles it runs under (never a resender's): fenced by the logged start, not by the request's deadline.
     */
    static Attempt fromLog(InvocationLog.Entry e, RegisteredGraph graph, JsonNode key, List<JsonNode> args,
                           WireRequest logged) {
      return new Attempt(e.invocationId(), graph, e.graphVersion(), key, args, logged.caller(), logged.purpose(),
          logged.roles(), e.attempts() + 1, false, e.notBefore(), null);
    }

    /** The attempt of an invocation now logged: fenced by its start, no longer by its request's deadline. */
    Attempt logged(Long fence) {
      return new Attempt(invocation, graph, version, key, args, caller, purpose, roles, number, firstRun, fence, null);
    }
  }

  /**
   * The latest time (database clock) at which a request may still start: its client's expiry plus the clock skew
   * allowed; {@code null} if the client stamped no expiry.
   */
  private Long deadline(WireRequest request) {
    return request.expires() == null ? null : request.expires() + config.clockSkewAllowance().toMillis();
  }

  /** A deadline as the invocation log and the recorded outputs store it: 0 for none. */
  private static long stored(Long deadline) {
    return deadline == null ? 0L : deadline;
  }

  /**
   * Starts (or re-attaches to) an invocation of a graph this frontend looked up: checks the request, then runs it
   * under the keeping its graph version needs.
   *
   * @param known the graph, or empty if the catalog does not have it (the request is refused)
   */
  void invoke(byte[] client, WireRequest request, byte[] frame, Optional<GraphCatalog.Versioned> known) {
    invoke(client, request, frame, known, null, null);
  }

  /**
   * Runs a queued item (issue 42) as an invocation this frontend starts itself: as {@link #invoke}, with its final
   * outcome (or a refusal, or an unknown outcome) handed to {@code outcome} instead of a client's connection. It
   * counts against the in-flight limit per client as the client {@code owner} (one per queue).
   */
  void invokeQueued(byte[] owner, WireRequest request, byte[] frame, GraphCatalog.Versioned graph, long startBy,
                    java.util.function.Consumer<WireReply> outcome) {
    invoke(owner, request, frame, Optional.of(graph), java.util.Objects.requireNonNull(outcome, "outcome"), startBy);
  }

  /**
   * @param startBy for a queued item, the latest database time at which its invocation may be logged as new (its
   *     claim's time plus what {@link QueueRunner} allows), else {@code null}: the client's expiry decides
   */
  private void invoke(byte[] client, WireRequest request, byte[] frame, Optional<GraphCatalog.Versioned> known,
                      java.util.function.Consumer<WireReply> callback, Long startBy) {
    java.util.function.Consumer<WireReply> answer = callback != null ? callback : r -> replies.reply(client, r);
    List<JsonNode> args = request.args() == null ? List.of() : request.args();
    JsonNode key = request.key() == null || request.key().isNull() ? null : request.key();
    GraphCatalog.Versioned graph = known.orElseThrow(() -> new InvalidRequestException(
        "unknown graph '" + request.graph() + "'"));
    Dispatcher.checkRequest(graph.graph(), key, args);

    boolean start = WireRequest.START.equals(request.type());
    if (start && !config.invocationLog()) {
      throw new InvalidRequestException("frontend " + frontendId + " keeps no invocation log, so it cannot start "
          + "invocation " + request.id() + " without waiting for it; invoke it instead");
    }
    String invocation = invocationOf(request);
    String identity = identity(request);
    Object owner = owner(client, request);
    if (!inFlight.containsKey(invocation)
        && inFlightByClient.getOrDefault(owner, 0) >= config.maxInFlightPerClient()) {
      answer.accept(WireReply.error(request.id(), WireReply.OVERLOADED, "this client has "
          + config.maxInFlightPerClient() + " invocations in flight at frontend " + frontendId + ", its limit per "
          + "client; nothing ran for invocation " + request.id() + "; retry after "
          + WireReply.OVERLOADED_RETRY_AFTER_MS + " ms"));
      return;
    }
    Pending pending = new Pending(graph.graph().name(), key, args, owner, request.caller(), identity, frame.length,
        metrics.graph(graph.graph().name()));
    synchronized (pending) {
      Pending existing = inFlight.putIfAbsent(invocation, pending);
      if (existing != null) {
        synchronized (existing) {
          boolean same = existing.sameRequest(graph.graph().name(), key, args, identity);
          if (!same && undecided(existing)) {
            // Which of the two is the invocation's request is decided by what is stored, not by arrival here.
            answer.accept(WireReply.error(request.id(), WireReply.OUTCOME_UNKNOWN, "another request with "
                + "invocation ID " + request.id() + " is being checked here; resend this one"));
            return;
          }
          if (!same) {
            answer.accept(WireReply.error(request.id(), WireReply.INVALID_REQUEST, "invocation ID " + request.id()
                + " was already used for a different request (" + described(existing.graph, existing.key)
                + "); use a new ID"));
            return;
          }
          if (existing.reply == null && start) {
            answer.accept(WireReply.running(request.id())); // started already, and running here
            return;
          }
          if (existing.reply == null) {
            // the same invocation, resent while it runs here
            existing.waiters.add(new Waiter(client, request.id(), callback));
            return;
          }
          answer.accept(withId(existing.reply, request.id()));
          return;
        }
      }
      if (start) {
        pending.starter = new Waiter(client, request.id(), callback);
      } else {
        pending.waiters.add(new Waiter(client, request.id(), callback));
      }
      inFlightByClient.merge(owner, 1, Integer::sum);
      inFlightBytes.addAndGet(pending.bytes);
      pending.span = tracing.startGraph(graph.graph().name(), invocation, frame);
    }
    hooks.beforeStarting(invocation);
    Long deadline = startBy != null ? startBy : deadline(request);
    Attempt first = new Attempt(invocation, graph.graph(), graph.version(), key, args, request.caller(),
        request.purpose(), request.roles(), 1, true, null, deadline);
    long term = lease.term(); // before the begin that makes the invocation this frontend's
    if (!logged(graph.graph())) {
      pending.oneTransaction = oneTransactionLocation(first);
      execute(first, term);
      return;
    }
    pending.logged = true;
    pending.checking = true;
    log.begin(invocation, graph.graph().name(), graph.version(), frame, frontendId, stored(deadline))
        .whenComplete((began, err) -> {
      if (err == null && began.begun()) {
        pending.checking = false;
        started(invocation);
        execute(first.logged(began.notBefore()), term); // logged as new: nothing can be recorded yet
      } else if (err == null && began.pastDeadline() && startBy != null) {
        deliver(invocation, WireReply.error(invocation, WireReply.EXPIRED, "queued invocation " + request.id()
            + " reached the database after its claim grew too old to start it (by " + startBy + " ms since the epoch, "
            + "database clock): frontend " + frontendId + " was paused or slow since it claimed the item"));
      } else if (err == null && began.pastDeadline()) {
        deliver(invocation, WireReply.error(invocation, WireReply.EXPIRED, "invocation " + request.id()
            + " reached the database after its deadline (its client's expiry, " + request.expires() + " ms since the "
            + "epoch by the client's clock, plus " + config.clockSkewAllowance().toMillis() + " ms of clock skew "
            + "allowed), so it was not started: frontend " + frontendId + " held it too long, or the clocks disagree"));
      } else {
        resume(request, invocation, key, args, err == null ? new InvalidRequestException("invocation "
            + request.id() + " is already logged") : unwrap(err));
      }
    });
  }

  /**
   * The ID under which the invocation a request names is kept: where credentials are required, its caller's
   * identity and the client's ID ({@link Credentials#invocationId}); else the client's ID.
   */
  private String invocationOf(WireRequest request) {
    return config.credentialsRequired() ? Credentials.invocationId(request.caller(), request.id()) : request.id();
  }

  /**
   * The identity a request must share with an invocation's to be the same request: its caller where credentials
   * are required; {@code null} otherwise, where a caller is only a claim and requests compare as before.
   */
  private String identity(WireRequest request) {
    return config.credentialsRequired() ? request.caller() : null;
  }

  /**
   * Whether invocations of a graph version get an invocation-log entry: every one, whenever the log is on (issue 42).
   * A graph that writes nothing and a one-function graph are logged too, although running them again would be safe
   * or their record would be their outcome: the entry, in the partition of the invocation's ID, is what makes the ID
   * name one invocation across partition keys (a reuse with another key or graph is refused, naming the first) and
   * keeps their outcome for {@code result(id)}. It costs such an invocation a begin and an outcome write, each a
   * single-partition transaction that the log batches with the other writes of its partition.
   */
  private boolean logged(RegisteredGraph graph) {
    return config.invocationLog();
  }

  /** Where a one-transaction invocation's outcome is recorded, or {@code null} if it is not one. */
  private OneTransactionOutcomes.Location oneTransactionLocation(Attempt attempt) {
    RegisteredGraph graph = attempt.graph();
    if (!config.invocationLog() || !graph.oneTransaction()) {
      return null;
    }
    RegisteredGraph.Node node = graph.nodes().get(0);
    Object recordKey = OneTransactionOutcomes.recordKey(!node.local() ? null
        : node.keyType().fromJson(attempt.key(), "partition key for function '" + node.function() + "'"),
        attempt.invocation());
    return new OneTransactionOutcomes.Location(SystemSchema.recordedTable(node.local() ? node.keyType() : null),
        recordKey, node.function(), OneTransactionOutcomes.requestHash(graph.name(), attempt.key(), attempt.args(),
            config.credentialsRequired() ? attempt.caller() : null), attempt.caller(), stored(attempt.deadline()));
  }

  private Pending pending(String invocation) {
    return inFlight.get(invocation);
  }

  /**
   * Whether a request running here under an ID is not yet known to be that invocation's: it is being checked
   * against the log, or it is one recorded transaction, whose record decides when it commits.
   */
  private static boolean undecided(Pending p) {
    return p.checking || p.oneTransaction != null;
  }

  /**
   * The ID is already logged: a retry (after a frontend failure) or a client reusing an ID. The next attempt, if
   * any, runs under the logged request's caller, purpose and roles.
   */
  private void resume(WireRequest request, String invocation, JsonNode key, List<JsonNode> args,
                      Throwable beginFailure) {
    log.get(invocation).whenComplete((entry, err) -> guarded(invocation, () -> {
      if (err != null || entry.isEmpty()) {
        deliver(invocation, toReply(invocation, err != null ? unwrap(err) : beginFailure));
        return;
      }
      InvocationLog.Entry e = entry.get();
      WireRequest logged = loggedRequest(e.request(), invocation);
      if (!e.graph().equals(request.graph()) || !Objects.equals(logged.key(), request.key())
          || !Objects.equals(normalize(logged.args()), normalize(request.args()))
          || !Objects.equals(identity(logged), identity(request))) {
        deliver(invocation, WireReply.error(invocation, WireReply.INVALID_REQUEST, "invocation ID " + request.id()
            + " was already used for a different request (" + described(e.graph(), logged.key()) + "); use a new "
            + "ID"));
        return;
      }
      Pending pending = pending(invocation);
      if (pending != null) {
        pending.checking = false; // the logged request is this one
      }
      if (!InvocationLog.RUNNING.equals(e.status())) {
        deliver(invocation, storedReply(e, invocation));
      } else {
        started(invocation);
        Optional<RegisteredGraph> graph = catalog.graph(e.graph(), e.graphVersion());
        if (graph.isEmpty()) { // registered after our last catalog load: load it off this (database) thread
          scheduler.execute(() -> guarded(invocation, () -> {
            catalog.reload();
            claimAndRun(Attempt.fromLog(e, catalog.graph(e.graph(), e.graphVersion()).orElseThrow(() ->
                new IllegalStateException("graph '" + e.graph() + "' version " + e.graphVersion() + " is not "
                    + "registered")), key, args, logged));
          }));
        } else {
          claimAndRun(Attempt.fromLog(e, graph.get(), key, args, logged));
        }
      }
    }));
  }

  /** The first request under an ID, as a refusal of another request under it names it: its graph and key. */
  private static String described(String graph, JsonNode key) {
    return "graph '" + graph + "', " + (key == null || key.isNull() ? "no partition key" : "partition key " + key);
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

  /**
   * Takes a logged, running invocation for another attempt here, unless it has had its attempts or has ended, or
   * another frontend whose lease holds runs it: then this one waits for that one's outcome (and takes the invocation
   * over only if that frontend's lease expires first). Two live frontends never run one invocation at once, so only
   * a takeover, after the owner's lease expired, can run it beside an execution that began earlier, and that one then
   * finds its lease's term ended before it calls the outside world ({@link LeaseTerm}).
   */
  private void claimAndRun(Attempt attempt) {
    claimAndRun(attempt, 0L);
  }

  /** As {@link #claimAndRun(Attempt)}; {@code waitingSince}: when this frontend began waiting for a live owner, or 0. */
  private void claimAndRun(Attempt attempt, long waitingSince) {
    String invocation = attempt.invocation();
    if (attempt.number() > MAX_ATTEMPTS) {
      conclude(invocation, WireReply.error(invocation, WireReply.INVOCATION_FAILED, "invocation " + invocation
          + " gave up after " + MAX_ATTEMPTS + " attempts without a definite outcome"));
      return;
    }
    Pending pending = pending(invocation);
    if (pending != null && !pending.logged) {
      execute(attempt, lease.term()); // nothing to claim: a one-transaction invocation's record decides
      return;
    }
    long term = lease.term(); // before the owner is read and the claim made
    log.get(invocation).whenComplete((entry, err) -> guarded(invocation, () -> {
      if (err != null) {
        deliver(invocation, toReply(invocation, unwrap(err))); // stays running in the log; recovery retries
      } else if (entry.isEmpty() || !InvocationLog.RUNNING.equals(entry.get().status())) {
        answerFromLog(invocation); // ended meanwhile
      } else if (entry.get().frontend().equals(frontendId)) {
        claim(attempt, term);
      } else {
        String owner = entry.get().frontend();
        FrontendLeases.isLive(db, owner).whenComplete((live, leaseErr) -> guarded(invocation, () -> {
          if (leaseErr != null) {
            deliver(invocation, toReply(invocation, unwrap(leaseErr)));
          } else if (!live) {
            claim(attempt, term); // its owner's lease expired: a takeover
          } else {
            awaitOwner(attempt, owner, waitingSince == 0L ? System.nanoTime() : waitingSince);
          }
        }));
      }
    }));
  }

  /** The longest this frontend waits for a live frontend's outcome before it tells its clients to ask again. */
  private Duration ownerWait() {
    Duration fourLeases = config.leaseDuration().multipliedBy(4);
    return fourLeases.compareTo(Duration.ofSeconds(60)) > 0 ? fourLeases : Duration.ofSeconds(60);
  }

  /** Checks again, a little later, whether the live frontend that runs an invocation has ended it or died. */
  private void awaitOwner(Attempt attempt, String owner, long waitingSince) {
    String invocation = attempt.invocation();
    Duration waited = Duration.ofNanos(System.nanoTime() - waitingSince);
    if (waited.compareTo(ownerWait()) > 0) {
      deliver(invocation, WireReply.error(invocation, WireReply.OUTCOME_UNKNOWN, "invocation " + invocation
          + " runs on frontend " + owner + ", whose lease holds, and did not end within " + waited.toSeconds()
          + " s; resending the same ID is safe and waits again"));
      return;
    }
    long pollMs = Math.min(1_000, Math.max(50, config.heartbeatInterval().toMillis() / 2));
    try {
      scheduler.schedule(() -> guarded(invocation, () -> claimAndRun(attempt, waitingSince)), pollMs,
          TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      deliver(invocation, WireReply.error(invocation, WireReply.OUTCOME_UNKNOWN, "frontend " + frontendId
          + " stopped while invocation " + invocation + " ran on frontend " + owner + "; resending the same ID is "
          + "safe"));
    }
  }

  private void claim(Attempt attempt, long term) {
    String invocation = attempt.invocation();
    log.claim(invocation, frontendId, attempt.version()).whenComplete((stillRunning, err) -> guarded(invocation, () -> {
      if (err != null) {
        deliver(invocation, toReply(invocation, unwrap(err))); // stays running in the log; recovery retries
      } else if (stillRunning) {
        execute(attempt, term);
      } else {
        answerFromLog(invocation); // another frontend stored its outcome meanwhile
      }
    }));
  }

  private void execute(Attempt attempt, long term) {
    String invocation = attempt.invocation();
    Pending pending = pending(invocation);
    OneTransactionOutcomes.Location one = pending == null ? null : pending.oneTransaction;
    dispatcher.execute(attempt.graph(), attempt.version(), invocation, attempt.key(), attempt.args(),
        attempt.caller(), attempt.purpose(), attempt.roles(), attempt.firstRun(), one == null ? null : one.requestHash(),
        attempt.notBefore(), attempt.deadline(), pending != null && pending.logged ? cancelGate(invocation, term)
            : null,
        pending == null ? io.opentelemetry.context.Context.root()
            : io.opentelemetry.context.Context.root().with(pending.span))
        .whenComplete((outputs, err) -> guarded(invocation, () -> {
          if (err == null) {
            conclude(invocation, WireReply.ok(invocation, outputs));
            return;
          }
          Throwable cause = unwrap(err);
          if (cause instanceof LeaseLapsedException) {
            // Another frontend may run it now; if none took it over, this one's recovery runs it again.
            LOG.log(Level.INFO, "frontend " + frontendId + ": attempt " + attempt.number() + " of invocation "
                + invocation + " stopped: " + cause.getMessage());
            recoveryWanted();
            deliver(invocation, WireReply.error(invocation, WireReply.OUTCOME_UNKNOWN, cause.getMessage()
                + "; resending the same ID is safe"));
            return;
          }
          if (refused(cause, ExecutionRefusedException.Reason.PAST_RETENTION)) {
            LOG.log(Level.INFO, "frontend " + frontendId + ": attempt " + attempt.number() + " of invocation "
                + invocation + " refused by retention's fence (this frontend was stopped for longer than the "
                + "retention): " + cause.getMessage());
          }
          if (!config.invocationLog() || !transientFailure(cause) && !frontendFault(cause, pending)) {
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
   * The check before each wave of functions a logged invocation starts, the first included (a cancel may be stored
   * between the begin or claim and the first function): the invocation's status, read in its partition, where a
   * cancel is stored. A function is started only if the read, serialized with the cancel there, found the invocation
   * running, so none starts once a cancel is stored (issue 42). An invocation found ended is not continued either:
   * its outcome is the stored one, which the attempt then reports. It costs a single-partition read per wave.
   */
  private Dispatcher.Gate cancelGate(String invocation, long term) {
    return new Dispatcher.Gate() {
      @Override
      public CompletableFuture<Void> admit(List<String> functions) {
        return log.status(invocation).thenAccept(status -> {
          if (status.isEmpty() || !InvocationLog.RUNNING.equals(status.get())) {
            throw new FunctionFailedException(functions.get(0), ENDED_BEFORE_START, "invocation " + invocation
                + " is " + status.map(s -> "no longer running (" + s + ")").orElse("no longer logged")
                + ", so function '" + functions.get(0) + "' was not started");
          }
        });
      }

      @Override
      public void beforeCallingOut(String step) {
        if (!lease.heldSince(term)) {
          throw new LeaseLapsedException("frontend " + frontendId + " did not call external step '" + step
              + "' of invocation " + invocation + ": its lease lapsed since the attempt began (it was paused or cut "
              + "off), so another frontend may have taken the invocation over");
        }
      }
    };
  }

  /** The error type of an attempt stopped before a function because its invocation had ended (a cancel). */
  static final String ENDED_BEFORE_START = "InvocationEnded";

  /**
   * Cancels an invocation (issue 42) and answers with its stored outcome: the cancellation, or the outcome it had
   * already ended with. Whose invocation an ID names, and who may cancel it, is as for {@link #result}.
   */
  void cancel(byte[] client, String id, String caller, java.util.Set<String> roles, String reason) {
    if (!config.invocationLog()) {
      throw new InvalidRequestException("frontend " + frontendId + " keeps no invocation log, so it cannot cancel "
          + "invocation " + id);
    }
    if (reason == null || reason.isBlank() || reason.length() > WireRequest.MAX_REASON_LENGTH) {
      throw new InvalidRequestException("cancelling invocation " + id + " needs a reason of 1 to "
          + WireRequest.MAX_REASON_LENGTH + " characters, as the request's one text argument");
    }
    if (!config.credentialsRequired()) {
      cancelCandidate(client, id, reason, List.of(id), startedBy -> true, 0, List.of(id));
      return;
    }
    boolean admin = roles.contains(Credentials.ADMIN_ROLE);
    String own = Credentials.invocationId(caller, id);
    cancelCandidate(client, id, reason, List.of(own, id), startedBy -> admin || caller.equals(startedBy), 0,
        admin ? List.of(own, id) : List.of(own));
  }

  /**
   * Cancels the first of {@code candidates} the log holds and {@code mayCancel} allows; once none is left, a queue
   * item still waiting under one of {@code queued} (issue 42: not logged until a claim starts it).
   */
  private void cancelCandidate(byte[] client, String id, String reason, List<String> candidates,
                               java.util.function.Predicate<String> mayCancel, int i, List<String> queued) {
    if (i == candidates.size()) {
      WireReply unknown = WireReply.error(id, WireReply.INVALID_REQUEST, "no invocation with ID " + id + " is "
          + "known: it never started, or it ended more than " + config.retention() + " ago; nothing was cancelled");
      QueueRunner q = queues;
      if (q == null || queued.isEmpty()) {
        replies.reply(client, unknown);
        return;
      }
      q.item(queued).whenComplete((found, err) -> answeringCancel(client, id, () -> {
        if (err != null) {
          replies.reply(client, toReply(id, unwrap(err)));
        } else if (found.isEmpty()) {
          replies.reply(client, unknown);
        } else if ("QUEUED".equals(found.get().status())) {
          WireReply cancelled = WireReply.error(found.get().invocation(), WireReply.CANCELLED, "invocation " + id
              + " was cancelled while it waited on queue " + found.get().queue() + ": " + reason);
          q.cancelWaiting(found.get(), cancelled).whenComplete((done, cancelErr) -> answeringCancel(client, id, () -> {
            if (cancelErr != null) {
              replies.reply(client, toReply(id, unwrap(cancelErr)));
            } else if (done) {
              LOG.log(Level.INFO, "frontend " + frontendId + ": queue item " + found.get().invocation()
                  + " cancelled before it started: " + reason);
              replies.reply(client, withId(cancelled, id));
            } else {
              replies.reply(client, WireReply.running(id)); // claimed meanwhile, not logged yet: cancel again
            }
          }));
        } else if (found.get().outcome() != null) {
          replies.reply(client, withId(WireReply.fromBytes(found.get().outcome()), id));
        } else if (QueueRunner.waiting(found.get().status())) {
          replies.reply(client, WireReply.running(id)); // claimed, not logged yet: cancel again
        } else {
          replies.reply(client, unknown);
        }
      }));
      return;
    }
    String invocation = candidates.get(i);
    log.get(invocation).whenComplete((entry, err) -> answeringCancel(client, id, () -> {
      if (err != null) {
        replies.reply(client, toReply(id, unwrap(err)));
        return;
      }
      if (entry.isEmpty() || !mayCancel.test(loggedRequest(entry.get().request(), invocation).caller())) {
        cancelCandidate(client, id, reason, candidates, mayCancel, i + 1, queued);
        return;
      }
      if (!InvocationLog.RUNNING.equals(entry.get().status())) {
        replies.reply(client, withId(loggedResult(entry.get().result(), invocation), id));
        return;
      }
      WireReply cancelled = WireReply.error(invocation, WireReply.CANCELLED, "invocation " + id + " was cancelled: "
          + reason);
      log.cancel(invocation, cancelled.toBytes()).whenComplete((done, cancelErr) -> answeringCancel(client, id, () -> {
        if (cancelErr != null) {
          replies.reply(client, toReply(id, unwrap(cancelErr)));
        } else if (done) {
          LOG.log(Level.INFO, "frontend " + frontendId + ": invocation " + invocation + " cancelled: " + reason);
          replies.reply(client, withId(cancelled, id));
        } else {
          cancelCandidate(client, id, reason, List.of(invocation), any -> true, 0, List.of()); // it ended meanwhile
        }
      }));
    }));
  }

  /** Runs a step of a cancel; what it throws answers the client (a future's callback would drop it). */
  private void answeringCancel(byte[] client, String id, Runnable step) {
    try {
      step.run();
    } catch (RuntimeException e) {
      replies.reply(client, toReply(id, e));
    }
  }

  /**
   * Errors after which running the invocation again may succeed: no answer from the database, the database
   * refusing work, or a graph version older than a function's deployment. Every other error is final.
   */
  private static boolean transientFailure(Throwable cause) {
    return cause instanceof OutcomeUnknownException || cause instanceof DatabaseException
        || refused(cause, ExecutionRefusedException.Reason.STALE_GRAPH);
  }

  /** Whether {@code cause} is the database's refusal to run a function for {@code reason}. */
  private static boolean refused(Throwable cause, ExecutionRefusedException.Reason reason) {
    return cause instanceof ExecutionRefusedException r && r.reason() == reason;
  }

  /**
   * An unexpected error of this frontend's own (not Apiary's account of a failure) during an attempt at a logged
   * invocation: a function may have committed, so it is not the invocation's outcome; the next attempt replays what
   * was recorded (Algorithm 1) instead. Every graph is logged since issue 42, one-function graphs included, whose
   * record is then found by the next attempt and answered as the outcome.
   */
  private static boolean frontendFault(Throwable cause, Pending pending) {
    return pending != null && pending.logged && !(cause instanceof ApiaryException);
  }

  private void retryLater(Attempt attempt, Throwable cause) {
    long backoff = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS << Math.min(20, attempt.number() - 1));
    boolean stale = refused(cause, ExecutionRefusedException.Reason.STALE_GRAPH);
    LOG.log(Level.DEBUG, () -> "frontend " + frontendId + ": attempt " + attempt.number() + " of invocation "
        + attempt.invocation() + " failed (" + cause.getMessage() + "); retrying in " + backoff + " ms");
    try {
      scheduleRetry(attempt, stale, backoff);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // The frontend is stopping: nothing is stored (a failure stored here would end the invocation for good). Its
      // log entry stays running, and the frontend that takes over this one's lease completes it.
      deliver(attempt.invocation(), WireReply.error(attempt.invocation(), WireReply.OUTCOME_UNKNOWN, "frontend "
          + frontendId + " stopped while invocation " + attempt.invocation() + " waited to be attempted again; "
          + "another frontend completes it, and resending the same ID is safe"));
    }
  }

  private void scheduleRetry(Attempt attempt, boolean stale, long backoff) {
    scheduler.schedule(() -> guarded(attempt.invocation(), () -> {
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
    byte[] bytes = outcome.toBytes();
    if (bytes.length > SystemSchema.MAX_RESULT_BYTES) {
      outcome = WireReply.error(invocation, WireReply.INVOCATION_FAILED, "the result of invocation " + invocation
          + " is too large: " + bytes.length + " bytes encoded, and at most " + SystemSchema.MAX_RESULT_BYTES
          + " bytes can be stored as its outcome; return less to the sink");
      bytes = outcome.toBytes();
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
   * a refused request (nothing ran: invalid, or past its deadline), and an unknown outcome (the client resends).
   */
  private static boolean standsWithoutStoring(WireReply outcome) {
    return WireReply.OK.equals(outcome.status()) || WireReply.INVALID_REQUEST.equals(outcome.error())
        || WireReply.OUTCOME_UNKNOWN.equals(outcome.error()) || WireReply.EXPIRED.equals(outcome.error());
  }

  /** The outcome could not be stored: the invocation stays running in the log and is attempted again later. */
  private void outcomeNotStored(String invocation, Throwable cause) {
    LOG.log(Level.WARNING, "frontend " + frontendId + ": could not store the outcome of invocation " + invocation
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
    return withId(loggedResult(e.result(), invocation), invocation);
  }

  /** Tells the client that started an invocation without waiting, if any, that it is logged and running. */
  private void started(String invocation) {
    Pending pending = inFlight.get(invocation);
    if (pending == null) {
      return;
    }
    Waiter starter;
    synchronized (pending) {
      starter = pending.starter;
      pending.starter = null;
    }
    if (starter != null) {
      send(starter, WireReply.running(starter.id()));
    }
  }

  /** Replies to every client waiting for an invocation and forgets it here. */
  private void deliver(String invocation, WireReply reply) {
    Pending pending = inFlight.get(invocation);
    if (pending == null) {
      return;
    }
    List<Waiter> waiters;
    synchronized (pending) {
      pending.reply = reply;
      waiters = new ArrayList<>(pending.waiters);
      if (pending.starter != null) {
        waiters.add(pending.starter); // it ended (or was refused) before it was told it started
        pending.starter = null;
      }
      pending.waiters.clear();
    }
    for (Waiter w : waiters) {
      send(w, withId(reply, w.id()));
    }
    if (pending.logged && !WireReply.OK.equals(reply.status())) {
      recoveryWanted(); // perhaps no outcome was stored: its log entry may still say RUNNING, with no one running it
    }
    if (inFlight.remove(invocation, pending)) {
      FrontendTracing.endGraph(pending.span, reply);
      if (!pending.meters.off()) {
        pending.meters.ended(reply, System.nanoTime() - pending.startedNanos);
      }
      inFlightBytes.addAndGet(-pending.bytes);
      if (pending.owner != null) {
        inFlightByClient.computeIfPresent(pending.owner, (c, n) -> n == 1 ? null : n - 1);
      }
    }
  }

  /**
   * Who a request counts against for {@link FrontendConfig#maxInFlightPerClient()}: the key's identity where
   * credentials are required (however many connections it opens), else its connection.
   */
  private Object owner(byte[] client, WireRequest request) {
    return config.credentialsRequired() && request.caller() != null ? "caller:" + request.caller()
        : new Connection(client);
  }

  /** A client connection, by its ZeroMQ routing ID (compared by content; cheaper per request than a hex string). */
  private record Connection(byte[] routingId) {
    @Override
    public boolean equals(Object o) {
      return o instanceof Connection c && java.util.Arrays.equals(routingId, c.routingId);
    }

    @Override
    public int hashCode() {
      return java.util.Arrays.hashCode(routingId);
    }

    @Override
    public String toString() {
      return "connection:" + java.util.HexFormat.of().formatHex(routingId);
    }
  }

  /**
   * Answers a client's request for an invocation's outcome: from here if it runs here, else from what is stored.
   * Where credentials are required, {@code id} names the asker's own invocation ({@link Credentials#invocationId}),
   * or one stored under the bare ID (started where credentials were not required, or before IDs were scoped by
   * caller) whose recorded caller is the asker; a key with the {@value Credentials#ADMIN_ROLE} role reads any
   * invocation, by its stored ID ({@code IDENTITY/ID}) if it is not the admin's own. Every other invocation is
   * answered exactly as an unknown ID is, so the answer does not tell that it exists.
   *
   * @param id the ID the request names (the reply carries it)
   * @param caller who asks, as this frontend established it
   * @param roles the asker's roles
   */
  void result(byte[] client, String id, String caller, java.util.Set<String> roles) {
    if (!config.credentialsRequired()) {
      new ResultLookup(client, id, List.of(id), startedBy -> true).next(0);
      return;
    }
    boolean admin = roles.contains(Credentials.ADMIN_ROLE);
    new ResultLookup(client, id, List.of(Credentials.invocationId(caller, id), id),
        startedBy -> admin || caller.equals(startedBy)).next(0);
  }

  /**
   * One {@code result(id)}: the stored IDs it may name, looked at in order, and whose invocations the asker may read
   * (by the caller that started them, {@code null} if none was recorded).
   */
  private final class ResultLookup {
    final byte[] client;
    final String id;
    final List<String> candidates;
    final java.util.function.Predicate<String> mayRead;
    /** Whether the queues were looked at already (they are, once, after the log and the records). */
    boolean queueChecked;

    ResultLookup(byte[] client, String id, List<String> candidates, java.util.function.Predicate<String> mayRead) {
      this.client = client;
      this.id = id;
      this.candidates = candidates;
      this.mayRead = mayRead;
    }

    /** Looks for the invocation stored as candidate {@code i}; answers as for an unknown ID once none is left. */
    void next(int i) {
      if (i == candidates.size()) {
        QueueRunner q = queues;
        if (q == null || !config.invocationLog() || queueChecked) {
          replies.reply(client, unknown());
          return;
        }
        // Not logged: perhaps an item still waiting on a queue (issue 42), which is answered as queued. An item
        // found ended was logged before it ended (it ran between the two reads): the log is read again, once.
        queueChecked = true;
        q.item(candidates).whenComplete((found, err) -> answering(() -> {
          if (err != null) {
            replies.reply(client, toReply(id, unwrap(err)));
          } else if (found.isEmpty()) {
            replies.reply(client, unknown());
          } else if (QueueRunner.QUEUED.equals(found.get().status())) {
            replies.reply(client, WireReply.queued(id)); // waits on its queue or for its delay: not started
          } else if (QueueRunner.waiting(found.get().status())) {
            replies.reply(client, WireReply.running(id)); // claimed, not logged yet
          } else if (found.get().outcome() != null && found.get().invocation().equals(candidates.get(0))) {
            // cancelled while it waited; answered only under the asker's own ID (its caller is not read here)
            replies.reply(client, withId(WireReply.fromBytes(found.get().outcome()), id));
          } else {
            next(0);
          }
        }));
        return;
      }
      String invocation = candidates.get(i);
      Pending pending = inFlight.get(invocation);
      if (pending != null && !pending.checking) {
        if (!mayRead.test(pending.caller)) {
          next(i + 1);
          return;
        }
        synchronized (pending) {
          // A reply here may be the refusal of a different request under this ID: only what is stored speaks for
          // the invocation, so once a reply is set the stored outcome is read (unless nothing is stored).
          if (pending.reply == null || !config.invocationLog()) {
            replies.reply(client, pending.reply != null ? withId(pending.reply, id) : WireReply.running(id));
            return;
          }
        }
      }
      if (!config.invocationLog()) {
        next(i + 1);
        return;
      }
      log.get(invocation).whenComplete((entry, err) -> answering(() -> fromLog(i, invocation, entry, err)));
    }

    private void fromLog(int i, String invocation, Optional<InvocationLog.Entry> entry, Throwable err) {
      if (err != null) {
        replies.reply(client, toReply(id, unwrap(err)));
      } else if (entry.isPresent()) {
        InvocationLog.Entry e = entry.get();
        if (!mayRead.test(loggedRequest(e.request(), invocation).caller())) {
          next(i + 1);
        } else if (InvocationLog.RUNNING.equals(e.status())) {
          replies.reply(client, WireReply.running(id));
        } else {
          replies.reply(client, withId(loggedResult(e.result(), invocation), id));
        }
      } else {
        oneTransactionOutcomes.find(invocation).whenComplete((found, findErr) -> answering(() -> {
          if (findErr != null) {
            replies.reply(client, toReply(id, unwrap(findErr)));
          } else if (found.isPresent() && mayRead.test(found.get().caller())) {
            replies.reply(client, withId(found.get().outcome(), id));
          } else {
            next(i + 1);
          }
        }));
      }
    }

    /** Runs a continuation of the lookup; what it throws answers the client (a future's callback would drop it). */
    private void answering(Runnable step) {
      try {
        step.run();
      } catch (RuntimeException e) {
        replies.reply(client, toReply(id, e));
      }
    }

    /** The answer for an ID this asker has no invocation under. */
    private WireReply unknown() {
      if (!config.invocationLog()) {
        return WireReply.error(id, WireReply.INVALID_REQUEST, "invocation " + id + " is not running here, and this "
            + "frontend keeps no invocation log to look it up");
      }
      return WireReply.error(id, WireReply.INVALID_REQUEST, "no invocation with ID " + id + " is known: it never "
          + "started, or it ended more than " + config.retention() + " ago");
    }
  }

  private static WireReply withId(WireReply r, String invocation) {
    return new WireReply(invocation, r.status(), r.outputs(), r.error(), r.function(), r.functionError(), r.message());
  }

  /** The cause a {@link CompletionException} wraps, else the error itself. */
  static Throwable unwrap(Throwable e) {
    return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
  }

  static WireReply toReply(String invocation, Throwable e) {
    if (e instanceof ExecutionRefusedException r) {
      String code = switch (r.reason()) {
        case CONFLICTING_REQUEST -> WireReply.INVALID_REQUEST;
        case EXPIRED -> WireReply.EXPIRED;
        // Past retention its outcome is no longer kept; a stale graph or a lost race that outlived every attempt.
        case PAST_RETENTION, STALE_GRAPH, RECORDED_ELSEWHERE -> WireReply.INVOCATION_FAILED;
      };
      return WireReply.error(invocation, code, r.getMessage());
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

  /**
   * Has {@link #recover} read the log at each of the next {@link #SCAN_HEARTBEATS_AFTER_TRIGGER} heartbeats:
   * something may have left one of this frontend's logged invocations running nowhere.
   */
  void recoveryWanted() {
    long until = System.nanoTime() + SCAN_HEARTBEATS_AFTER_TRIGGER * config.heartbeatInterval().toNanos();
    scanUntil.accumulateAndGet(until, (a, b) -> b - a > 0 ? b : a);
  }

  /** How many times recovery has read the invocation log. */
  long recoveryScans() {
    return recoveryScans.get();
  }

  /**
   * Runs every invocation logged as ours that is not running here (taken over, or left by a failed attempt). Reads
   * the log only while {@link #recoveryWanted} asked for it, and every {@link #SAFETY_SCAN_HEARTBEATS}th call.
   */
  void recover() {
    long now = System.nanoTime();
    long forgetAfter = 4 * config.heartbeatInterval().toNanos();
    concludedHere.values().removeIf(at -> now - at > forgetAfter);
    if (now - scanUntil.get() > 0 && ++heartbeatsSinceScan < SAFETY_SCAN_HEARTBEATS) {
      return;
    }
    heartbeatsSinceScan = 0;
    recoveryScans.incrementAndGet();
    // Only invocations older than two heartbeats: younger ones of this frontend are running here (or ended while
    // the list was read), and a dead frontend's wait a heartbeat or two longer.
    for (InvocationLog.Entry e : log.running(frontendId, config.heartbeatInterval().multipliedBy(2))) {
      if (concludedHere.containsKey(e.invocationId())) {
        continue; // its outcome was stored here after the list was read
      }
      WireRequest request = loggedRequest(e.request(), e.invocationId());
      JsonNode key = request.key() == null || request.key().isNull() ? null : request.key();
      Pending pending = new Pending(e.graph(), key, normalize(request.args()), null, request.caller(),
          identity(request), e.request().length, metrics.graph(e.graph()));
      pending.logged = true;
      if (inFlight.putIfAbsent(e.invocationId(), pending) != null) {
        continue;
      }
      inFlightBytes.addAndGet(pending.bytes);
      pending.span = tracing.startTakenOver(e.graph(), e.invocationId(), e.request(), e.attempts() + 1);
      guarded(e.invocationId(), () -> {
        RegisteredGraph graph = catalog.graph(e.graph(), e.graphVersion()).orElseThrow(() ->
            new InvalidRequestException("graph '" + e.graph() + "' version " + e.graphVersion()
                + " is no longer registered"));
        LOG.log(Level.INFO, "frontend " + frontendId + ": recovering invocation " + e.invocationId() + " of graph "
            + e.graph() + " (attempt " + (e.attempts() + 1) + ")");
        hooks.recovering(e.invocationId());
        claimAndRun(Attempt.fromLog(e, graph, key, normalize(request.args()), request));
      });
    }
  }

  private static WireRequest loggedRequest(byte[] frame, String invocation) {
    try {
      return WireRequest.fromBytes(frame);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("logged request of invocation " + invocation + ": " + e.getMessage(), e);
    }
  }

  private static WireReply loggedResult(byte[] frame, String invocation) {
    try {
      return WireReply.fromBytes(frame);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("logged result of invocation " + invocation + ": " + e.getMessage(), e);
    }
  }
}
