package org.apiary.frontend;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apiary.InvalidRequestException;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.Output;
import org.apiary.internal.wire.WireReply;
import org.apiary.internal.wire.WireRequest;
import org.apiary.runtime.SystemSchema;
import org.apiary.runtime.procedure.EnqueueItemBefore;
import org.apiary.runtime.procedure.EnqueueRankedItem;
import org.voltdb.VoltTable;

/**
 * A frontend's side of durable queues (issue 42). Enqueue: one {@code EnqueueItemBefore} transaction in the queue's
 * partition, which checks the request's deadline and the deduplication ID and stores the item. Running: every {@link #POLL_INTERVAL_MS} ms
 * (on the maintenance scheduler) the frontend claims, per declared queue, as many of the oldest waiting items as
 * the queue's limits leave room for, highest priority first ({@code ClaimRankedQueueItems}: the limits are counted from the database's rows in
 * that one transaction, so they hold across frontends), runs each as an invocation under its ID through the
 * {@link InvocationCoordinator} (logged, recovered and exactly-once like any other), and marks it ended
 * ({@code FinishQueueItem}) once its outcome is stored. An outcome that is not final (unknown, overloaded) is asked
 * again later under the same ID, which attaches to the invocation or returns its stored outcome. A dead frontend's
 * running items are taken over, still running, by the frontend that takes over its work ({@link #release}).
 */
final class QueueRunner {
  private static final Logger LOG = System.getLogger(QueueRunner.class.getName());
  /** How often waiting items are claimed. */
  static final long POLL_INTERVAL_MS = 50;
  /** The most items one claim takes. */
  private static final int CLAIM_BATCH = 32;
  /** The most ended items one retention step deletes. */
  private static final int EXPIRE_BATCH = 2_000;
  /** How long before an item whose outcome was not final is asked again. */
  private static final long RETRY_MS = 500;

  private final ApiaryDatabase db;
  private final FrontendConfig config;
  private final String frontendId;
  private final GraphCatalog catalog;
  private final InvocationCoordinator coordinator;
  private final FrontendHooks hooks;
  private final ScheduledExecutorService scheduler;
  private volatile boolean running = true;
  /** How long the claiming rounds use the declared queues' names before reading them again. */
  private static final long NAMES_TTL_NANOS = TimeUnit.SECONDS.toNanos(1);
  /** The declared queues' names as last read (claiming rounds only, on one scheduler thread at a time). */
  private volatile List<String> queueNames;
  private volatile long namesReadAt;

  QueueRunner(ApiaryDatabase db, FrontendConfig config, String frontendId, GraphCatalog catalog,
              InvocationCoordinator coordinator, FrontendHooks hooks, ScheduledExecutorService scheduler) {
    this.db = db;
    this.config = config;
    this.frontendId = frontendId;
    this.catalog = catalog;
    this.coordinator = coordinator;
    this.hooks = hooks;
    this.scheduler = scheduler;
  }

  /** Schedules the claiming rounds (only where the invocation log is kept: items run as logged invocations). */
  void start() {
    if (config.invocationLog()) {
      scheduler.scheduleWithFixedDelay(this::claimRound, POLL_INTERVAL_MS, POLL_INTERVAL_MS, TimeUnit.MILLISECONDS);
    }
  }

  void stop() {
    running = false;
  }

  // ---------------------------------------------------------------- enqueue

