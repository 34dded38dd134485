package org.apiary.frontend.graph;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Algorithm 1 of the Apiary paper (section 5.4): which functions of a graph must record their
 * outputs so that re-executing the graph after a dispatcher failure keeps exactly-once semantics.
 *
 * <p>Functions are visited from the sink back to the source, in reverse topological order. A
 * function that writes is recorded. A read-only function is recorded if it has two paths, sharing
 * no vertex but itself, to two different targets, the targets being the functions recorded so far
 * and the sink. A recorded function that fans out to several executions counts as two targets with
 * the same edges, so a read-only function with an edge into it is recorded.
 *
 * <p>The paths are never enumerated: by Menger's theorem they exist if and only if a unit vertex
 * capacity flow from the function to the targets reaches 2, which two augmenting paths decide. The
 * whole analysis takes O(n (n + e)) time for n functions and e edges.
 */
public final class RecordingAnalysis {
  /** The name of the pseudo-node that stands for the client's input. */
  public static final String SOURCE = "source";

  /** The name of the pseudo-node that stands for the reply to the client. */
  public static final String SINK = "sink";

  private static final int SOURCE_INDEX = 0;
  private static final int SINK_INDEX = 1;

  /**
   * A function as the analysis sees it.
   *
   * @param name the function's name, unique in the graph and neither {@link #SOURCE} nor {@link
   *     #SINK}
   * @param writes whether the function performs a database write
   * @param fansOut whether it may run as several executions (a local function whose inputs can
   *     carry several partition keys)
   */
  public record Node(String name, boolean writes, boolean fansOut) {}

  /**
   * A directed edge between two node names; {@link #SOURCE} and {@link #SINK} name the
   * pseudo-nodes.
   *
   * @param from the name of the node whose output flows along the edge
   * @param to the name of the node that receives it
   */
  public record Edge(String from, String to) {}

  private RecordingAnalysis() {}

  /**
   * The names of the functions that must record their outputs. Parallel edges count as one; nodes
   * need not be reachable from the source nor reach the sink.
   *
   * @param nodes the graph's functions, without the source and the sink
   * @param edges the graph's edges, which may start at {@link #SOURCE} and end at {@link #SINK}
   * @return the recorded functions' names, in the order {@code nodes} gives them; never the source
   *     or the sink
   * @throws IllegalArgumentException naming the problem if two nodes share a name, a node is named
   *     like a pseudo-node, an edge mentions an unknown node, enters the source or leaves the sink,
   *     or the edges form a cycle
   */
  public static Set<String> recordedFunctions(Collection<Node> nodes, Collection<Edge> edges) {
    int n = nodes.size() + 2;
    String[] names = new String[n];
    boolean[] writes = new boolean[n];
    boolean[] fansOut = new boolean[n];
    Map<String, Integer> index = new HashMap<>();
    names[SOURCE_INDEX] = SOURCE;
    names[SINK_INDEX] = SINK;
    index.put(SOURCE, SOURCE_INDEX);
    index.put(SINK, SINK_INDEX);
    int next = 2;
    for (Node node : nodes) {
      String name = Objects.requireNonNull(node.name(), "node name");
      if (index.putIfAbsent(name, next) != null) {
        throw new IllegalArgumentException(
            name.equals(SOURCE) || name.equals(SINK)
                ? "a function may not be named " + name
                : "two nodes are named " + name);
      }
      names[next] = name;
      writes[next] = node.writes();
      fansOut[next] = node.fansOut();
      next++;
    }

    List<Set<Integer>> successors = new ArrayList<>();
    for (int v = 0; v < n; v++) {
      successors.add(new LinkedHashSet<>());
    }
    for (Edge edge : edges) {
      int from = indexOf(index, edge.from(), edge);
      int to = indexOf(index, edge.to(), edge);
      if (to == SOURCE_INDEX) {
        throw new IllegalArgumentException("edge " + describe(edge) + " enters the source");
      }
      if (from == SINK_INDEX) {
        throw new IllegalArgumentException("edge " + describe(edge) + " leaves the sink");
      }
      successors.get(from).add(to);
    }

    int[] order = topologicalOrder(successors, names);
    boolean[] recorded = new boolean[n];
    for (int i = n - 1; i >= 0; i--) {
      int f = order[i];
      if (f != SOURCE_INDEX && f != SINK_INDEX) {
        recorded[f] = writes[f] || reachesTwoTargets(f, successors, recorded, fansOut);
      }
    }

    Set<String> result = new LinkedHashSet<>();
    for (int v = 2; v < n; v++) {
      if (recorded[v]) {
        result.add(names[v]);
      }
    }
    return Collections.unmodifiableSet(result);
  }

  private static int indexOf(Map<String, Integer> index, String name, Edge edge) {
    Integer i = index.get(name);
    if (i == null) {
      throw new IllegalArgumentException(
          "edge " + describe(edge) + " mentions unknown node " + name);
    }
    return i;
  }

  private static String describe(Edge edge) {
    return edge.from() + " -> " + edge.to();
  }

