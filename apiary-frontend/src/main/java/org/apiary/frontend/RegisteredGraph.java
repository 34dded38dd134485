package org.apiary.frontend;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import com.fasterxml.jackson.annotation.JsonInclude;
import org.apiary.AccessPolicy;
import org.apiary.RecordingMode;
import org.apiary.internal.PartitionKeyType;
import org.apiary.internal.ValueKind;

/**
 * A graph as registered in the database: what any frontend needs to run it, without the application's classes.
 *
 * @param name the graph's name
 * @param mode how its functions' outputs are recorded
 * @param nodes its functions in topological order
 * @param edges its edges, the source and sink named {@link org.apiary.Graph#SOURCE} and {@link org.apiary.Graph#SINK}
 * @param access who may invoke it and for which purposes; {@code null} for {@link AccessPolicy#OPEN} (left out of
 *     the stored definition, so a graph registered before policies existed reads as open, and registering it
 *     again unchanged does not make a new version)
 * @param functionAccess the policies of its functions that have one (declared for the function in any graph of its
 *     application), by function name, sorted; empty (and left out of the stored definition) if none has
 */
public record RegisteredGraph(String name, RecordingMode mode, List<Node> nodes, List<Edge> edges,
                              @JsonInclude(JsonInclude.Include.NON_NULL) AccessPolicy access,
                              @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, AccessPolicy> functionAccess) {
  /**
   * A function of the graph.
   *
   * @param function its name
   * @param local whether it is a local function
   * @param keyType its partition key type (local functions), else {@code null}
   * @param writes whether it writes
   * @param recorded whether its executions record their outputs
   * @param external for an external step ({@link org.apiary.ExternalFunction}), how the frontend runs it; else
   *     {@code null} (and left out of the stored definition, so a graph without steps stores as before)
   */
  public record Node(String function, boolean local, PartitionKeyType keyType, boolean writes, boolean recorded,
                     @JsonInclude(JsonInclude.Include.NON_NULL) External external) {
    /** A function that runs in the database. */
    public Node(String function, boolean local, PartitionKeyType keyType, boolean writes, boolean recorded) {
      this(function, local, keyType, writes, recorded, null);
    }
  }

  /**
   * How a frontend runs an external step: its class (loaded by name on the frontend) and its
   * {@link org.apiary.StepPolicy}.
   *
   * @param className the step's class
   * @param maxAttempts the most attempts
   * @param timeoutMs the longest an attempt may take
   * @param firstBackoffMs the wait before the second attempt
   * @param maxBackoffMs the longest wait between attempts
   */
  public record External(String className, int maxAttempts, long timeoutMs, long firstBackoffMs, long maxBackoffMs) {
    /** The policy these values stand for. */
    public org.apiary.StepPolicy policy() {
      return new org.apiary.StepPolicy(maxAttempts, java.time.Duration.ofMillis(timeoutMs),
          java.time.Duration.ofMillis(firstBackoffMs), java.time.Duration.ofMillis(maxBackoffMs));
    }
  }

  /**
   * An edge.
   *
   * @param from the sending function or the source
   * @param to the receiving function or the sink
   * @param id the edge ID
   * @param kind the JSON shape of its values
   * @param shape for values of a record type, its fields, checked in a client's arguments before anything runs;
   *     else {@code null} (and left out of the stored definition)
   */
  public record Edge(String from, String to, String id, ValueKind kind,
                     @JsonInclude(JsonInclude.Include.NON_NULL) org.apiary.internal.RecordShape shape) {
    /** An edge whose values are not records. */
    public Edge(String from, String to, String id, ValueKind kind) {
      this(from, to, id, kind, null);
    }
  }

  public RegisteredGraph {
    nodes = List.copyOf(nodes);
    edges = List.copyOf(edges);
    if (access != null && access.allowsEveryCall()) {
      access = null;
    }
    TreeMap<String, AccessPolicy> restricted = new TreeMap<>();
    if (functionAccess != null) {
      functionAccess.forEach((fn, policy) -> {
        if (!policy.allowsEveryCall()) {
          restricted.put(fn, policy);
        }
      });
    }
    functionAccess = Collections.unmodifiableMap(restricted);
  }

  /** A graph whose functions declare no policies of their own. */
  public RegisteredGraph(String name, RecordingMode mode, List<Node> nodes, List<Edge> edges, AccessPolicy access) {
    this(name, mode, nodes, edges, access, Map.of());
  }

  /**
   * Why a call is refused by this graph's policy or one of its functions' (the graph's first, then the functions' in
   * topological order), or {@code null} if every one allows it. The database runs the same check
   * ({@link org.apiary.runtime.GraphAccess}) before it records a refusal.
   */
  public String refusal(String caller, Set<String> callerRoles, String purpose) {
    List<String> functions = new ArrayList<>(nodes.size());
    for (Node n : nodes) {
      functions.add(n.function());
    }
    return org.apiary.runtime.GraphAccess.refusal(name, policy(), functions, functionAccess, caller, callerRoles,
        purpose);
  }

  /** Who may invoke this graph and for which purposes. */
  public AccessPolicy policy() {
    return access == null ? AccessPolicy.OPEN : access;
  }

  // Plain loops: these run several times per invocation on the frontend's threads, over a handful of elements.
  public Optional<Node> node(String function) {
    for (Node n : nodes) {
      if (n.function().equals(function)) {
        return Optional.of(n);
      }
    }
    return Optional.empty();
  }

  /** The edges out of a node (or the source). */
  public List<Edge> edgesFrom(String from) {
    List<Edge> out = new ArrayList<>(2);
    for (Edge e : edges) {
      if (e.from().equals(from)) {
        out.add(e);
      }
    }
    return out;
  }

  /** The edges into a node (or the sink). */
  public List<Edge> edgesInto(String to) {
    List<Edge> in = new ArrayList<>(2);
    for (Edge e : edges) {
      if (e.to().equals(to)) {
        in.add(e);
      }
    }
    return in;
  }

  /**
   * Whether no function of this graph records its outputs (it writes nothing, paper section 5.4): running it again
   * is safe, so its invocations need no invocation log and store no outcome.
   */
  public boolean recordsNothing() {
    for (Node n : nodes) {
      if (n.recorded()) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether an invocation is exactly one recorded function execution (one function, which records; its arguments
   * all carry the invocation's partition key, so it runs once): its transaction's record is the invocation's
   * outcome, and it needs no invocation log.
   */
  public boolean oneTransaction() {
    return nodes.size() == 1 && nodes.get(0).recorded() && nodes.get(0).external() == null;
  }

  /** The names of the recorded functions. */
  public List<String> recordedFunctions() {
    return nodes.stream().filter(Node::recorded).map(Node::function).toList();
  }
}
