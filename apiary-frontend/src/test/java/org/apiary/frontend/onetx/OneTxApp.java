package org.apiary.frontend.onetx;

import org.apiary.ApiaryFunction;
import org.apiary.Application;
import org.apiary.Graph;

/** Graphs of one function: a writer (one recorded transaction per invocation) and a reader (nothing recorded). */
public final class OneTxApp {
  public static final String SCHEMA = """
      CREATE TABLE o_counters (k BIGINT NOT NULL, v BIGINT NOT NULL, PRIMARY KEY (k));
      PARTITION TABLE o_counters ON COLUMN k;
      CREATE TABLE o_flags (k BIGINT NOT NULL, PRIMARY KEY (k));
      PARTITION TABLE o_flags ON COLUMN k;
      """;

  /** source -> add (adds its argument to the counter of its key, fails while o_flags holds the key) -> sink. */
  public static final Graph ADD = Graph.named("o_add")
      .addLocalFunction("o_add", OAdd.class)
      .addEdge(Graph.SOURCE, "o_add", ApiaryFunction.SOURCE, Long.class)
      .addEdge("o_add", Graph.SINK, ApiaryFunction.SINK);

  /** source -> peek (reads the counter) -> sink. */
  public static final Graph PEEK = Graph.named("o_peek")
      .addLocalFunction("o_peek", OPeek.class)
      .addEdge(Graph.SOURCE, "o_peek", ApiaryFunction.SOURCE, Long.class)
      .addEdge("o_peek", Graph.SINK, ApiaryFunction.SINK);

  public static final Application APP = Application.of(SCHEMA, ADD, PEEK);

  private OneTxApp() {}
}
