package org.apiary.frontend;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apiary.Application;
import org.apiary.Graph;
import org.apiary.RecordingMode;
import org.apiary.RegistrationException;
import org.apiary.compiler.CompiledApplication;
import org.apiary.compiler.CompiledFunction;
import org.apiary.compiler.Deployer;
import org.apiary.compiler.FunctionCompiler;
import org.apiary.compiler.FunctionDefinition;
import org.apiary.compiler.FunctionKind;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.ProvenanceConfig;
import org.apiary.frontend.graph.RecordingAnalysis;
import org.apiary.internal.Json;
import org.apiary.internal.ValueKind;
import org.apiary.runtime.SystemSchema;

/**
 * Registers an application: checks its graphs, compiles its functions with VoltDB's planner, decides which
 * functions record their outputs (the paper's Algorithm 1, or another {@link RecordingMode} for measurement),
 * loads the schema if the database does not have it yet or applies the migrations it lacks
 * ({@link org.apiary.SchemaMigration}), deploys the functions and stores the graphs in the
 * database, where every frontend reads them. Frontends keep no state of their own.
 */
public final class Registrar {
  private Registrar() {}

  /** Registers with exactly-once at the lowest cost ({@link RecordingMode#SELECTIVE}). */
  public static List<RegisteredGraph> register(ApiaryDatabase db, Application app) {
    return register(db, app, RecordingMode.SELECTIVE);
  }

  /**
   * Registers an application.
   *
   * @return the graphs as stored, with the functions each records
   * @throws RegistrationException listing every problem with the graphs, the schema or the functions
   */
  public static List<RegisteredGraph> register(ApiaryDatabase db, Application app, RecordingMode mode) {
    return register(db, app, mode, false);
  }

  /**
   * Registers an application, applying the schema migrations ({@link org.apiary.SchemaMigration}) the database lacks
   * in one catalog update before the functions, which are compiled against {@link Application#currentSchema()}.
   *
   * @param allowDataLoss whether a migration may drop data or, where VoltDB cannot change a table with rows in
   *     place, delete the table's rows first; if false such a migration is refused and nothing changes
   * @return the graphs as stored, with the functions each records
   * @throws RegistrationException listing every problem with the graphs, the schema, its migrations or the functions
   */
  public static List<RegisteredGraph> register(ApiaryDatabase db, Application app, RecordingMode mode,
                                               boolean allowDataLoss) {
    Map<String, Graph.Function> functions = app.functions();
    List<FunctionDefinition> definitions = functions.values().stream()
        .map(f -> FunctionDefinition.of(f.name(), f.functionClass())).toList();
    Map<String, Set<String>> recordedByGraph = new HashMap<>();
    Set<String> recordedElsewhere = recordedByOtherGraphs(db, app);
    CompiledApplication compiled = FunctionCompiler.compile(app.currentSchema(), definitions, planned -> {
      Map<String, CompiledFunction> byName = new HashMap<>();
      planned.forEach(f -> byName.put(f.name(), f));
      // A function shared with graphs registered earlier stays recordable if any of them records it.
      Set<String> all = new HashSet<>(recordedElsewhere);
      for (Graph g : app.graphs()) {
        Set<String> recorded = recorded(g, byName, mode);
        recordedByGraph.put(g.name(), recorded);
        all.addAll(recorded);
      }
      return all;
    });
    ApplicationSchema.apply(db, ApplicationSchema.plan(db, app, compiled.schemaColumns(), allowDataLoss));
    if (db.config().capturesProvenance() || exportsProvenance(db)) {
      captureWrites(db, compiled.schemaTables());
    }
    Deployer.deploy(db, compiled);

    List<RegisteredGraph> registered = new ArrayList<>();
    Map<String, org.apiary.AccessPolicy> functionAccess = app.functionAccess();
    for (Graph g : app.graphs()) {
      RegisteredGraph r = describe(g, compiled.byName(), recordedByGraph.get(g.name()), mode, functionAccess);
      store(db, r);
      registered.add(r);
    }
    // The queue of delayed starts (ApiaryClient.start with a delay), without limits: declared by every registration.
    db.callAdmin("storing queue '" + org.apiary.Queue.DELAYED + "'", SystemSchema.DECLARE_QUEUE,
        org.apiary.Queue.DELAYED, 0, 0, 0, 0L, (byte) 0, (byte) 0);
    for (org.apiary.Queue q : app.queues()) {
      db.callAdmin("storing queue '" + q.name() + "'", SystemSchema.DECLARE_QUEUE, q.name(), q.concurrency(),
          q.perFrontend(), q.rateLimit(), q.ratePeriod() == null ? 0L : q.ratePeriod().toMillis(),
          (byte) (q.hasPriority() ? 1 : 0), (byte) (q.isPartitioned() ? 1 : 0));
    }
    for (org.apiary.Schedule schedule : app.schedules()) {
      Schedules.store(db, schedule);
    }
    return registered;
  }

