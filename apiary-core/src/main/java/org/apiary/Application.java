package org.apiary;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Everything that is registered together: the schema (VoltDB DDL), its migrations, and the graphs built on it.
 * Registering an application compiles and deploys its functions and makes its graphs invocable through every
 * frontend.
 *
 * <p>The schema changes by appending numbered {@link SchemaMigration}s ({@link #withMigrations}): a deploy applies
 * the ones the database lacks together with the functions, which are compiled against {@link #currentSchema()}.
 *
 * @param schema the tables the functions use, as VoltDB DDL: schema version 0
 * @param graphs the graphs, each invocable by name
 * @param queues the durable queues invocations of these graphs may be put on ({@link Queue}), by name
 * @param schedules the graphs run on a schedule ({@link Schedule}), by name
 * @param migrations the changes to the schema since version 0, numbered 1, 2, ... in order
 */
public record Application(String schema, List<Graph> graphs, List<Queue> queues, List<Schedule> schedules,
                          List<SchemaMigration> migrations) {
  /** @throws RegistrationException if the migrations are not numbered 1, 2, ... in order */
  public Application {
    Objects.requireNonNull(schema, "schema");
    graphs = List.copyOf(graphs);
    queues = List.copyOf(queues);
    schedules = List.copyOf(schedules);
    migrations = List.copyOf(migrations);
    for (int i = 0; i < migrations.size(); i++) {
      if (migrations.get(i).version() != i + 1) {
        throw new RegistrationException(List.of("schema migration " + migrations.get(i).version() + " is number "
            + (i + 1) + " in the list: number migrations 1, 2, ... in the order they apply"));
      }
    }
  }

  /** An application whose schema has no migrations. */
  public Application(String schema, List<Graph> graphs, List<Queue> queues, List<Schedule> schedules) {
    this(schema, graphs, queues, schedules, List.of());
  }

  /** An application without schedules. */
  public Application(String schema, List<Graph> graphs, List<Queue> queues) {
    this(schema, graphs, queues, List.of());
  }

  /** An application without queues or schedules. */
  public Application(String schema, List<Graph> graphs) {
    this(schema, graphs, List.of());
  }

  /**
   * This application with these queues declared too: registering it stores each queue's limits in the database,
   * where every frontend reads them (a queue registered again takes the limits declared last).
   *
   * @throws RegistrationException if two queues share a name
   */
  public Application withQueues(Queue... more) {
    List<Queue> all = new ArrayList<>(queues);
    all.addAll(Arrays.asList(more));
    Set<String> names = new HashSet<>();
    for (Queue q : all) {
      if (!names.add(q.name())) {
        throw new RegistrationException(List.of("two queues are named '" + q.name() + "'"));
      }
    }
    return new Application(schema, graphs, all, schedules, migrations);
  }

  /**
   * This application with these schedules declared too: registering it stores each schedule in the database (with
   * its queue, {@link Schedule#queueName()}), where every frontend reads it. A schedule registered again takes the
   * expression, graph, key and policy declared last and keeps its place (its last tick, and whether it is paused).
   *
   * @throws RegistrationException if two schedules share a name, or a schedule's graph is not in the application
   */
  public Application withSchedules(Schedule... more) {
    List<Schedule> all = new ArrayList<>(schedules);
    all.addAll(Arrays.asList(more));
    Set<String> names = new HashSet<>();
    List<String> problems = new ArrayList<>();
    for (Schedule s : all) {
      if (!names.add(s.name())) {
        problems.add("two schedules are named '" + s.name() + "'");
      }
      if (graphs.stream().noneMatch(g -> g.name().equals(s.graph()))) {
        problems.add("schedule '" + s.name() + "' runs graph '" + s.graph() + "', which the application does not have");
      }
    }
    if (!problems.isEmpty()) {
      throw new RegistrationException(problems);
    }
    return new Application(schema, graphs, queues, all, migrations);
  }

  /**
   * This application with these schema migrations appended ({@link SchemaMigration}): the first given is numbered
   * one more than the last the application had.
   *
   * @throws RegistrationException if the migrations are not numbered on from the application's last
   */
  public Application withMigrations(SchemaMigration... more) {
    List<SchemaMigration> all = new ArrayList<>(migrations);
    all.addAll(Arrays.asList(more));
    return new Application(schema, graphs, queues, schedules, all);
  }

  /** The schema version the application declares: its last migration's number, 0 without migrations. */
  public int schemaVersion() {
    return migrations.size();
  }

  /**
   * The schema as it is once every migration is applied: {@link #schema()} followed by each migration's DDL in order.
   * A new database gets it in one catalog update, and the functions are compiled against it.
   */
  public String currentSchema() {
    StringBuilder all = new StringBuilder(schema);
    for (SchemaMigration m : migrations) {
      all.append('\n').append(m.ddl());
    }
    return all.toString();
  }

  /** An application made of a schema and graphs. */
  public static Application of(String schema, Graph... graphs) {
    return new Application(schema, Arrays.asList(graphs));
  }

  /**
   * Every function of every graph, by name. A function used by several graphs appears once.
   *
   * @throws RegistrationException if graphs are invalid, share a name, or use one function name for two classes
   */
  public Map<String, Graph.Function> functions() {
    return functionsAndPolicies().functions();
  }

  /**
   * The access policy declared for each function (in any graph), by function name: it applies in every graph of
   * the application that contains the function.
   *
   * @throws RegistrationException as {@link #functions()}
   */
  public Map<String, AccessPolicy> functionAccess() {
    return functionsAndPolicies().policies();
  }

  private record Checked(Map<String, Graph.Function> functions, Map<String, AccessPolicy> policies) {}

  private Checked functionsAndPolicies() {
    List<String> problems = new ArrayList<>();
    Map<String, Graph.Function> all = new LinkedHashMap<>();
    Map<String, Graph.External> steps = new LinkedHashMap<>();
    Map<String, Graph> byName = new LinkedHashMap<>();
    Map<String, Graph> policyFrom = new LinkedHashMap<>();
    for (Graph g : graphs) {
      problems.addAll(g.problems());
      if (byName.putIfAbsent(g.name(), g) != null) {
        problems.add("two graphs are named '" + g.name() + "'");
      }
      g.functionAccess().forEach((fn, policy) -> {
        Graph first = policyFrom.putIfAbsent(fn, g);
        if (first != null && !first.functionAccess().get(fn).equals(policy)) {
          problems.add("function '" + fn + "' has the access policy " + first.functionAccess().get(fn) + " in graph '"
              + first.name() + "' and " + policy + " in graph '" + g.name() + "'; declare one");
        }
      });
      for (Graph.External step : g.externalFunctions().values()) {
        Graph.External first = steps.putIfAbsent(step.name(), step);
        if (first != null && !first.stepClass().equals(step.stepClass())) {
          problems.add("external step '" + step.name() + "' is " + first.stepClass().getName() + " in one graph and "
              + step.stepClass().getName() + " in graph '" + g.name() + "'");
        }
      }
      for (Graph.Function f : g.functions().values()) {
        Graph.Function old = all.putIfAbsent(f.name(), f);
        if (old != null && !old.functionClass().equals(f.functionClass())) {
          problems.add("function '" + f.name() + "' is " + old.functionClass().getName() + " in one graph and "
              + f.functionClass().getName() + " in graph '" + g.name() + "'");
        }
      }
    }
    for (String name : steps.keySet()) {
      if (all.containsKey(name)) {
        problems.add("'" + name + "' is an external step in one graph and a function in another; use two names");
      }
    }
    if (graphs.isEmpty()) {
      problems.add("the application has no graphs");
    }
    if (!problems.isEmpty()) {
      throw new RegistrationException(problems);
    }
    Map<String, AccessPolicy> policies = new LinkedHashMap<>();
    policyFrom.forEach((fn, g) -> policies.put(fn, g.functionAccess().get(fn)));
    return new Checked(all, policies);
  }
}
