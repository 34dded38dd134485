package org.apiary.frontend;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apiary.Graph;
import org.apiary.internal.Invocation;

/**
 * What the dispatcher needs of a graph that is the same for every invocation of it: nodes by name, each node's
 * position, the edge an output names, successors, how many predecessors each node waits for, and the edge
 * descriptions sent with each call. Built once per registered graph version, so an invocation does no search over
 * the graph's edges per output and builds no maps of its own structure. Immutable.
 */
final class DispatchPlan {
  /** The position of the source: before every function. */
  static final int SOURCE_INDEX = -1;

  final RegisteredGraph graph;
  private final Map<String, Integer> index = new HashMap<>();
  /** Per sender (a function or the source), its edges by ID. */
  private final Map<String, Map<String, RegisteredGraph.Edge>> edgesOut = new HashMap<>();
  /** Per node index, the node indexes it sends to (not the sink), in edge order, each once. */
  private final int[][] successors;
  private final int[] sourceSuccessors;
  /** Per node index, how many distinct functions send to it. */
  private final int[] predecessors;
  /** Per node index, its outgoing edges as a call describes them (see {@link Invocation#outputEdges()}). */
  private final List<Map<String, Invocation.OutputEdge>> outputEdges = new ArrayList<>();

  DispatchPlan(RegisteredGraph graph) {
    this.graph = graph;
    List<RegisteredGraph.Node> nodes = graph.nodes();
    index.put(Graph.SOURCE, SOURCE_INDEX);
    for (int i = 0; i < nodes.size(); i++) {
      index.put(nodes.get(i).function(), i);
    }
    Map<String, Set<String>> next = new HashMap<>();
    Map<String, Set<String>> previous = new HashMap<>();
    for (RegisteredGraph.Edge e : graph.edges()) {
      edgesOut.computeIfAbsent(e.from(), k -> new LinkedHashMap<>()).putIfAbsent(e.id(), e);
      if (!e.to().equals(Graph.SINK)) {
        next.computeIfAbsent(e.from(), k -> new LinkedHashSet<>()).add(e.to());
        previous.computeIfAbsent(e.to(), k -> new LinkedHashSet<>()).add(e.from());
      }
    }
    edgesOut.replaceAll((k, v) -> Collections.unmodifiableMap(v));
    successors = new int[nodes.size()][];
    predecessors = new int[nodes.size()];
    for (int i = 0; i < nodes.size(); i++) {
      String fn = nodes.get(i).function();
      successors[i] = indexes(next.getOrDefault(fn, Set.of()));
      predecessors[i] = previous.getOrDefault(fn, Set.of()).size();
      Map<String, Invocation.OutputEdge> edges = new LinkedHashMap<>();
      for (RegisteredGraph.Edge e : edgesOut.getOrDefault(fn, Map.of()).values()) {
        RegisteredGraph.Node target = e.to().equals(Graph.SINK) ? null : nodes.get(index.get(e.to()));
        edges.put(e.id(), new Invocation.OutputEdge(e.kind(),
            target != null && target.local() ? target.keyType() : null));
      }
      outputEdges.add(Collections.unmodifiableMap(edges));
    }
    sourceSuccessors = indexes(next.getOrDefault(Graph.SOURCE, Set.of()));
  }

  private int[] indexes(Set<String> functions) {
    return functions.stream().mapToInt(index::get).toArray();
  }

  /** The number of functions. */
  int size() {
    return predecessors.length;
  }

  RegisteredGraph.Node node(int i) {
    return graph.nodes().get(i);
  }

  /**
   * A function's position in topological order, {@link #SOURCE_INDEX} for the source.
   *
   * @throws IllegalArgumentException for a name that is not a function of the graph (the sink included)
   */
  int indexOf(String function) {
    Integer i = index.get(function);
    if (i == null) {
      throw new IllegalArgumentException("graph '" + graph.name() + "' has no function '" + function + "'");
    }
    return i;
  }

  /** The edge out of {@code from} with this ID, or {@code null}. */
  RegisteredGraph.Edge edge(String from, String id) {
    return edgesOut.getOrDefault(from, Map.of()).get(id);
  }

  /** The edges out of a sender (a function or the source), in the graph's order. */
  java.util.Collection<RegisteredGraph.Edge> edgesFrom(String from) {
    return edgesOut.getOrDefault(from, Map.of()).values();
  }

  /** The functions a sender (by index, or {@link #SOURCE_INDEX}) sends to. */
  int[] successors(int sender) {
    return sender == SOURCE_INDEX ? sourceSuccessors : successors[sender];
  }

  int predecessors(int i) {
    return predecessors[i];
  }

  Map<String, Invocation.OutputEdge> outputEdges(int i) {
    return outputEdges.get(i);
  }
}
