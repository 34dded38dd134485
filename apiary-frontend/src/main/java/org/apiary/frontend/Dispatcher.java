package org.apiary.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.BiConsumer;
import org.apiary.FunctionFailedException;
import org.apiary.Graph;
import org.apiary.InvalidRequestException;
import org.apiary.internal.Output;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.FunctionErrors;
import org.apiary.internal.ExecutionRefusedException;
import org.apiary.internal.Invocation;
import org.apiary.runtime.SystemSchema;
import org.apiary.internal.ValueKind;
import org.apiary.runtime.FunctionInvoker;
import org.apiary.runtime.FunctionResult;

/**
 * Runs graph executions (paper section 5.3): functions in topological order, each output passed along its edge; a
 * local function runs once per distinct partition key among its inputs, all in parallel, each run receiving only
 * its key's inputs. Every call goes through VoltDB's asynchronous client and the execution continues on the
 * client's callback thread when the answer arrives, so many executions are in flight and no thread waits for the
 * database. Continuations never block: VoltDB lets its callback threads queue further calls without waiting for
 * backpressure, and each thread hand-off costs latency.
 */
public final class Dispatcher {
  /**
   * The most runs of one function in one invocation (distinct partition keys it is sent values for); beyond it the
   * invocation ends with a {@code FanOutTooWide} failure before any of them runs, instead of flooding the database.
   */
  static final int MAX_FAN_OUT = 10_000;

  /** Called after each function execution of a graph has returned; the frontend's fault injection hangs here. */
  public interface FunctionListener {
    void executed(String graph, String invocation, String function, FunctionResult result);
  }

  private final ApiaryDatabase db;
  private final GraphCatalog catalog;
  private final FunctionListener listener;
  /** Where a function's completion runs when its answer came before the completion was attached. */
  private final java.util.concurrent.Executor completions;
  /**
   * Plans of the graph versions this dispatcher ran, by identity (a catalog load makes new objects only when
   * something was registered, and a record's own hash would walk the whole graph per call); emptied when large.
   */
  private final Map<RegisteredGraph, Planned> plans = new java.util.IdentityHashMap<>();
  /** Each function's meters, found by name once per plan, not per call. */
  private final FrontendMetrics metrics;

  /** A graph version's plan with its functions' meters, by function index. */
  private record Planned(DispatchPlan plan, FrontendMetrics.FunctionMeters[] meters) {}
  private static final int MAX_PLANS = 1_024;
  /** Runs the external steps (its threads start at the first one, so a frontend whose graphs have none has none). */
  private final ExternalSteps externalSteps;
  private final FrontendTracing tracing = new FrontendTracing();
  private boolean closed;

  /**
   * Stores the enqueues a function made in its transaction (issue 42, the outbox; {@link Output#ENQUEUE_EDGE}).
   * A future failed with a {@link FunctionFailedException} ends the invocation; any other failure leaves it to be
   * attempted again, which replays the function's record and enqueues the same items again (each under the ID it was
   * given, so once).
   */
  interface Enqueuer {
    CompletableFuture<Void> enqueue(String function, String caller, String purpose, String roles, String itemId,
                                    JsonNode item);
  }

  private volatile Enqueuer enqueuer;

  /** Sets where functions' enqueues are stored; without one, a function that enqueues fails its invocation. */
  void enqueuer(Enqueuer value) {
    this.enqueuer = value;
  }

