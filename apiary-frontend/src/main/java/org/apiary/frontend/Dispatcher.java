package org.apiary.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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

  public Dispatcher(ApiaryDatabase db, GraphCatalog catalog, FunctionListener listener) {
    this.db = db;
    this.catalog = catalog;
    this.listener = listener;
  }

  /**
   * Checks a client's request against a graph before anything runs.
   *
   * @throws InvalidRequestException naming the argument, edge or key that is wrong
   */
  public static void checkRequest(RegisteredGraph graph, JsonNode key, List<JsonNode> args) {
    boolean needsKey = false;
    for (RegisteredGraph.Edge e : graph.edgesFrom(Graph.SOURCE)) {
      boolean targetLocal = graph.node(e.to()).map(RegisteredGraph.Node::local).orElse(false);
      if (args.isEmpty() && (e.kind() != ValueKind.ANY || targetLocal)) {
        // A local function that receives nothing never runs: the call would end "ok" having done nothing.
        throw new InvalidRequestException("graph '" + graph.name() + "' takes at least one argument: edge '" + e.id()
            + "' from the source into function '" + e.to() + "' carries " + e.kind().describe() + "; got no arguments");
      }
      for (int i = 0; i < args.size(); i++) {
        if (!e.kind().accepts(args.get(i))) {
          throw new InvalidRequestException("argument " + (i + 1) + " of graph '" + graph.name() + "' is "
              + ValueKind.describe(args.get(i)) + " but edge '" + e.id() + "' into function '" + e.to()
              + "' carries " + e.kind().describe());
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
    return execute(graph, invocationId, key, args, caller, null, null, firstRun, requestHash);
  }

  /**
   * Runs one execution of a graph for a caller with roles who stated a data-use purpose (both recorded in
   * provenance with every function execution, as the caller is); otherwise as {@link #execute(RegisteredGraph,
   * String, JsonNode, List, String, boolean, Long)}.
   *
   * @param purpose the stated purpose, or {@code null}
   * @param callerRoles the caller's roles, sorted and comma-separated, or {@code null}
   */
  public CompletableFuture<List<Output>> execute(RegisteredGraph graph, String invocationId, JsonNode key,
                                                 List<JsonNode> args, String caller, String purpose,
                                                 String callerRoles, boolean firstRun, Long requestHash) {
    Execution e = new Execution(graph, invocationId, caller, purpose, callerRoles, firstRun, requestHash,
        new FunctionInvoker(db, catalog.functions()));
    e.start(key, args);
    return e.result;
  }

  /** The state of one graph execution. Guarded by its own monitor; calls are launched outside it. */
  private final class Execution {
    private final RegisteredGraph graph;
    private final String invocationId;
    private final String caller;
    private final String purpose;
    private final String callerRoles;
    private final boolean firstRun;
    private final Long requestHash;
    private final FunctionInvoker invoker;
    private final CompletableFuture<List<Output>> result = new CompletableFuture<>();
    private final Map<String, Integer> topoIndex = new HashMap<>();
    /** Per function: arrivals by the sender's topological index (source = -1), so arrival order is stable. */
    private final Map<String, TreeMap<Integer, List<Output>>> inbox = new HashMap<>();
    private final Map<String, Integer> waitingFor = new HashMap<>();
    private final Map<String, Set<String>> successors = new HashMap<>();
    private final TreeMap<Integer, List<Output>> sink = new TreeMap<>();
    private int unfinished;

    Execution(RegisteredGraph graph, String invocationId, String caller, String purpose, String callerRoles,
              boolean firstRun, Long requestHash,
              FunctionInvoker invoker) {
      this.graph = graph;
      this.invocationId = invocationId;
      this.caller = caller;
      this.purpose = purpose;
      this.callerRoles = callerRoles;
      this.firstRun = firstRun;
      this.requestHash = requestHash;
      this.invoker = invoker;
      topoIndex.put(Graph.SOURCE, -1);
      for (int i = 0; i < graph.nodes().size(); i++) {
        topoIndex.put(graph.nodes().get(i).function(), i);
      }
      Map<String, Set<String>> predecessors = new HashMap<>();
      for (RegisteredGraph.Edge edge : graph.edges()) {
        if (!edge.to().equals(Graph.SINK)) {
          predecessors.computeIfAbsent(edge.to(), k -> new java.util.HashSet<>()).add(edge.from());
          successors.computeIfAbsent(edge.from(), k -> new java.util.LinkedHashSet<>()).add(edge.to());
        }
      }
      for (RegisteredGraph.Node n : graph.nodes()) {
        waitingFor.put(n.function(), predecessors.getOrDefault(n.function(), Set.of()).size());
        inbox.put(n.function(), new TreeMap<>());
      }
      unfinished = graph.nodes().size();
    }

    void start(JsonNode key, List<JsonNode> args) {
      List<Output> fromSource = new ArrayList<>();
      for (RegisteredGraph.Edge edge : graph.edgesFrom(Graph.SOURCE)) {
        for (JsonNode arg : args) {
          fromSource.add(new Output(edge.id(), key, arg));
        }
      }
      List<String> ready;
      try {
        synchronized (this) {
          ready = route(Graph.SOURCE, fromSource);
        }
      } catch (RuntimeException e) {
        fail(e);
        return;
      }
      launch(ready);
    }

    private void launch(List<String> ready) {
      for (String function : ready) {
        if (result.isDone()) {
          return;
        }
        try {
          run(graph.node(function).orElseThrow());
        } catch (RuntimeException e) {
          fail(e);
        }
      }
    }

    private void run(RegisteredGraph.Node node) {
      String fn = node.function();
      List<Output> arrivals = new ArrayList<>();
      synchronized (this) {
        inbox.get(fn).values().forEach(arrivals::addAll);
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
      if (instances.isEmpty()) {
        finished(fn, List.of());
        return;
      }
      if (instances.size() > MAX_FAN_OUT) {
        throw new FunctionFailedException(fn, "FanOutTooWide", "function '" + fn + "' of graph '" + graph.name()
            + "' was sent values for " + instances.size() + " partition keys, so it would run " + instances.size()
            + " times in one invocation; at most " + MAX_FAN_OUT + " runs per function are allowed. Send fewer "
            + "distinct keys, or split the work over several invocations");
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
            firstRun && record, graph.mode() != org.apiary.RecordingMode.NONE, outputEdges(fn),
            record ? requestHash : null, purpose, callerRoles);
        call(fn, key, call).whenComplete(completion(fn, r -> {
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
            finished(fn, outputs);
          }
        }));
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
        if (!call.record() || !(cause instanceof FunctionFailedException f)
            || f.errorType().equals(Invocation.STALE_GRAPH) || f.errorType().equals(Invocation.CONFLICTING_REQUEST)) {
          return CompletableFuture.<FunctionResult>failedFuture(cause);
        }
        Invocation replay = call.replay();
        if (Invocation.RECORDED_ELSEWHERE.equals(f.errorType())) {
          return invoker.callAsync(fn, key, replay);
        }
        String table = SystemSchema.recordedTable(graph.node(fn).orElseThrow().keyType());
        Object recordKey = OneTransactionOutcomes.recordKey(key, call.invocationId());
        return InvocationLog.callAsync(db, "recording the failure of function '" + fn + "'",
                SystemSchema.recordFailureProcedure(table), recordKey, call.invocationId(), fn,
                FunctionErrors.recordedFailure(f), call.requestHash())
            // Recorded: the failure stands. Not recorded (another execution recorded first, or no answer): replay.
            .handle((ok, recordErr) -> recordErr == null
                ? CompletableFuture.<FunctionResult>failedFuture(f)
                : invoker.callAsync(fn, key, replay))
            .thenCompose(x -> x);
      }).thenCompose(x -> x);
    }

    /** The edges out of a function, with what they carry and the key type of their target. */
    private Map<String, Invocation.OutputEdge> outputEdges(String fn) {
      Map<String, Invocation.OutputEdge> edges = new LinkedHashMap<>();
      for (RegisteredGraph.Edge e : graph.edgesFrom(fn)) {
        RegisteredGraph.Node target = e.to().equals(Graph.SINK) ? null : graph.node(e.to()).orElseThrow();
        edges.put(e.id(), new Invocation.OutputEdge(e.kind(),
            target != null && target.local() ? target.keyType() : null));
      }
      return edges;
    }

    private BiConsumer<FunctionResult, Throwable> completion(String fn, java.util.function.Consumer<FunctionResult> onSuccess) {
      return (r, err) -> {
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

    private void finished(String fn, List<Output> outputs) {
      List<String> ready;
      synchronized (this) {
        ready = route(fn, outputs);
      }
      launch(ready);
    }

    /** Sends a finished node's outputs along its edges; returns the nodes that became ready. Holds the monitor. */
    private List<String> route(String from, List<Output> outputs) {
      int sender = topoIndex.get(from);
      for (Output o : outputs) {
        RegisteredGraph.Edge edge = graph.edges().stream()
            .filter(e -> e.from().equals(from) && e.id().equals(o.edge())).findFirst()
            .orElseThrow(() -> new FunctionFailedException(from, "UnknownEdge", "function '" + from
                + "' returned a value on edge '" + o.edge() + "', but graph '" + graph.name() + "' has no edge '"
                + o.edge() + "' out of it; its edges are "
                + graph.edgesFrom(from).stream().map(RegisteredGraph.Edge::id).toList()));
        if (!edge.kind().accepts(o.value())) {
          throw new FunctionFailedException(from, "WrongValueType", "function '" + from + "' sent "
              + ValueKind.describe(o.value()) + " on edge '" + edge.id() + "', which carries " + edge.kind().describe());
        }
        RegisteredGraph.Node target = edge.to().equals(Graph.SINK) ? null : graph.node(edge.to()).orElseThrow();
        if (target != null && target.local() && o.partitionKey() != null) {
          try {
            target.keyType().fromJson(o.partitionKey(), "partition key");
          } catch (IllegalArgumentException e) {
            throw new FunctionFailedException(from, "WrongPartitionKey", "function '" + from + "' sent a value on edge '"
                + edge.id() + "' with partition key " + o.partitionKey() + ", but local function '" + edge.to()
                + "' is keyed by " + target.keyType().javaType().getSimpleName() + ": " + e.getMessage());
          }
        }
        if (edge.to().equals(Graph.SINK)) {
          sink.computeIfAbsent(sender, k -> new ArrayList<>()).add(o);
        } else {
          inbox.get(edge.to()).computeIfAbsent(sender, k -> new ArrayList<>()).add(o);
        }
      }
      List<String> ready = new ArrayList<>();
      for (String next : successors.getOrDefault(from, Set.of())) {
        if (waitingFor.merge(next, -1, Integer::sum) == 0) {
          ready.add(next);
        }
      }
      if (!from.equals(Graph.SOURCE) && --unfinished == 0) {
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
