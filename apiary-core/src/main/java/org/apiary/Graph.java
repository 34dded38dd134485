package org.apiary;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;
import org.apiary.internal.ValueKind;

/**
 * A program made of functions: a directed acyclic graph whose nodes are functions and whose edges carry values
 * from one function to the next (paper section 4.2). The pseudo-node {@link #SOURCE} delivers the client's
 * arguments; values sent into {@link #SINK} return to the client.
 *
 * <pre>{@code
 * Graph timeline = Graph.named("timeline")
 *     .addLocalFunction("getFollowees", GetFollowees.class)
 *     .addLocalFunction("getPosts", GetPosts.class)
 *     .addEdge(Graph.SOURCE, "getFollowees", ApiaryFunction.SOURCE, Long.class)
 *     .addEdge("getFollowees", "getPosts", "followees")
 *     .addEdge("getPosts", Graph.SINK, ApiaryFunction.SINK);
 * }</pre>
 *
 * <p>A function reads what arrives on an edge with {@code retrieveInput(edgeId)} and sends along an edge with
 * {@code returnOutput(value, edgeId[, partitionKey])}; edge IDs are those given to {@link #addEdge}. A local
 * function runs once per distinct partition key among its inputs, in parallel, each run receiving only the inputs
 * sent with its key; the client's partition key goes with the arguments. A function runs when every function with
 * an edge into it has finished.
 *
 * <p>A graph is checked when it is registered ({@link #problems()}): unknown functions, edges that dangle or point
 * the wrong way, cycles, conflicting edge IDs or types, functions that could never run, and graphs of more than
 * {@value #MAX_FUNCTIONS} functions or {@value #MAX_EDGES} edges are rejected.
 */
public final class Graph {
  /** The pseudo-node that delivers the client's arguments. */
  public static final String SOURCE = "source";
  /** The pseudo-node whose incoming values return to the client. */
  public static final String SINK = "sink";

