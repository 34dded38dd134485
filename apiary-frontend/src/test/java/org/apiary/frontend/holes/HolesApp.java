package org.apiary.frontend.holes;

import org.apiary.ApiaryFunction;
import org.apiary.Application;
import org.apiary.Graph;

/** Graphs that reproduce the exactly-once holes of issue 10, each with effects a test can count. */
public final class HolesApp {
  public static final String SCHEMA = """
      CREATE TABLE h_counters (k BIGINT NOT NULL, v BIGINT NOT NULL, PRIMARY KEY (k));
      PARTITION TABLE h_counters ON COLUMN k;
      CREATE TABLE h_flags (k BIGINT NOT NULL, PRIMARY KEY (k));
      PARTITION TABLE h_flags ON COLUMN k;
      CREATE TABLE h_writes (k BIGINT NOT NULL, n BIGINT NOT NULL, PRIMARY KEY (k));
      PARTITION TABLE h_writes ON COLUMN k;
      """;

  /** source -> bump (writer, recorded) -> flaky (read-only; fails while h_flags holds its key) -> sink. */
  public static final Graph FLAKY = Graph.named("h_flaky")
      .addLocalFunction("h_bump", HBump.class)
      .addLocalFunction("h_flaky", HFlaky.class)
      .addEdge(Graph.SOURCE, "h_bump", ApiaryFunction.SOURCE, Long.class)
      .addEdge("h_bump", "h_flaky", "bumped")
      .addEdge("h_flaky", Graph.SINK, ApiaryFunction.SINK);

  /** source -> sendText (global; sends a String key) -> count (local, keyed by Long) -> sink. */
  public static final Graph WRONG_KEY = Graph.named("h_wrongKey")
      .addGlobalFunction("h_sendText", HSendText.class)
      .addLocalFunction("h_count", HCount.class)
      .addEdge(Graph.SOURCE, "h_sendText", ApiaryFunction.SOURCE, Integer.class)
      .addEdge("h_sendText", "h_count", "keys")
      .addEdge("h_count", Graph.SINK, ApiaryFunction.SINK);

  /** source -> spread (global; keys 1..n) -> bigPart (400,000 characters each) -> sink. */
  public static final Graph BIG_REPLY = Graph.named("h_bigReply")
      .addGlobalFunction("h_spread", HSpread.class)
      .addLocalFunction("h_bigPart", HBigPart.class)
      .addEdge(Graph.SOURCE, "h_spread", ApiaryFunction.SOURCE, Integer.class)
      .addEdge("h_spread", "h_bigPart", "keys")
      .addEdge("h_bigPart", Graph.SINK, ApiaryFunction.SINK);

  /** source -> evolve -> sink, first registered with a read-only evolve... */
  public static final Graph EVOLVING_V1 = Graph.named("h_evolving")
      .addLocalFunction("h_evolve", HEvolveReadOnly.class)
      .addEdge(Graph.SOURCE, "h_evolve", ApiaryFunction.SOURCE, Long.class)
      .addEdge("h_evolve", Graph.SINK, ApiaryFunction.SINK);

  /** ...then registered again with an evolve that writes. */
  public static final Graph EVOLVING_V2 = Graph.named("h_evolving")
      .addLocalFunction("h_evolve", HEvolveWriting.class)
      .addEdge(Graph.SOURCE, "h_evolve", ApiaryFunction.SOURCE, Long.class)
      .addEdge("h_evolve", Graph.SINK, ApiaryFunction.SINK);

  /** source -> length (global; a String argument of any size) -> sink. */
  public static final Graph LENGTH = Graph.named("h_length")
      .addGlobalFunction("h_lengthOf", HLength.class)
      .addEdge(Graph.SOURCE, "h_lengthOf", ApiaryFunction.SOURCE, String.class)
      .addEdge("h_lengthOf", Graph.SINK, ApiaryFunction.SINK);

  /** source -> bump (writer, recorded) -> tally (writer, recorded: counts its runs in h_writes) -> sink. */
  public static final Graph TWO_WRITERS = Graph.named("h_twoWriters")
      .addLocalFunction("h_bump", HBump.class)
      .addLocalFunction("h_tally", HTally.class)
      .addEdge(Graph.SOURCE, "h_bump", ApiaryFunction.SOURCE, Long.class)
      .addEdge("h_bump", "h_tally", "bumped")
      .addEdge("h_tally", Graph.SINK, ApiaryFunction.SINK);

  /** source -> bump (writer, recorded) -> sink: one recorded transaction, no log entry. */
  public static final Graph ONE_BUMP = Graph.named("h_oneBump")
      .addLocalFunction("h_bump", HBump.class)
      .addEdge(Graph.SOURCE, "h_bump", ApiaryFunction.SOURCE, Long.class)
      .addEdge("h_bump", Graph.SINK, "bumped");

  public static final Application APP = Application.of(SCHEMA, FLAKY, WRONG_KEY, BIG_REPLY, EVOLVING_V1, LENGTH,
      TWO_WRITERS, ONE_BUMP);

  private HolesApp() {}
}
