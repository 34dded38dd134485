package org.apiary.frontend.testapp;

import org.apiary.ApiaryFunction;
import org.apiary.Application;
import org.apiary.Graph;

/** Graphs the frontend tests register: a write followed by a read, a fan-out, and a failing function. */
public final class GraphApp {
  public static final String SCHEMA = """
      CREATE TABLE g_counters (k BIGINT NOT NULL, v BIGINT NOT NULL, PRIMARY KEY (k));
      PARTITION TABLE g_counters ON COLUMN k;
      CREATE TABLE g_hits (k BIGINT NOT NULL, n BIGINT NOT NULL, PRIMARY KEY (k));
      PARTITION TABLE g_hits ON COLUMN k;
      """;

  /** source -> bump (adds the argument to counter k) -> report (reads counter k) -> sink. */
  public static final Graph BUMP_AND_REPORT = Graph.named("bumpAndReport")
      .addLocalFunction("bump", Bump.class)
      .addLocalFunction("report", Report.class)
      .addEdge(Graph.SOURCE, "bump", ApiaryFunction.SOURCE, Long.class)
      .addEdge("bump", "report", "bumped")
      .addEdge("report", Graph.SINK, ApiaryFunction.SINK);

  /** source -> spread (global: keys 1..n) -> hit (local, once per key) -> sink. */
  public static final Graph FAN_OUT = Graph.named("fanOut")
      .addGlobalFunction("spread", Spread.class)
      .addLocalFunction("hit", Hit.class)
      .addEdge(Graph.SOURCE, "spread", ApiaryFunction.SOURCE, Integer.class)
      .addEdge("spread", "hit", "keys")
      .addEdge("hit", Graph.SINK, ApiaryFunction.SINK);

  /** source -> bump -> explode (always throws). */
  public static final Graph FAILING = Graph.named("failing")
      .addLocalFunction("bump", Bump.class)
      .addLocalFunction("explode", Explode.class)
      .addEdge(Graph.SOURCE, "bump", ApiaryFunction.SOURCE, Long.class)
      .addEdge("bump", "explode", "bumped");

  public static final Application APP = Application.of(SCHEMA, BUMP_AND_REPORT, FAN_OUT, FAILING);

  private GraphApp() {}
}