  /**
   * Stores a graph as its next version if its definition changed: frontends see the new version at their next
   * catalog refresh, and invocations already started keep running (and are recovered) under their own version.
   */
  private static void store(ApiaryDatabase db, RegisteredGraph graph) {
    byte[] definition = Json.bytes(graph);
    org.voltdb.VoltTable latest = db.callAdmin("reading graph '" + graph.name() + "'", "@AdHoc",
        "SELECT version, definition FROM " + SystemSchema.GRAPHS + " WHERE name = ? ORDER BY version DESC LIMIT 1",
        graph.name()).getResults()[0];
    int version = 1;
    if (latest.advanceRow()) {
      if (java.util.Arrays.equals(latest.getVarbinary(1), definition)) {
        return;
      }
      version = (int) latest.getLong(0) + 1;
    }
    db.callAdmin("storing graph '" + graph.name() + "'", SystemSchema.STORE_GRAPH, graph.name(), version, definition);
  }

  /** Functions recorded by registered graphs that this registration does not replace. */
  private static Set<String> recordedByOtherGraphs(ApiaryDatabase db, Application app) {
    GraphCatalog registered = new GraphCatalog(db, java.time.Duration.ZERO);
    Set<String> replaced = new HashSet<>();
    app.graphs().forEach(g -> replaced.add(g.name()));
    Set<String> recorded = new HashSet<>();
    for (String name : registered.graphNames()) {
      if (!replaced.contains(name)) {
        registered.graph(name).ifPresent(g -> recorded.addAll(g.recordedFunctions()));
      }
    }
    return recorded;
  }

  /** Which functions of one graph record their outputs under a mode. */
  static Set<String> recorded(Graph g, Map<String, CompiledFunction> functions, RecordingMode mode) {
    return switch (mode) {
      case NONE -> Set.of();
      case NAIVE -> {
        TreeSet<String> all = new TreeSet<>(g.functions().keySet());
        all.addAll(g.externalFunctions().keySet());
        yield all;
      }
      case SELECTIVE -> {
        List<RecordingAnalysis.Node> nodes = new ArrayList<>();
        for (Graph.Function f : g.functions().values()) {
          // A local function fed only by the source gets the client's single key, so it runs once; any other
          // local function may receive several keys and fan out.
          boolean fansOut = f.local() && g.edges().stream()
              .anyMatch(e -> e.to().equals(f.name()) && !e.from().equals(Graph.SOURCE));
          nodes.add(new RecordingAnalysis.Node(f.name(), functions.get(f.name()).hasWrites(), fansOut));
        }
        // An external step's effect is outside the database and cannot be undone or repeated safely: Algorithm 1
        // treats it as a writer, so it is always recorded (it runs once per invocation, so it does not fan out).
        for (String step : g.externalFunctions().keySet()) {
          nodes.add(new RecordingAnalysis.Node(step, true, false));
        }
        List<RecordingAnalysis.Edge> edges = g.edges().stream()
            .map(e -> new RecordingAnalysis.Edge(e.from(), e.to())).toList();
        yield RecordingAnalysis.recordedFunctions(nodes, edges);
      }
    };
  }

  private static RegisteredGraph describe(Graph g, Map<String, CompiledFunction> functions, Set<String> recorded,
                                          RecordingMode mode, Map<String, org.apiary.AccessPolicy> functionAccess) {
    List<RegisteredGraph.Node> nodes = new ArrayList<>();
    for (String name : topologicalOrder(g)) {
      Graph.External step = g.externalFunctions().get(name);
      if (step != null) {
        org.apiary.StepPolicy p = step.policy();
        nodes.add(new RegisteredGraph.Node(name, false, null, false, recorded.contains(name),
            new RegisteredGraph.External(step.stepClass().getName(), p.maxAttempts(), p.timeout().toMillis(),
                p.firstBackoff().toMillis(), p.maxBackoff().toMillis())));
        continue;
      }
      CompiledFunction f = functions.get(name);
      nodes.add(new RegisteredGraph.Node(name, f.kind() == FunctionKind.LOCAL, f.keyType(), f.hasWrites(),
          recorded.contains(name)));
    }
    List<RegisteredGraph.Edge> edges = g.edges().stream()
        .map(e -> new RegisteredGraph.Edge(e.from(), e.to(), e.id(), ValueKind.of(e.valueType()),
            org.apiary.internal.RecordShape.of(e.valueType()))).toList();
    Map<String, org.apiary.AccessPolicy> policies = new HashMap<>();
    for (String fn : nodeNames(g)) {
      if (functionAccess.containsKey(fn)) {
        policies.put(fn, functionAccess.get(fn));
      }
    }
    return new RegisteredGraph(g.name(), mode, nodes, edges, g.access(), policies);
  }