  private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_.-]{0,63}");
  /** The most functions a graph may have (each run of a graph walks all of them in a frontend). */
  public static final int MAX_FUNCTIONS = 256;
  /** The most edges a graph may have. */
  public static final int MAX_EDGES = 1_024;

  /**
   * A function in a graph.
   *
   * @param name the name it is registered and called under
   * @param functionClass its class
   * @param local whether it was added as a local function
   */
  public record Function(String name, Class<? extends ApiaryFunction> functionClass, boolean local) {}

  /**
   * An edge.
   *
   * @param from the sending function, or {@link #SOURCE}
   * @param to the receiving function, or {@link #SINK}
   * @param id the edge ID the functions use
   * @param valueType the declared type of the values it carries ({@code Object} if not declared)
   */
  public record Edge(String from, String to, String id, Class<?> valueType) {}

  /**
   * An external step in a graph ({@link ExternalFunction}): runs in the frontend, its outputs recorded.
   *
   * @param name the name it is placed in the graph under
   * @param stepClass its class
   * @param policy its attempts, timeout and back-off
   */
  public record External(String name, Class<? extends ExternalFunction> stepClass, StepPolicy policy) {}

  private final String name;
  private final Map<String, Function> functions = new LinkedHashMap<>();
  private final Map<String, External> externals = new LinkedHashMap<>();
  private final List<Edge> edges = new ArrayList<>();
  private final List<String> definitionProblems = new ArrayList<>();
  private AccessPolicy access = AccessPolicy.OPEN;
  private final Map<String, AccessPolicy> functionAccess = new LinkedHashMap<>();

  private Graph(String name) {
    this.name = Objects.requireNonNull(name, "name");
  }

  /** An empty graph; the name is how clients invoke it. */
  public static Graph named(String name) {
    return new Graph(name);
  }

  /**
   * A graph of one function, named as the function: the client's arguments reach it on the edge
   * {@link #SOURCE} and what it returns on {@link #SINK} is the result. The way to deploy and call a single function.
   *
   * @param name the graph's and the function's name
   * @param functionClass a {@link LocalFunction} (the call names its partition key) or a {@link GlobalFunction}
   */
  public static Graph ofFunction(String name, Class<? extends ApiaryFunction> functionClass) {
    Objects.requireNonNull(functionClass, "function class");
    Graph g = new Graph(name);
    return g.add(name, functionClass, LocalFunction.class.isAssignableFrom(functionClass))
        .addEdge(SOURCE, name, SOURCE).addEdge(name, SINK, SINK);
  }

  /** Adds a local function: one partition per execution, chosen by the partition key sent with its inputs. */
  public Graph addLocalFunction(String name, Class<? extends LocalFunction<?>> functionClass) {
    return add(name, functionClass, true);
  }

  /** Adds a global function: may touch any data; runs once when its inputs are complete. */
  public Graph addGlobalFunction(String name, Class<? extends GlobalFunction> functionClass) {
    return add(name, functionClass, false);
  }

  /**
   * Adds an external step with {@link StepPolicy#defaults()}: it runs in the frontend once its inputs are complete,
   * may do I/O but no SQL, and its outputs are recorded before any later function sees them.
   */
  public Graph addExternalFunction(String name, Class<? extends ExternalFunction> stepClass) {
    return addExternalFunction(name, stepClass, StepPolicy.defaults());
  }

  /** Adds an external step with its own attempts, timeout and back-off (see {@link ExternalFunction}). */
  public Graph addExternalFunction(String name, Class<? extends ExternalFunction> stepClass, StepPolicy policy) {
    Objects.requireNonNull(name, "function name");
    Objects.requireNonNull(stepClass, "step class");
    Objects.requireNonNull(policy, "policy");
    if (functions.containsKey(name) || externals.putIfAbsent(name, new External(name, stepClass, policy)) != null) {
      definitionProblems.add("graph '" + this.name + "': function '" + name + "' is added twice");
    }
    try {
      if (java.lang.reflect.Modifier.isAbstract(stepClass.getModifiers())
          || !java.lang.reflect.Modifier.isPublic(stepClass.getConstructor().getModifiers())) {
        definitionProblems.add("graph '" + this.name + "': external step '" + name + "' (" + stepClass.getName()
            + ") must be a concrete class with a public no-argument constructor");
      }
    } catch (NoSuchMethodException e) {
      definitionProblems.add("graph '" + this.name + "': external step '" + name + "' (" + stepClass.getName()
          + ") has no public no-argument constructor");
    }
    return this;
  }

  private Graph add(String fn, Class<? extends ApiaryFunction> functionClass, boolean local) {
    Objects.requireNonNull(fn, "function name");
    Objects.requireNonNull(functionClass, "function class");
    Function old = functions.putIfAbsent(fn, new Function(fn, functionClass, local));
    if (old != null || externals.containsKey(fn)) {
      definitionProblems.add("graph '" + name + "': function '" + fn + "' is added twice");
    }
    boolean isLocal = LocalFunction.class.isAssignableFrom(functionClass);
    if (isLocal != local) {
      definitionProblems.add("graph '" + name + "': function '" + fn + "' (" + functionClass.getName() + ") is added as "
          + (local ? "local" : "global") + " but its class extends " + (isLocal ? "LocalFunction" : "GlobalFunction"));
    }
    return this;
  }

  /** Adds an edge whose values are not type-checked. */
  public Graph addEdge(String from, String to, String edgeId) {
    return addEdge(from, to, edgeId, Object.class);
  }

  /**
   * Adds an edge from a function (or {@link #SOURCE}) to a function (or {@link #SINK}). An edge out of the source
   * with a declared type makes the frontend check the client's arguments against it before anything runs.
   */
  public Graph addEdge(String from, String to, String edgeId, Class<?> valueType) {
    edges.add(new Edge(Objects.requireNonNull(from, "from"), Objects.requireNonNull(to, "to"),
        Objects.requireNonNull(edgeId, "edge ID"), valueType == null ? Object.class : valueType));
    return this;
  }

  public String name() {
    return name;
  }

  /**
   * Sets who may invoke this graph and for which purposes (stored with the graph at registration and enforced by
   * every frontend before anything runs). Without it a graph is {@link AccessPolicy#OPEN}.
   */
  public Graph withAccess(AccessPolicy policy) {
    this.access = Objects.requireNonNull(policy, "policy");
    return this;
  }

  /** Who may invoke this graph and for which purposes ({@link AccessPolicy#OPEN} unless set). */
  public AccessPolicy access() {
    return access;
  }

  /**
   * Sets who may run one of this graph's functions and for which purposes: a call of any graph of the application
   * that contains the function must satisfy this policy as well as the graph's (every function of a graph may run).
   * For a function that reads data of its own kind (personal data, say) wherever it is used. Graphs of one
   * application must not declare different policies for the same function.
   */
  public Graph withFunctionAccess(String function, AccessPolicy policy) {
    functionAccess.put(Objects.requireNonNull(function, "function"), Objects.requireNonNull(policy, "policy"));
    return this;
  }

  /** The policies declared for functions of this graph, by function name. */
  public Map<String, AccessPolicy> functionAccess() {
    return Collections.unmodifiableMap(functionAccess);
  }

  /** The functions, in the order they were added. */
  public Map<String, Function> functions() {
    return Collections.unmodifiableMap(functions);
  }

  /** The external steps, in the order they were added (not among {@link #functions()}). */
  public Map<String, External> externalFunctions() {
    return Collections.unmodifiableMap(externals);
  }

  /** Whether {@code name} is a function or an external step of this graph. */
  private boolean isNode(String name) {
    return functions.containsKey(name) || externals.containsKey(name);
  }

  /** The names of the functions, then the external steps. */
  private Set<String> nodeNames() {
    Set<String> all = new java.util.LinkedHashSet<>(functions.keySet());
    all.addAll(externals.keySet());
    return all;
  }

  /** The edges, in the order they were added. */
  public List<Edge> edges() {
    return Collections.unmodifiableList(edges);
  }

  /** Every problem that keeps this graph from being registered, one line each; empty if it is valid. */
  public List<String> problems() {
    List<String> problems = new ArrayList<>(definitionProblems);
    String where = "graph '" + name + "'";
    if (!NAME.matcher(name).matches()) {
      problems.add(where + ": a graph name is a letter or '_' followed by up to 63 letters, digits, '_', '.' or '-'");
    }
    if (nodeNames().size() > MAX_FUNCTIONS) {
      problems.add(where + " has " + nodeNames().size() + " functions; a graph may have at most " + MAX_FUNCTIONS
          + " (split it into several graphs)");
    }
    if (edges.size() > MAX_EDGES) {
      problems.add(where + " has " + edges.size() + " edges; a graph may have at most " + MAX_EDGES);
    }
    for (String fn : functionAccess.keySet()) {
      if (!isNode(fn)) {
        problems.add(where + " declares an access policy for function '" + fn + "', which it does not have; "
            + "functions are " + nodeNames());
      }
    }
    for (String reserved : List.of(SOURCE, SINK)) {
      if (isNode(reserved)) {
        problems.add(where + ": '" + reserved + "' names the graph's " + reserved + " and cannot name a function");
      }
    }
    Map<String, Set<String>> outIds = new HashMap<>();
    Map<String, Set<String>> inIds = new HashMap<>();
    Map<String, Class<?>> sourceTypes = new HashMap<>();
    boolean hasSource = false;
    for (Edge e : edges) {
      String edge = where + ": edge '" + e.id() + "' from '" + e.from() + "' to '" + e.to() + "'";
      if (e.id().isBlank()) {
        problems.add(edge + " has an empty ID");
      }
      if (e.from().equals(SINK)) {
        problems.add(edge + " leaves the sink; the sink only receives");
      } else if (!e.from().equals(SOURCE) && !isNode(e.from())) {
        problems.add(edge + " comes from unknown function '" + e.from() + "'; functions are " + nodeNames());
      }
      if (e.to().equals(SOURCE)) {
        problems.add(edge + " enters the source; the source only sends");
      } else if (!e.to().equals(SINK) && !isNode(e.to())) {
        problems.add(edge + " goes to unknown function '" + e.to() + "'; functions are " + nodeNames());
      }
      if (e.from().equals(SOURCE) && e.to().equals(SINK)) {
        problems.add(edge + " connects the source straight to the sink");
      }
      if (org.apiary.internal.Output.ENQUEUE_EDGE.equals(e.id())) {
        problems.add(edge + " has the ID Apiary reserves for a function's enqueues; choose another");
      }
      if (e.from().equals(SOURCE)) {
        hasSource = true;
        Class<?> other = sourceTypes.putIfAbsent(e.id(), e.valueType());
        if (other != null && ValueKind.of(other) != ValueKind.of(e.valueType())) {
          problems.add(edge + " declares type " + e.valueType().getSimpleName() + " but another edge '" + e.id()
              + "' out of the source declares " + other.getSimpleName() + "; the client's arguments cannot be both");
        }
      } else if (!outIds.computeIfAbsent(e.from(), k -> new HashSet<>()).add(e.id())) {
        problems.add(edge + ": function '" + e.from() + "' already has an outgoing edge '" + e.id()
            + "'; edge IDs out of one function must differ");
      }
      if (!e.to().equals(SINK) && !inIds.computeIfAbsent(e.to(), k -> new HashSet<>()).add(e.id())) {
        problems.add(edge + ": function '" + e.to() + "' already has an incoming edge '" + e.id()
            + "'; edge IDs into one function must differ");
      }
    }
    if (nodeNames().isEmpty()) {
      problems.add(where + " has no functions");
    } else if (!hasSource) {
      problems.add(where + " has no edge from the source, so nothing would ever run");
    }
    for (String fn : nodeNames()) {
      if (!inIds.containsKey(fn)) {
        problems.add(where + ": function '" + fn + "' has no incoming edge, so it would never run");
      }
    }
    cycle().ifPresent(c -> problems.add(where + " has a cycle: " + String.join(" -> ", c)));
    return problems;
  }

  /** A cycle among the functions, as the list of nodes around it (first repeated at the end), if there is one. */
  private java.util.Optional<List<String>> cycle() {
    Map<String, List<String>> next = new HashMap<>();
    for (Edge e : edges) {
      if (isNode(e.from()) && isNode(e.to())) {
        next.computeIfAbsent(e.from(), k -> new ArrayList<>()).add(e.to());
      }
    }
    Map<String, Integer> state = new HashMap<>(); // 1 = on the current path, 2 = done
    for (String start : nodeNames()) {
      if (state.containsKey(start)) {
        continue;
      }
      Deque<String> path = new ArrayDeque<>();
      Deque<java.util.Iterator<String>> its = new ArrayDeque<>();
      path.push(start);
      its.push(next.getOrDefault(start, List.of()).iterator());
      state.put(start, 1);
      while (!path.isEmpty()) {
        java.util.Iterator<String> it = its.peek();
        if (!it.hasNext()) {
          state.put(path.pop(), 2);
          its.pop();
          continue;
        }
        String n = it.next();
        Integer s = state.get(n);
        if (s == null) {
          state.put(n, 1);
          path.push(n);
          its.push(next.getOrDefault(n, List.of()).iterator());
        } else if (s == 1) {
          List<String> cycle = new ArrayList<>();
          List<String> onPath = new ArrayList<>(path);
          Collections.reverse(onPath);
          cycle.addAll(onPath.subList(onPath.indexOf(n), onPath.size()));
          cycle.add(n);
          return java.util.Optional.of(cycle);
        }
      }
    }
    return java.util.Optional.empty();
  }

  /** Throws a {@link RegistrationException} listing every problem, if there is any. */
  public void validate() {
    List<String> problems = problems();
    if (!problems.isEmpty()) {
      throw new RegistrationException(problems);
    }
  }
}