  /**
   * The invocation ID of an item a function enqueued: derived from the invocation, the function, the item and how
   * many equal items came before it in the function's outputs, so every replay of the function names the same items.
   */
  static String enqueuedItemId(String invocationId, String function, JsonNode item, int occurrence) {
    String basis = invocationId + "\u0000" + function + "\u0000" + item + "\u0000" + occurrence;
    return "o-" + java.util.UUID.nameUUIDFromBytes(basis.getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }

  public Dispatcher(ApiaryDatabase db, GraphCatalog catalog, FunctionListener listener) {
    this(db, catalog, listener, Runnable::run);
  }

  /**
   * A dispatcher whose function completions (routing outputs, the listener, launching the next functions) run where
   * {@code completions} puts them. A completion runs on the database client's callback thread, or, when the answer
   * came before the completion was attached, on the thread that launched the function, through this executor: a
   * frontend uses it to keep that work off its socket thread.
   */
  public Dispatcher(ApiaryDatabase db, GraphCatalog catalog, FunctionListener listener,
                    java.util.concurrent.Executor completions) {
    this(db, catalog, listener, completions, FrontendMetrics.OFF);
  }

  /** As {@link #Dispatcher(ApiaryDatabase, GraphCatalog, FunctionListener, java.util.concurrent.Executor)}, metered. */
  Dispatcher(ApiaryDatabase db, GraphCatalog catalog, FunctionListener listener,
             java.util.concurrent.Executor completions, FrontendMetrics metrics) {
    this.metrics = metrics;
    this.db = db;
    this.catalog = catalog;
    this.listener = listener;
    this.completions = completions;
    this.externalSteps = new ExternalSteps(db);
  }

  /**
   * Checks a client's request against a graph before anything runs.
   *
   * @throws InvalidRequestException naming the argument, edge or key that is wrong
   */
  public static void checkRequest(RegisteredGraph graph, JsonNode key, List<JsonNode> args) {
    boolean needsKey = false;
    for (RegisteredGraph.Edge e : graph.edgesFrom(Graph.SOURCE)) {
      if (args.isEmpty() && e.kind() != ValueKind.ANY) {
        // A declared argument type says the function reads one. An untyped edge may feed a function that needs no
        // argument: called without any, a local function runs once on the key (see Execution#start), a global once.
        throw new InvalidRequestException("graph '" + graph.name() + "' takes at least one argument: edge '" + e.id()
            + "' from the source into function '" + e.to() + "' carries " + e.kind().describe() + "; got no arguments");
      }
      for (int i = 0; i < args.size(); i++) {
        if (!e.kind().accepts(args.get(i))) {
          throw new InvalidRequestException("argument " + (i + 1) + " of graph '" + graph.name() + "' is "
              + ValueKind.describe(args.get(i)) + " but edge '" + e.id() + "' into function '" + e.to()
              + "' carries " + e.kind().describe());
        }
        String mismatch = e.shape() == null ? null : e.shape().mismatch(args.get(i));
        if (mismatch != null) {
          throw new InvalidRequestException("argument " + (i + 1) + " of graph '" + graph.name() + "', for function '"
              + e.to() + "' on edge '" + e.id() + "' as a " + e.shape().type() + ": " + mismatch);
        }
      }
      RegisteredGraph.Node target = graph.node(e.to()).orElseThrow();
      if (target.local()) {
        needsKey = true;
        if (key == null) {
          throw new InvalidRequestException("graph '" + graph.name() + "' starts with local function '" + e.to()
              + "', so an invocation needs a partition key (" + target.keyType().javaType().getSimpleName() + ")");
        }
        try {
          target.keyType().fromJson(key, "partition key for function '" + e.to() + "'");
        } catch (IllegalArgumentException ex) {
          throw new InvalidRequestException("graph '" + graph.name() + "': " + ex.getMessage(), ex);
        }
      }
    }
    if (!needsKey && key != null) {
      throw new InvalidRequestException("graph '" + graph.name() + "' starts with global functions only and takes "
          + "no partition key");
    }
  }

  /**
   * Runs one execution of a graph.
   *
   * @param caller who invoked it (recorded in provenance), or {@code null}
   * @param firstRun whether the invocation was just logged as new, so recorded functions need not look for earlier
   *     outputs (see {@link Invocation#firstRun()})
   * @param requestHash for a graph that runs as one recorded transaction, the hash of the client's request stored
   *     with its record (see {@link Invocation#requestHash()}); else {@code null}
   * @return the values sent into the sink, by function in topological order, then by fan-out instance in the order
   *     its key first arrived, then in the order each execution returned them
   */
  public CompletableFuture<List<Output>> execute(RegisteredGraph graph, String invocationId, JsonNode key,
                                                 List<JsonNode> args, String caller, boolean firstRun,
                                                 Long requestHash) {
    return execute(graph, invocationId, key, args, caller, null, null, firstRun, requestHash, null, null);
  }

  /**
   * Runs one execution of a graph for a caller with roles who stated a data-use purpose (both recorded in
   * provenance with every function execution, as the caller is); otherwise as {@link #execute(RegisteredGraph,
   * String, JsonNode, List, String, boolean, Long)}.
   *
   * @param purpose the stated purpose, or {@code null}
   * @param callerRoles the caller's roles, sorted and comma-separated, or {@code null}
   * @param notBefore the retention fence of the invocation's recorded executions ({@link Invocation#notBefore()}),
   *     or {@code null}
   * @param deadline the latest database time at which its recorded executions may run ({@link Invocation#deadline()}),
   *     or {@code null}
   */
  public CompletableFuture<List<Output>> execute(RegisteredGraph graph, String invocationId, JsonNode key,
                                                 List<JsonNode> args, String caller, String purpose,
                                                 String callerRoles, boolean firstRun, Long requestHash,
                                                 Long notBefore, Long deadline) {
    return execute(graph, null, invocationId, key, args, caller, purpose, callerRoles, firstRun, requestHash,
        notBefore, deadline, null);
  }

  /**
   * Admits the functions an execution is about to start, each wave of them, the first included (issue 42, cancel):
   * the execution starts them only once the future completes normally, and fails with its error otherwise.
   */
  interface Gate {
    /** @param functions the names of the functions about to start */
    CompletableFuture<Void> admit(List<String> functions);

    /**
     * Checked on the step's own thread right before each attempt of an external step calls out; throws if the
     * execution may no longer call (see {@link LeaseTerm}), which ends the step's attempts.
     */
    default void beforeCallingOut(String step) {
    }
  }

  /**
   * As {@link #execute(RegisteredGraph, String, JsonNode, List, String, String, String, boolean, Long, Long, Long)},
   * for version {@code graphVersion} of the graph ({@code null}: not known; each function's transaction carries it
   * into the database's journal), with every wave of functions admitted by {@code gate} ({@code null}: none is
   * checked).
   */
  CompletableFuture<List<Output>> execute(RegisteredGraph graph, Integer graphVersion, String invocationId,
                                          JsonNode key, List<JsonNode> args, String caller, String purpose,
                                          String callerRoles, boolean firstRun, Long requestHash, Long notBefore,
                                          Long deadline, Gate gate) {
    return execute(graph, graphVersion, invocationId, key, args, caller, purpose, callerRoles, firstRun, requestHash,
        notBefore, deadline, gate, io.opentelemetry.context.Context.root());
  }

  /** As above, with each function execution's span under {@code trace}'s span (the graph's), if it has one. */
  CompletableFuture<List<Output>> execute(RegisteredGraph graph, Integer graphVersion, String invocationId,
                                          JsonNode key, List<JsonNode> args, String caller, String purpose,
                                          String callerRoles, boolean firstRun, Long requestHash, Long notBefore,
                                          Long deadline, Gate gate, io.opentelemetry.context.Context trace) {
    Execution e = new Execution(plan(graph), graphVersion, invocationId, caller, purpose, callerRoles, firstRun,
        requestHash, notBefore, deadline, FunctionInvoker.forwarding(db, catalog.functions()));
    e.gate = gate;
    e.trace = trace;
    e.start(key, args);
    return e.result;
  }

  private synchronized ExternalSteps externalSteps() {
    if (closed) {
      throw new IllegalStateException("this dispatcher is closed");
    }
    return externalSteps;
  }

  /** Stops the external steps' threads, interrupting attempts still running. */
  synchronized void close() {
    closed = true;
    externalSteps.close();
  }

  private Planned plan(RegisteredGraph graph) {
    synchronized (plans) {
      Planned planned = plans.get(graph);
      if (planned == null) {
        if (plans.size() >= MAX_PLANS) {
          plans.clear();
        }
        DispatchPlan plan = new DispatchPlan(graph);
        FrontendMetrics.FunctionMeters[] meters = new FrontendMetrics.FunctionMeters[plan.size()];
        for (int i = 0; i < meters.length; i++) {
          meters[i] = metrics.function(plan.node(i).function());
        }
        planned = new Planned(plan, meters);
        plans.put(graph, planned);
      }
      return planned;
    }
  }

  /** The state of one graph execution. Guarded by its own monitor; calls are launched outside it. */
  private final class Execution {
    private final DispatchPlan plan;
    private final FrontendMetrics.FunctionMeters[] meters;
    private final RegisteredGraph graph;
    private final String invocationId;
    private final String caller;
    private final String purpose;
    private final String callerRoles;
    private final boolean firstRun;
    private final Long requestHash;
    private final Long notBefore;
    private final Long deadline;
    private final Integer graphVersion;
    private final FunctionInvoker invoker;
    private final CompletableFuture<List<Output>> result = new CompletableFuture<>();
    /** Admits each wave of functions before it starts, or {@code null}; set before {@link #start}. */
    private Gate gate;
    /** The context whose span (the graph execution's) function spans go under. */
    private io.opentelemetry.context.Context trace = io.opentelemetry.context.Context.root();
    /** Per function (by index): arrivals by the sender's topological index (source = -1), so order is stable. */
    private final List<TreeMap<Integer, List<Output>>> inbox;
    /** Per function (by index): how many of its senders have not finished. */
    private final int[] waitingFor;
    private final TreeMap<Integer, List<Output>> sink = new TreeMap<>();
    private int unfinished;
    /** The client's key when it sent no arguments: local functions the source feeds run once on it, with none. */
    private JsonNode keyWithoutArguments;

    Execution(Planned planned, Integer graphVersion, String invocationId, String caller, String purpose,
              String callerRoles, boolean firstRun, Long requestHash, Long notBefore, Long deadline,
              FunctionInvoker invoker) {
      this.plan = planned.plan();
      this.meters = planned.meters();
      this.graph = plan.graph;
      this.invocationId = invocationId;
      this.caller = caller;
      this.purpose = purpose;
      this.callerRoles = callerRoles;
      this.firstRun = firstRun;
      this.requestHash = requestHash;
      this.notBefore = notBefore;
      this.deadline = deadline;
      this.graphVersion = graphVersion;
      this.invoker = invoker;
      int size = plan.size();
      inbox = new ArrayList<>(size);
      waitingFor = new int[size];
      for (int i = 0; i < size; i++) {
        inbox.add(new TreeMap<>());
        waitingFor[i] = plan.predecessors(i);
      }
      unfinished = size;
    }

    void start(JsonNode key, List<JsonNode> args) {
      keyWithoutArguments = args.isEmpty() ? key : null;
      List<Output> fromSource = new ArrayList<>();
      for (RegisteredGraph.Edge edge : plan.edgesFrom(Graph.SOURCE)) {
        for (JsonNode arg : args) {
          fromSource.add(new Output(edge.id(), key, arg));
        }
      }
      int[] ready;
      try {
        synchronized (this) {
          ready = route(DispatchPlan.SOURCE_INDEX, fromSource);
        }
      } catch (RuntimeException e) {
        fail(e);
        return;
      }
      admitThenLaunch(ready);
    }

    private boolean fedBySource(String function) {
      for (RegisteredGraph.Edge e : plan.edgesFrom(Graph.SOURCE)) {
        if (e.to().equals(function)) {
          return true;
        }
      }
      return false;
    }

    private void launch(int[] ready) {
      for (int function : ready) {
        if (result.isDone()) {
          return;
        }
        try {
          run(function);
        } catch (RuntimeException e) {
          fail(e);
        }
      }
    }

    private void run(int index) {
      RegisteredGraph.Node node = plan.node(index);
      String fn = node.function();
      List<Output> arrivals = new ArrayList<>();
      synchronized (this) {
        inbox.get(index).values().forEach(arrivals::addAll);
      }
      Map<JsonNode, Map<String, List<JsonNode>>> instances = new LinkedHashMap<>();
      for (Output o : arrivals) {
        JsonNode k = node.local() ? o.partitionKey() : null;
        if (node.local() && k == null) {
          throw new FunctionFailedException(fn, "MissingPartitionKey", "a value arrived on edge '" + o.edge()
              + "' into local function '" + fn + "' without a partition key; send it with "
              + "returnOutput(value, edge, partitionKey)");
        }
        instances.computeIfAbsent(k == null ? com.fasterxml.jackson.databind.node.NullNode.instance : k,
            x -> new LinkedHashMap<>()).computeIfAbsent(o.edge(), x -> new ArrayList<>()).add(o.value());
      }
      if (!node.local() && instances.isEmpty()) {
        instances.put(com.fasterxml.jackson.databind.node.NullNode.instance, Map.of());
      }
      if (node.local() && keyWithoutArguments != null && !keyWithoutArguments.isNull()
          && !instances.containsKey(keyWithoutArguments) && fedBySource(fn)) {
        instances.put(keyWithoutArguments, Map.of());
      }
      if (instances.isEmpty()) {
        finished(index, List.of());
        return;
      }
      if (instances.size() > MAX_FAN_OUT) {
        throw new FunctionFailedException(fn, "FanOutTooWide", "function '" + fn + "' of graph '" + graph.name()
            + "' was sent values for " + instances.size() + " partition keys, so it would run " + instances.size()
            + " times in one invocation; at most " + MAX_FAN_OUT + " runs per function are allowed. Send fewer "
            + "distinct keys, or split the work over several invocations");
      }
      if (node.external() != null) {
        // Runs once (an external step is global), off this thread; its outputs are recorded before they are routed.
        boolean recorded = node.recorded();
        FrontendMetrics.FunctionMeters meter = meters[index];
        long started = meter.off() ? 0 : System.nanoTime();
        io.opentelemetry.api.trace.Span span = tracing.startFunction(trace, fn, "external", recorded, invocationId,
            null);
        Gate g = gate;
        externalSteps().run(node, invocationId, instances.values().iterator().next(), recorded, caller,
                recorded ? notBefore : null, recorded ? deadline : null,
                () -> g == null ? CompletableFuture.completedFuture(null) : g.admit(List.of(fn)),
                g == null ? step -> { } : g::beforeCallingOut)
            .whenComplete((r, err) -> FrontendTracing.endFunction(span, r, err))
            .whenCompleteAsync(completion(fn, meter, started, r -> finished(index, r.outputs())), completions);
        return;
      }
      List<Map.Entry<JsonNode, Map<String, List<JsonNode>>>> runs = new ArrayList<>(instances.entrySet());
      FunctionResult[] results = new FunctionResult[runs.size()];
      int[] remaining = {runs.size()};
      boolean record = node.recorded();
      for (int i = 0; i < runs.size(); i++) {
        int instance = i;
        Object key = node.local()
            ? node.keyType().fromJson(runs.get(i).getKey(), "partition key for function '" + fn + "'")
            : null;
        Invocation call = new Invocation(runs.get(i).getValue(), invocationId, record, graph.name(), caller,
            firstRun && record, graph.mode() != org.apiary.RecordingMode.NONE, plan.outputEdges(index),
            record ? requestHash : null, purpose, callerRoles, record ? notBefore : null, record ? deadline : null,
            graphVersion);
        FrontendMetrics.FunctionMeters meter = meters[index];
        long started = meter.off() ? 0 : System.nanoTime();
        io.opentelemetry.api.trace.Span span = tracing.startFunction(trace, fn, node.local() ? "local" : "global",
            record, invocationId, key);
        call(fn, key, call).whenComplete((r, err) -> FrontendTracing.endFunction(span, r, err)).whenCompleteAsync(completion(fn, meter, started, r -> {
          boolean last;
          synchronized (this) {
            results[instance] = r;
            last = --remaining[0] == 0;
          }
          if (last) {
            List<Output> outputs = new ArrayList<>();
            for (FunctionResult each : results) {
              outputs.addAll(each.outputs());
            }
            finished(index, outputs);
          }
        }), completions);
      }
    }

    /**
     * Calls a function. A first run that lost the race to a concurrent retry is sent again to replay its record. A
     * recorded function that fails records its failure, so a re-execution replays the failure rather than running
     * again; if another execution recorded first, this one replays whatever that recorded.
     */
    private CompletableFuture<FunctionResult> call(String fn, Object key, Invocation call) {
      return invoker.callAsync(fn, key, call).handle((r, err) -> {
        if (err == null) {
          return CompletableFuture.completedFuture(r);
        }
        Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
        Invocation replay = call.replay();
        if (call.record() && cause instanceof ExecutionRefusedException refusal
            && refusal.reason() == ExecutionRefusedException.Reason.RECORDED_ELSEWHERE) {
          return invoker.callAsync(fn, key, replay);
        }
        if (!call.record() || !(cause instanceof FunctionFailedException f)) {
          // Refusals (nothing ran, so there is no failure of the function to record) and no answers.
          return CompletableFuture.<FunctionResult>failedFuture(cause);
        }
        String table = SystemSchema.recordedTable(graph.node(fn).orElseThrow().keyType());
        Object recordKey = OneTransactionOutcomes.recordKey(key, call.invocationId());
        return InvocationLog.callAsync(db, "recording the failure of function '" + fn + "'",
                SystemSchema.recordFailureFencedProcedure(table), recordKey, call.invocationId(), fn,
                FunctionErrors.recordedFailure(f), call.requestHash(), call.caller(),
                call.notBefore() == null ? 0L : call.notBefore(), call.deadline() == null ? 0L : call.deadline())
            // Recorded: the failure stands. Not recorded (another execution recorded first, or no answer): replay.
            .handle((stored, recordErr) -> recordErr == null
                && stored.getResults()[0].asScalarLong() == org.apiary.runtime.procedure.RecordFailure.RECORDED
                ? CompletableFuture.<FunctionResult>failedFuture(f)
                : invoker.callAsync(fn, key, replay))
            .thenCompose(x -> x);
      }).thenCompose(x -> x);
    }

    private BiConsumer<FunctionResult, Throwable> completion(String fn, FrontendMetrics.FunctionMeters meter,
                                                             long started,
                                                             java.util.function.Consumer<FunctionResult> onSuccess) {
      return (r, err) -> {
        if (!meter.off()) {
          long took = System.nanoTime() - started;
          if (err == null) {
            meter.succeeded(r.replayed(), took);
          } else {
            meter.failed(err, took);
          }
        }
        if (err != null) {
          fail(err);
          return;
        }
        try {
          listener.executed(graph.name(), invocationId, fn, r);
          onSuccess.accept(r);
        } catch (RuntimeException e) {
          fail(e);
        }
      };
    }

    private void finished(int index, List<Output> outputs) {
      List<Output> enqueues = new ArrayList<>();
      List<Output> routed = new ArrayList<>(outputs.size());
      for (Output o : outputs) {
        (Output.ENQUEUE_EDGE.equals(o.edge()) ? enqueues : routed).add(o);
      }
      if (enqueues.isEmpty()) {
        routeThenLaunch(index, outputs);
        return;
      }
      // The function's enqueues are stored before anything routed from it runs (and so before the invocation ends).
      String fn = plan.node(index).function();
      Enqueuer e = enqueuer;
      if (e == null) {
        fail(new FunctionFailedException(fn, "EnqueueRefused", "function '" + fn + "' enqueued work, but this "
            + "frontend runs no queues"));
        return;
      }
      Map<String, Integer> seen = new java.util.HashMap<>();
      List<CompletableFuture<Void>> stored = new ArrayList<>();
      for (Output o : enqueues) {
        try {
          // As a tree (a function's object output arrives as its bytes): the same text whatever bytes carried it.
          org.apiary.internal.ForwardedJson bytes = org.apiary.internal.ForwardedJson.of(o.value());
          JsonNode item = bytes != null ? bytes.tree() : o.value();
          int occurrence = seen.merge(item.toString(), 1, Integer::sum);
          stored.add(e.enqueue(fn, caller, purpose, callerRoles,
              enqueuedItemId(invocationId, fn, item, occurrence), item));
        } catch (RuntimeException err) {
          stored.add(CompletableFuture.failedFuture(err));
        }
      }
      CompletableFuture.allOf(stored.toArray(new CompletableFuture<?>[0])).whenCompleteAsync((ok, err) -> {
        if (err != null) {
          fail(err);
        } else {
          routeThenLaunch(index, routed);
        }
      }, completions);
    }

    private void routeThenLaunch(int index, List<Output> outputs) {
      int[] ready;
      synchronized (this) {
        ready = route(index, outputs);
      }
      admitThenLaunch(ready);
    }

    /** Launches the functions that are ready once the gate, if there is one, admits them. */
    private void admitThenLaunch(int[] ready) {
      if (gate == null || ready.length == 0 || result.isDone()) {
        launch(ready);
        return;
      }
      List<String> names = new ArrayList<>(ready.length);
      for (int function : ready) {
        names.add(plan.node(function).function());
      }
      CompletableFuture<Void> admitted;
      try {
        admitted = gate.admit(names);
      } catch (RuntimeException e) {
        fail(e);
        return;
      }
      admitted.whenCompleteAsync((ok, err) -> {
        if (err != null) {
          fail(err);
        } else {
          launch(ready);
        }
      }, completions);
    }

    /**
     * Sends a finished node's (or the source's) outputs along its edges; returns the nodes that became ready. Holds
     * the monitor.
     */
    private int[] route(int sender, List<Output> outputs) {
      String from = sender == DispatchPlan.SOURCE_INDEX ? Graph.SOURCE : plan.node(sender).function();
      for (Output o : outputs) {
        RegisteredGraph.Edge edge = plan.edge(from, o.edge());
        if (edge == null) {
          throw new FunctionFailedException(from, "UnknownEdge", "function '" + from
              + "' returned a value on edge '" + o.edge() + "', but graph '" + graph.name() + "' has no edge '"
              + o.edge() + "' out of it; its edges are "
              + plan.edgesFrom(from).stream().map(RegisteredGraph.Edge::id).toList());
        }
        if (!edge.kind().accepts(o.value())) {
          throw new FunctionFailedException(from, "WrongValueType", "function '" + from + "' sent "
              + ValueKind.describe(o.value()) + " on edge '" + edge.id() + "', which carries " + edge.kind().describe());
        }
        int to = edge.to().equals(Graph.SINK) ? -1 : plan.indexOf(edge.to());
        RegisteredGraph.Node target = to < 0 ? null : plan.node(to);
        if (target != null && target.local() && o.partitionKey() != null) {
          try {
            target.keyType().fromJson(o.partitionKey(), "partition key");
          } catch (IllegalArgumentException e) {
            throw new FunctionFailedException(from, "WrongPartitionKey", "function '" + from + "' sent a value on edge '"
                + edge.id() + "' with partition key " + o.partitionKey() + ", but local function '" + edge.to()
                + "' is keyed by " + target.keyType().javaType().getSimpleName() + ": " + e.getMessage());
          }
        }
        if (target == null) {
          sink.computeIfAbsent(sender, k -> new ArrayList<>()).add(o);
        } else {
          inbox.get(to).computeIfAbsent(sender, k -> new ArrayList<>()).add(o);
        }
      }
      int[] successors = plan.successors(sender);
      int[] ready = new int[successors.length];
      int readyCount = 0;
      for (int next : successors) {
        if (--waitingFor[next] == 0) {
          ready[readyCount++] = next;
        }
      }
      if (readyCount < ready.length) {
        ready = java.util.Arrays.copyOf(ready, readyCount);
      }
      if (sender != DispatchPlan.SOURCE_INDEX && --unfinished == 0) {
        List<Output> all = new ArrayList<>();
        sink.values().forEach(all::addAll);
        result.complete(all);
      }
      return ready;
    }

    private void fail(Throwable err) {
      Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
      result.completeExceptionally(cause);
    }
  }
}