  /** Kahn's algorithm; on a cycle, throws naming the nodes of one. */
  private static int[] topologicalOrder(List<Set<Integer>> successors, String[] names) {
    int n = successors.size();
    int[] inDegree = new int[n];
    for (Set<Integer> targets : successors) {
      for (int w : targets) {
        inDegree[w]++;
      }
    }
    int[] order = new int[n];
    int size = 0;
    for (int v = 0; v < n; v++) {
      if (inDegree[v] == 0) {
        order[size++] = v;
      }
    }
    for (int i = 0; i < size; i++) {
      for (int w : successors.get(order[i])) {
        if (--inDegree[w] == 0) {
          order[size++] = w;
        }
      }
    }
    if (size < n) {
      throw new IllegalArgumentException(
          "the edges form a cycle: " + cycle(successors, inDegree, names));
    }
    return order;
  }

  /**
   * Every node Kahn's algorithm left (in-degree still positive) has a predecessor it also left, so
   * walking back through such predecessors must come back to a node already walked.
   */
  private static String cycle(List<Set<Integer>> successors, int[] inDegree, String[] names) {
    int v = 0;
    while (inDegree[v] == 0) {
      v++;
    }
    List<Integer> walk = new ArrayList<>();
    Map<Integer, Integer> position = new HashMap<>();
    while (!position.containsKey(v)) {
      position.put(v, walk.size());
      walk.add(v);
      int u = 0;
      while (inDegree[u] == 0 || !successors.get(u).contains(v)) {
        u++;
      }
      v = u;
    }
    List<Integer> cycle = new ArrayList<>(walk.subList(position.get(v), walk.size()));
    Collections.reverse(cycle);
    StringBuilder text = new StringBuilder();
    for (int w : cycle) {
      text.append(names[w]).append(" -> ");
    }
    return text.append(names[cycle.get(0)]).toString();
  }

  /**
   * Whether {@code start} has two paths, sharing no vertex but {@code start}, to two different
   * targets. Each path may end at the first target it meets: the other path cannot pass through
   * that target, so it still ends elsewhere. Hence targets get no outgoing edges, every other node
   * but {@code start} is split into an in-vertex and an out-vertex joined by capacity 1, and each
   * target's in-vertex drains into a super-sink with capacity 1, or 2 for a recorded function that
   * fans out (its two executions, which share their edges).
   */
  private static boolean reachesTwoTargets(
      int start, List<Set<Integer>> successors, boolean[] recorded, boolean[] fansOut) {
    int n = successors.size();
    int superSink = 2 * n;
    UnitFlow flow = new UnitFlow(2 * n + 1);
    for (int v = 0; v < n; v++) {
      if (v == SINK_INDEX || recorded[v]) {
        flow.addEdge(2 * v, superSink, fansOut[v] ? 2 : 1);
        continue;
      }
      if (v != start) {
        flow.addEdge(2 * v, 2 * v + 1, 1);
      }
      for (int w : successors.get(v)) {
        // 2, so that an edge from start can feed both executions of a function that fans out.
        flow.addEdge(2 * v + 1, 2 * w, 2);
      }
    }
    return flow.augment(2 * start + 1, superSink) && flow.augment(2 * start + 1, superSink);
  }

  /** A flow network that pushes one unit at a time along shortest augmenting paths. */
  private static final class UnitFlow {
    private final List<List<Integer>> outgoing = new ArrayList<>();
    // Edge e goes to head[e] with residual capacity capacity[e]; edge e ^ 1 is its reverse.
    private final List<Integer> head = new ArrayList<>();
    private final List<Integer> capacity = new ArrayList<>();

    UnitFlow(int vertices) {
      for (int v = 0; v < vertices; v++) {
        outgoing.add(new ArrayList<>());
      }
    }

    void addEdge(int from, int to, int cap) {
      addHalf(from, to, cap);
      addHalf(to, from, 0);
    }

    private void addHalf(int from, int to, int cap) {
      outgoing.get(from).add(head.size());
      head.add(to);
      capacity.add(cap);
    }

    /** Pushes one unit from {@code s} to {@code t}; false if the flow is already maximum. */
    boolean augment(int s, int t) {
      int[] via = new int[outgoing.size()];
      Arrays.fill(via, -1);
      ArrayDeque<Integer> queue = new ArrayDeque<>();
      queue.add(s);
      while (!queue.isEmpty() && via[t] < 0) {
        int v = queue.poll();
        for (int e : outgoing.get(v)) {
          int w = head.get(e);
          if (capacity.get(e) > 0 && w != s && via[w] < 0) {
            via[w] = e;
            queue.add(w);
          }
        }
      }
      if (via[t] < 0) {
        return false;
      }
      for (int v = t; v != s; v = head.get(via[v] ^ 1)) {
        capacity.set(via[v], capacity.get(via[v]) - 1);
        capacity.set(via[v] ^ 1, capacity.get(via[v] ^ 1) + 1);
      }
      return true;
    }
  }
}
