package org.apiary.frontend.testapp;

import org.apiary.Graph;
import org.apiary.LocalFunction;
import org.apiary.Statement;

/**
 * The paper's Figure 8: F1 (read-only) feeds F2 (read-only) and F3 (writes); both return to the client. F3 is
 * recorded because it writes; F1 because it has disjoint paths to F3 and to the sink; F2 is not.
 */
public final class Figure8 {
  public static final Graph GRAPH = Graph.named("figure8")
      .addLocalFunction("F1", F1.class)
      .addLocalFunction("F2", F2.class)
      .addLocalFunction("F3", F3.class)
      .addEdge(Graph.SOURCE, "F1", "source", Long.class)
      .addEdge("F1", "F2", "a")
      .addEdge("F1", "F3", "b")
      .addEdge("F2", Graph.SINK, "sink")
      .addEdge("F3", Graph.SINK, "sink");

  private Figure8() {}

  /** Reads counter k and passes it on to F2 and F3. */
  public static class F1 extends LocalFunction<Long> {
    static final Statement GET = Statement.of("SELECT v FROM g_counters WHERE k = ?");

    @Override
    protected void run() {
      queueSQL(GET, partitionKey());
      long v = executeSQL().get(0).firstRow().map(r -> r.getLong("v")).orElse(0L);
      returnOutput(v, "a", partitionKey());
      returnOutput(v, "b", partitionKey());
    }
  }

  /** Returns what F1 read, as "read:v". */
  public static class F2 extends LocalFunction<Long> {
    static final Statement GET = Statement.of("SELECT v FROM g_counters WHERE k = ?");

    @Override
    protected void run() {
      returnOutput("read:" + retrieveInput("a", Long.class));
    }
  }

  /** Sets counter k to what F1 read plus one; returns "wrote:v". */
  public static class F3 extends LocalFunction<Long> {
    static final Statement PUT = Statement.of("UPSERT INTO g_counters (k, v) VALUES (?, ?)");

    @Override
    protected void run() {
      long v = retrieveInput("b", Long.class) + 1;
      queueSQL(PUT, partitionKey(), v);
      executeSQL();
      returnOutput("wrote:" + v);
    }
  }
}