  /**
   * Enqueues a checked request (its caller and roles established): answers {@code reply} with {@code ok} and the
   * item's invocation ID (the client's form) as the one output, or with the refusal.
   *
   * @param request the request as stored (type {@link WireRequest#ENQUEUE}, with queue and optional dedup ID)
   * @param requestHash the hash by which a repeated enqueue is recognized as the same request
   */
  void enqueue(WireRequest request, long requestHash, java.util.function.Consumer<WireReply> reply) {
    if (!config.invocationLog()) {
      throw new InvalidRequestException("frontend " + frontendId + " keeps no invocation log, so it cannot run "
          + "queued invocations; enqueue through a frontend that does");
    }
    if (request.queue() == null || request.queue().isEmpty() || request.queue().length() > 64) {
      throw new InvalidRequestException("an enqueue request names a queue of 1 to 64 characters");
    }
    if (request.dedup() != null && (request.dedup().isEmpty()
        || request.dedup().length() > WireRequest.MAX_DEDUP_LENGTH)) {
      throw new InvalidRequestException("a deduplication ID has 1 to " + WireRequest.MAX_DEDUP_LENGTH + " characters");
    }
    if (request.delayMs() != null && (request.delayMs() < 0 || request.delayMs() > WireRequest.MAX_DELAY_MS)) {
      throw new InvalidRequestException("an enqueue's delay is 0 to " + WireRequest.MAX_DELAY_MS + " ms, not "
          + request.delayMs());
    }
    String invocation = stored(request, request.id());
    String dedup = request.dedup() == null ? null : stored(request, request.dedup());
    byte[] toRun = new WireRequest(WireRequest.INVOKE, request.id(), request.graph(), request.key(), request.args(),
        request.caller(), null, request.purpose(), request.roles(), null).toBytes();
    String partKey = request.key() == null ? "null" : request.key().toString();
    if (partKey.getBytes(StandardCharsets.UTF_8).length > SystemSchema.QUEUE_PART_KEY_BYTES) {
      throw new InvalidRequestException("an enqueued item's partition key is at most "
          + SystemSchema.QUEUE_PART_KEY_BYTES + " bytes as JSON text");
    }
    long deadline = request.expires() == null ? 0L : request.expires() + config.clockSkewAllowance().toMillis();
    InvocationLog.callAsync(db, "enqueuing invocation " + request.id() + " on queue " + request.queue(),
        SystemSchema.ENQUEUE_ITEM_BEFORE, request.queue(), invocation, dedup, request.graph(), toRun, requestHash,
        request.delayMs() == null ? 0L : request.delayMs(), request.priority() == null ? 0 : request.priority(),
        partKey, deadline)
        .whenComplete((r, err) -> {
          if (err != null) {
            reply.accept(InvocationCoordinator.toReply(request.id(), InvocationCoordinator.unwrap(err)));
            return;
          }
          VoltTable t = r.getResults()[0];
          t.advanceRow();
          long outcome = t.getLong(0);
          String itemId = clientId(request, t.getString(1));
          if (outcome == EnqueueItemBefore.PAST_DEADLINE) {
            reply.accept(WireReply.error(request.id(), WireReply.EXPIRED, "enqueue of invocation " + request.id()
                + " reached the database after its client stopped waiting (its expiry, " + request.expires()
                + " ms since the epoch by the client's clock, plus " + config.clockSkewAllowance().toMillis()
                + " ms of clock skew allowed): frontend " + frontendId + " held it too long; nothing was enqueued"));
          } else if (outcome == EnqueueRankedItem.NO_PRIORITY) {
            reply.accept(WireReply.error(request.id(), WireReply.INVALID_REQUEST, "queue '" + request.queue()
                + "' was declared without priority, so an item cannot have priority " + request.priority()
                + " (declare it with Queue.priority()); nothing was enqueued"));
          } else if (outcome == EnqueueRankedItem.UNKNOWN_QUEUE && org.apiary.Queue.DELAYED.equals(request.queue())) {
            reply.accept(WireReply.error(request.id(), WireReply.INVALID_REQUEST, "a delayed start needs the queue '"
                + request.queue() + "', which registering an application declares from this version of Apiary on: "
                + "deploy the application again; nothing was started"));
          } else if (outcome == EnqueueRankedItem.UNKNOWN_QUEUE) {
            reply.accept(WireReply.error(request.id(), WireReply.INVALID_REQUEST, "unknown queue '" + request.queue()
                + "': declare it with the application (Application.withQueues); nothing was enqueued"));
          } else if (outcome == EnqueueRankedItem.CONFLICT) {
            reply.accept(WireReply.error(request.id(), WireReply.INVALID_REQUEST, (request.dedup() != null
                ? "deduplication ID '" + request.dedup() + "'" : "invocation ID '" + request.id() + "'")
                + " of queue '" + request.queue() + "' is taken by invocation " + itemId + " (graph '"
                + t.getString(2) + "', " + t.getString(3) + ") with a different request; nothing was enqueued"));
          } else {
            reply.accept(WireReply.ok(request.id(), List.of(new Output("invocation", null,
                com.fasterxml.jackson.databind.node.TextNode.valueOf(itemId)))));
          }
        });
  }

