package org.apiary.drills.counter;

import org.apiary.AccessPolicy;
import org.apiary.ApiaryFunction;
import org.apiary.Application;
import org.apiary.Graph;

/** Counters partitioned by key, and the one-function graph that increments one: the drill's and benchmark's load. */
public final class CounterApp {
  public static final String SCHEMA = """
      CREATE TABLE counters (k BIGINT NOT NULL, v BIGINT NOT NULL, PRIMARY KEY (k));
      PARTITION TABLE counters ON COLUMN k;
      """;

  /** source -> increment -> sink: adds the argument to counter k and returns the new value. */
  public static final Graph INCREMENT = Graph.named("increment")
      .addLocalFunction("increment", Increment.class)
      .addEdge(Graph.SOURCE, "increment", ApiaryFunction.SOURCE, Long.class)
      .addEdge("increment", Graph.SINK, ApiaryFunction.SINK);

  public static final Application APP = Application.of(SCHEMA, INCREMENT);

  /**
   * The same application with its graph open only to API keys with {@code role} (the garbage drill's: a key without
   * it is refused as forbidden).
   */
  public static Application guarded(String role) {
    return Application.of(SCHEMA, Graph.named("increment")
        .addLocalFunction("increment", Increment.class)
        .addEdge(Graph.SOURCE, "increment", ApiaryFunction.SOURCE, Long.class)
        .addEdge("increment", Graph.SINK, ApiaryFunction.SINK)
        .withAccess(AccessPolicy.roles(role)));
  }

  private CounterApp() {}
}