  /** The names of a graph's functions and external steps. */
  private static Set<String> nodeNames(Graph g) {
    Set<String> all = new java.util.LinkedHashSet<>(g.functions().keySet());
    all.addAll(g.externalFunctions().keySet());
    return all;
  }

  /** Kahn's algorithm, ties broken by the order functions were added, so the order is stable. */
  static List<String> topologicalOrder(Graph g) {
    Map<String, Integer> indegree = new LinkedHashMap<>();
    g.functions().keySet().forEach(f -> indegree.put(f, 0));
    g.externalFunctions().keySet().forEach(f -> indegree.put(f, 0));
    Map<String, Set<String>> next = new HashMap<>();
    for (Graph.Edge e : g.edges()) {
      if (indegree.containsKey(e.from()) && indegree.containsKey(e.to())
          && next.computeIfAbsent(e.from(), k -> new HashSet<>()).add(e.to())) {
        indegree.merge(e.to(), 1, Integer::sum);
      }
    }
    List<String> order = new ArrayList<>();
    Deque<String> ready = new ArrayDeque<>();
    indegree.forEach((f, d) -> {
      if (d == 0) {
        ready.add(f);
      }
    });
    while (!ready.isEmpty()) {
      String f = ready.poll();
      order.add(f);
      for (String n : indegree.keySet()) {
        if (next.getOrDefault(f, Set.of()).contains(n) && indegree.merge(n, -1, Integer::sum) == 0) {
          ready.add(n);
        }
      }
    }
    return order;
  }

  /**
   * Turns on VoltDB's change data capture for every application table (not views): each committed insert, delete
   * and update goes to Apiary's provenance export target, in the writing transaction.
   */
  /**
   * Whether the database's servers capture provenance although this connection was not told so (a cluster started
   * with a sink, deployed to from another process): Apiary's deployments configure export only for provenance.
   */
  private static boolean exportsProvenance(ApiaryDatabase db) {
    org.voltdb.VoltTable t = db.callAdmin("reading the deployment", "@SystemInformation", "DEPLOYMENT")
        .getResults()[0];
    while (t.advanceRow()) {
      if ("export".equals(t.getString(0))) {
        return Boolean.parseBoolean(t.getString(1));
      }
    }
    return false;
  }

  private static void captureWrites(ApiaryDatabase db, Set<String> schemaTables) {
    ProvenanceConfig provenance = db.config().provenance();
    org.voltdb.VoltTable t = db.callAdmin("listing tables", "@SystemCatalog", "TABLES").getResults()[0];
    List<String> alters = new ArrayList<>();
    List<String> tables = new ArrayList<>();
    while (t.advanceRow()) {
      String name = t.getString("TABLE_NAME");
      if ("TABLE".equals(t.getString("TABLE_TYPE")) && schemaTables.contains(name.toUpperCase(java.util.Locale.ROOT))
          && (provenance == null || provenance.capturesWritesOf(name))) {
        tables.add(name);
        alters.add("ALTER TABLE " + name + " ALTER EXPORT TO TARGET " + ProvenanceConfig.EXPORT_TARGET
            + " ON INSERT, DELETE, UPDATE_NEW;");
      }
    }
    if (alters.isEmpty()) {
      return;
    }
    try {
      db.callAdmin("turning on change data capture for provenance", "@AdHoc", String.join("\n", alters));
    } catch (org.apiary.DatabaseException e) {
      if (e.getMessage().contains("Too many streams")) {
        throw new RegistrationException(List.of("capturing the writes of " + tables + " needs one VoltDB export "
            + "stream per table, and this VoltDB refuses more (Community Edition allows 2 per database, counting "
            + "tables captured by earlier registrations): choose the tables with "
            + "ProvenanceConfig.withWriteCaptureOnly(...), or use a VoltDB Enterprise license. VoltDB said: "
            + e.getMessage()));
      }
      throw e;
    }
  }
}