  /**
   * Stores an item a function enqueued in its transaction ({@link Dispatcher.Enqueuer}), under the ID the dispatcher
   * derived, with the invocation's caller, purpose and roles. A refusal that no later attempt can change (unknown
   * queue or graph, wrong arguments, a deduplication ID taken by a different request) fails with a
   * {@link org.apiary.FunctionFailedException} naming the function; anything else fails so the attempt is repeated.
   */
  CompletableFuture<Void> enqueueFromFunction(String function, String caller, String purpose, String roles,
                                              String itemId, com.fasterxml.jackson.databind.JsonNode item) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    try {
      String queue = item.path("queue").asText(null);
      String dedup = item.path("dedup").isTextual() ? item.path("dedup").asText() : null;
      String graphName = item.path("graph").asText(null);
      com.fasterxml.jackson.databind.JsonNode key = item.get("key") == null || item.get("key").isNull() ? null
          : item.get("key");
      List<com.fasterxml.jackson.databind.JsonNode> args = new ArrayList<>();
      item.path("args").forEach(args::add);
      Optional<GraphCatalog.Versioned> graph = graphName == null ? Optional.empty() : catalog.known(graphName);
      if (graphName != null && graph.isEmpty()) {
        catalog.reload();
        graph = catalog.known(graphName);
      }
      if (graph.isEmpty()) {
        throw new InvalidRequestException("unknown graph '" + graphName + "'");
      }
      Dispatcher.checkRequest(graph.get().graph(), key, args);
      Long delayMs = item.path("delayMs").canConvertToLong() ? item.path("delayMs").asLong() : null;
      Integer priority = item.path("priority").canConvertToInt() ? item.path("priority").asInt() : null;
      WireRequest request = new WireRequest(WireRequest.ENQUEUE, itemId, graphName, key, args, caller, null, purpose,
          roles, null, queue, dedup, delayMs, priority);
      long hash = OneTransactionOutcomes.requestHash(graphName, key, args,
          config.credentialsRequired() ? caller : null);
      enqueue(request, hash, reply -> {
        if (WireReply.OK.equals(reply.status())) {
          done.complete(null);
        } else if (WireReply.INVALID_REQUEST.equals(reply.error())) {
          done.completeExceptionally(refused(function, queue, reply.message()));
        } else {
          done.completeExceptionally(new org.apiary.DatabaseException("enqueuing on queue '" + queue + "' for function '"
              + function + "' failed: " + reply.message()));
        }
      });
    } catch (InvalidRequestException e) {
      done.completeExceptionally(refused(function, item.path("queue").asText(null), e.getMessage()));
    }
    return done;
  }

  private static org.apiary.FunctionFailedException refused(String function, String queue, String why) {
    return new org.apiary.FunctionFailedException(function, "EnqueueRefused", "function '" + function + "' enqueued on "
        + "queue '" + queue + "', which was refused after its transaction committed: " + why);
  }

  /** An ID as stored: scoped by the caller's identity where credentials are required. */
  private String stored(WireRequest request, String id) {
    return config.credentialsRequired() ? Credentials.invocationId(request.caller(), id) : id;
  }

  /** A stored invocation ID in the form its caller knows it (without the identity scope). */
  private String clientId(WireRequest request, String storedId) {
    String prefix = config.credentialsRequired() ? Credentials.invocationId(request.caller(), "") : null;
    return prefix != null && storedId.startsWith(prefix) ? storedId.substring(prefix.length()) : storedId;
  }

  /** A queue item found by invocation ID: its queue, its ID as stored, its status and (if cancelled) its outcome. */
  record Found(String queue, String invocation, String status, byte[] outcome) {}

  /**
   * The queue item stored under the first of these invocation IDs that names one (a multi-partition read per ID), or
   * empty if none does.
   */
  CompletableFuture<Optional<Found>> item(List<String> invocations) {
    CompletableFuture<Optional<Found>> all = CompletableFuture.completedFuture(Optional.empty());
    for (String id : invocations) {
      all = all.thenCompose(found -> found.isPresent() ? CompletableFuture.completedFuture(found)
          : InvocationLog.callAsync(db, "looking for queue item " + id, SystemSchema.FIND_QUEUE_ITEM_OUTCOME, id)
              .thenApply(r -> {
                VoltTable t = r.getResults()[0];
                return t.advanceRow() ? Optional.of(new Found(t.getString(0), id, t.getString(1),
                    t.getVarbinary(2))) : Optional.<Found>empty();
              }));
    }
    return all;
  }

  /**
   * Cancels a waiting item ({@code CancelQueueItem}): true if it was still waiting and now is cancelled with
   * {@code outcome}, false if a claim took it first.
   */
  CompletableFuture<Boolean> cancelWaiting(Found item, WireReply outcome) {
    return InvocationLog.callAsync(db, "cancelling queue item " + item.invocation(), SystemSchema.CANCEL_QUEUE_ITEM,
        item.queue(), item.invocation(), outcome.toBytes()).thenApply(r -> r.getResults()[0].asScalarLong() == 1);
  }

  /** The status of an item waiting on its queue (or for its delay), not claimed yet. */
  static final String QUEUED = "QUEUED";

  /** Whether an item of this status has not ended: waiting on its queue, or claimed and running. */
  static boolean waiting(String status) {
    return "QUEUED".equals(status) || "RUNNING".equals(status);
  }

  // ---------------------------------------------------------------- running

  /** The declared queues, read from the database (a replicated table, so any partition answers). */
  private List<String> queues() {
    VoltTable t = db.callAdmin("reading the declared queues", "@AdHoc", "SELECT name FROM " + SystemSchema.QUEUES
        + " ORDER BY name").getResults()[0];
    List<String> names = new ArrayList<>();
    while (t.advanceRow()) {
      names.add(t.getString(0));
    }
    return names;
  }

  /**
   * The declared queues as the claiming rounds see them: read again at most every {@link #NAMES_TTL_NANOS} (a queue
   * registered since is claimed from within a second), so an idle round is one transaction per queue.
   */
  private List<String> claimedQueues() {
    long now = System.nanoTime();
    List<String> names = queueNames;
    if (names == null || now - namesReadAt > NAMES_TTL_NANOS) {
      names = queues();
      queueNames = names;
      namesReadAt = now;
    }
    return names;
  }

  private void claimRound() {
    if (!running) {
      return;
    }
    try {
      hooks.beforeClaimingQueueItems();
      for (String queue : claimedQueues()) {
        int room = config.maxInFlight() - coordinator.inFlight();
        if (room <= 0 || !running) {
          return;
        }
        VoltTable[] result = db.callAdmin("claiming items of queue " + queue, SystemSchema.CLAIM_RANKED_QUEUE_ITEMS,
            queue, frontendId, Math.min(room, CLAIM_BATCH)).getResults();
        VoltTable claimed = result[0];
        long startBy = startBy(result[1]); // one claim, one time, for all its items
        while (claimed.advanceRow()) {
          run(queue, claimed.getString(0), claimed.getVarbinary(1), startBy);
        }
      }
    } catch (RuntimeException e) {
      if (running) { // after close, an interrupted call is expected
        LOG.log(Level.WARNING, "frontend " + frontendId + ": claiming queued items failed; retrying in "
            + POLL_INTERVAL_MS + " ms: " + e.getMessage());
      }
    }
  }

  /**
   * The latest database time at which an item claimed (or taken over, or confirmed) at the time {@code claimTime}
   * holds may be logged as a new invocation: the retention less twice the clock skew allowed after it. Until then
   * any other frontend's run of the item began after this claim, so its log entry is kept (retention deletes an
   * entry no earlier than the retention after it ended), and the start finds it instead of running the item again;
   * later, a paused frontend's item may have been taken over, run and deleted, and {@link #confirm} asks first.
   */
  private long startBy(VoltTable claimTime) {
    claimTime.resetRowPosition();
    claimTime.advanceRow();
    long retention = config.retention().toMillis();
    long window = Math.max(retention - 2 * config.clockSkewAllowance().toMillis(), retention / 2);
    return claimTime.getLong(0) + window;
  }

  /** Runs a claimed item as an invocation, logged as new no later than {@code startBy}; its outcome ends the item. */
  private void run(String queue, String invocation, byte[] frame, long startBy) {
    if (!running) {
      return; // claimed but not started: the frontend that takes over this one runs it once its lease expires
    }
    WireRequest request = WireRequest.fromBytes(frame);
    Optional<GraphCatalog.Versioned> graph = catalog.known(request.graph());
    if (graph.isEmpty()) {
      catalog.reload();
      graph = catalog.known(request.graph());
    }
    if (graph.isEmpty()) {
      finish(queue, invocation, WireReply.error(request.id(), WireReply.INVALID_REQUEST, "unknown graph '"
          + request.graph() + "'"));
      return;
    }
    byte[] owner = ("queue:" + queue).getBytes(StandardCharsets.UTF_8);
    try {
      coordinator.invokeQueued(owner, request, frame, graph.get(), startBy,
          reply -> ended(queue, invocation, frame, startBy, reply));
    } catch (RuntimeException e) {
      ended(queue, invocation, frame, startBy, InvocationCoordinator.toReply(request.id(), e));
    }
  }

  /**
   * An item's invocation answered: a final outcome ends the item; a start refused because the claim grew too old is
   * confirmed first; any other answer is asked for again later.
   */
  private void ended(String queue, String invocation, byte[] frame, long startBy, WireReply reply) {
    if (finalOutcome(reply)) {
      finish(queue, invocation, reply);
    } else if (WireReply.EXPIRED.equals(reply.error()) && running) {
      confirm(queue, invocation, frame, reply.message());
    } else if (running) {
      later(() -> run(queue, invocation, frame, startBy), "asking again for the outcome of queue item " + invocation);
    }
  }

  /**
   * Asks whether this frontend still holds an item whose claim grew too old to start its invocation
   * ({@code ConfirmQueueClaim}): if so, runs it again, to be started within the retention of the confirmation; if not
   * (another frontend took it over while this one was paused, and perhaps ran it and retention deleted it), leaves it.
   */
  private void confirm(String queue, String invocation, byte[] frame, String why) {
    InvocationLog.callAsync(db, "confirming the claim of queue item " + invocation, SystemSchema.CONFIRM_QUEUE_CLAIM,
        queue, invocation).whenComplete((r, err) -> {
          if (err != null) {
            if (running) {
              LOG.log(Level.WARNING, "frontend " + frontendId + ": could not confirm its claim of queue item "
                  + invocation + " of queue " + queue + " (" + InvocationCoordinator.unwrap(err).getMessage()
                  + "); trying again in " + RETRY_MS + " ms");
              later(() -> confirm(queue, invocation, frame, why), "confirming queue item " + invocation);
            }
            return;
          }
          VoltTable item = r.getResults()[0];
          if (item.advanceRow() && "RUNNING".equals(item.getString(0)) && frontendId.equals(item.getString(1))) {
            run(queue, invocation, frame, startBy(r.getResults()[1]));
          } else {
            LOG.log(Level.INFO, "frontend " + frontendId + " leaves queue item " + invocation + " of queue " + queue
                + ": " + why + "; the item is now " + (item.getRowCount() == 0 ? "gone (ended past the retention)"
                : item.getString(0) + " on frontend " + item.getString(1)));
          }
        });
  }

  /**
   * Runs {@code task} after {@link #RETRY_MS}, unless the frontend is stopping: then the item stays running on this
   * frontend until the frontend that takes over its lease runs it.
   */
  private void later(Runnable task, String what) {
    try {
      scheduler.schedule(task, RETRY_MS, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      LOG.log(Level.DEBUG, "frontend " + frontendId + " is stopping, so it is not " + what + "; the takeover of its "
          + "lease runs the item (" + e.getMessage() + ")");
    }
  }

  private static boolean finalOutcome(WireReply reply) {
    return WireReply.OK.equals(reply.status()) || WireReply.FUNCTION_FAILED.equals(reply.error())
        || WireReply.INVOCATION_FAILED.equals(reply.error()) || WireReply.CANCELLED.equals(reply.error())
        || WireReply.INVALID_REQUEST.equals(reply.error()) || WireReply.FORBIDDEN.equals(reply.error());
  }

  private void finish(String queue, String invocation, WireReply reply) {
    String status = WireReply.OK.equals(reply.status()) ? InvocationLog.DONE
        : WireReply.CANCELLED.equals(reply.error()) ? InvocationLog.CANCELLED : InvocationLog.FAILED;
    InvocationLog.callAsync(db, "ending queue item " + invocation, SystemSchema.FINISH_QUEUE_ITEM, queue, invocation,
        frontendId, status).whenComplete((r, err) -> {
          if (err != null && running) {
            LOG.log(Level.WARNING, "frontend " + frontendId + ": could not end queue item " + invocation + " of queue "
                + queue + " (" + InvocationCoordinator.unwrap(err).getMessage() + "); trying again in " + RETRY_MS
                + " ms");
            later(() -> finish(queue, invocation, reply), "ending queue item " + invocation);
          }
        });
  }

  /**
   * Retention for queues: deletes, per queue, the items that ended more than {@code retention} ago by the database's
   * clock, in steps of at most {@value #EXPIRE_BATCH} (each one single-partition transaction), never a waiting or
   * running item. Their deduplication IDs are free again.
   *
   * @return how many items were deleted
   */
  long deleteEnded(java.time.Duration retention) {
    long deleted = 0;
    for (String queue : queues()) {
      long n;
      do {
        n = db.callAdmin("deleting ended items of queue " + queue, SystemSchema.EXPIRE_QUEUE_ITEMS, queue,
            retention.toMillis(), EXPIRE_BATCH).getResults()[0].asScalarLong();
        deleted += n;
      } while (n == EXPIRE_BATCH && running);
    }
    return deleted;
  }

  /**
   * Takes a dead frontend's running items over (a step of the takeover, after its invocations were moved here and
   * before its lease is forgotten: a takeover cut short leaves the lease, and the next one does this again): they stay
   * running, now on this frontend, so they keep their places in their queues' limits ({@code AdoptQueueItems}), and
   * each is asked for its invocation's outcome as a claimed item is, which attaches to the invocation taken over with
   * them (or gets its stored outcome) and ends the item. This frontend's per-frontend count may exceed its limit until
   * they end.
   *
   * @return how many items were taken over
   */
  long release(String deadFrontend) {
    long adopted = 0;
    for (String queue : queues()) {
      VoltTable[] result = db.callAdmin("taking over the items of queue " + queue + " that frontend " + deadFrontend
          + " ran", SystemSchema.ADOPT_QUEUE_ITEMS, queue, deadFrontend, frontendId).getResults();
      VoltTable items = result[0];
      long startBy = startBy(result[1]); // one takeover, one time, for all its items
      while (items.advanceRow()) {
        String invocation = items.getString(0);
        byte[] frame = items.getVarbinary(1);
        // after this takeover round, which first resumes the invocations it moved here
        later(() -> run(queue, invocation, frame, startBy), "running queue item " + invocation + " it took over");
        adopted++;
      }
    }
    return adopted;
  }
}
