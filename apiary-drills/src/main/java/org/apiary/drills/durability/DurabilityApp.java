package org.apiary.drills.durability;

import org.apiary.ApiaryFunction;
import org.apiary.Application;
import org.apiary.Graph;
import org.apiary.drills.counter.Increment;

/**
 * The durability drill's application: single-partition writes ({@code increment}), a multi-partition write
 * ({@code tally}: a global function adding to a replicated total) and a write that fails after writing
 * ({@code failing}: rolled back, so it must leave no trace after any crash).
 */
public final class DurabilityApp {
  public static final String SCHEMA = """
      CREATE TABLE counters (k BIGINT NOT NULL, v BIGINT NOT NULL, PRIMARY KEY (k));
      PARTITION TABLE counters ON COLUMN k;
      CREATE TABLE tallies (id BIGINT NOT NULL, n BIGINT NOT NULL, PRIMARY KEY (id));
      """;

  /** Adds the argument to counter k and returns the new value. */
  public static final Graph INCREMENT = Graph.named("increment")
      .addLocalFunction("increment", Increment.class)
      .addEdge(Graph.SOURCE, "increment", ApiaryFunction.SOURCE, Long.class)
      .addEdge("increment", Graph.SINK, ApiaryFunction.SINK);

  /** Adds one to tally 0 (a replicated table, so a multi-partition transaction) and returns the new count. */
  public static final Graph TALLY = Graph.named("tally")
      .addGlobalFunction("tally", Tally.class)
      .addEdge(Graph.SOURCE, "tally", ApiaryFunction.SOURCE, Long.class)
      .addEdge("tally", Graph.SINK, ApiaryFunction.SINK);

  /** Writes counter k, then fails: rolled back. */
  public static final Graph FAILING = Graph.named("failing")
      .addLocalFunction("failAfterWrite", FailAfterWrite.class)
      .addEdge(Graph.SOURCE, "failAfterWrite", ApiaryFunction.SOURCE, Long.class)
      .addEdge("failAfterWrite", Graph.SINK, ApiaryFunction.SINK);

  public static final Application APP = Application.of(SCHEMA, INCREMENT, TALLY, FAILING);

  private DurabilityApp() {}
}
