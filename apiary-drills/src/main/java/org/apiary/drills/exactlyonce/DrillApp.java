package org.apiary.drills.exactlyonce;

import java.util.List;
import org.apiary.ApiaryFunction;
import org.apiary.Application;
import org.apiary.Graph;

/**
 * The application of {@code apiary drill exactly-once}: every write is attributable. Each writing function inserts
 * one row into {@code drill_effects} naming the invocation (taken from the client's argument, never from Apiary), its
 * step, a fresh token, and the token it received from the step before, so a check reading the table directly can
 * tell a duplicate (two rows for one step), a loss (no row), and a replay that returned something other than what the
 * first run wrote (a downstream {@code upstream} that differs from the upstream row's {@code token}).
 *
 * <p>The argument (the "payload") is {@code "<invocation id>|<variant>"}; the drill sends a second variant under the
 * same ID to check that a conflicting request is refused. Values along edges are the chain
 * {@code "<payload>;step=token;step=token"}; {@code observe} (read-only) appends {@code "|seen=<rows of this
 * invocation>"} and returns that to the client. The one-function graphs {@code drill_single} and
 * {@code drill_single_flaky} have no {@code observe}: their writer's edge {@code next} leads straight into the sink, so
 * the client gets the writer's own chain {@code "<payload>;step=token"}. They are the graphs a frontend may run as a
 * single transaction whose outcome is the writer's recorded output, with no invocation log.
 *
 * <p>{@code flaky} and {@code flaky_first} insert their row and then fail (rolling it back) while
 * {@code drill_failing} holds their partition key: a condition the drill flips during the run. {@code write_badkey}
 * commits its row and then hands its output on under a String key to {@code observe}, keyed by Long: an error only
 * the frontend can find, after a write committed, so the invocation must still end (not stay running) and the write
 * must stay single.
 */
public final class DrillApp {
  /** Tables: the effects every writer leaves, and the keys whose flaky writers fail. */
  public static final String SCHEMA = """
      CREATE TABLE drill_effects (k BIGINT NOT NULL, invocation VARCHAR(64) NOT NULL, step VARCHAR(16) NOT NULL,
        payload VARCHAR(80) NOT NULL, token BIGINT NOT NULL, upstream BIGINT NOT NULL);
      PARTITION TABLE drill_effects ON COLUMN k;
      CREATE INDEX drill_effects_by_invocation ON drill_effects (k, invocation);
      CREATE TABLE drill_failing (k BIGINT NOT NULL, PRIMARY KEY (k));
      PARTITION TABLE drill_failing ON COLUMN k;
      """;

  /** The function names, which are also the {@code step} values of their rows. */
  public static final String WRITE = "write";
  public static final String FLAKY = "flaky";
  public static final String FLAKY_FIRST = "flaky_first";
  public static final String WRITE_BADKEY = "write_badkey";
  public static final String OBSERVE = "observe";

  /** The edge every function but the first reads from. */
  static final String NEXT = "next";

  /** source -> write -> observe -> sink: one writer. */
  public static final Graph ONE = Graph.named("drill_one")
      .addLocalFunction(WRITE, Write.class)
      .addLocalFunction(OBSERVE, Observe.class)
      .addEdge(Graph.SOURCE, WRITE, ApiaryFunction.SOURCE, String.class)
      .addEdge(WRITE, OBSERVE, NEXT)
      .addEdge(OBSERVE, Graph.SINK, ApiaryFunction.SINK);

  /** source -> write -> flaky -> observe -> sink: two writers in sequence, the second one sometimes failing. */
  public static final Graph TWO = Graph.named("drill_two")
      .addLocalFunction(WRITE, Write.class)
      .addLocalFunction(FLAKY, FlakyWrite.class)
      .addLocalFunction(OBSERVE, Observe.class)
      .addEdge(Graph.SOURCE, WRITE, ApiaryFunction.SOURCE, String.class)
      .addEdge(WRITE, FLAKY, NEXT)
      .addEdge(FLAKY, OBSERVE, NEXT)
      .addEdge(OBSERVE, Graph.SINK, ApiaryFunction.SINK);

  /** source -> flaky_first -> observe -> sink: the only writer sometimes fails. */
  public static final Graph FLAKY_ONLY = Graph.named("drill_flaky")
      .addLocalFunction(FLAKY_FIRST, FlakyFirstWrite.class)
      .addLocalFunction(OBSERVE, Observe.class)
      .addEdge(Graph.SOURCE, FLAKY_FIRST, ApiaryFunction.SOURCE, String.class)
      .addEdge(FLAKY_FIRST, OBSERVE, NEXT)
      .addEdge(OBSERVE, Graph.SINK, ApiaryFunction.SINK);

  /**
   * source -> write -> sink: one writer and nothing else. {@code write} sends on {@code next} in every graph, so here
   * {@code next} is the edge into the sink (the sink is a node; its incoming edges may have any ID).
   */
  public static final Graph SINGLE = Graph.named("drill_single")
      .addLocalFunction(WRITE, Write.class)
      .addEdge(Graph.SOURCE, WRITE, ApiaryFunction.SOURCE, String.class)
      .addEdge(WRITE, Graph.SINK, NEXT);

  /** source -> flaky_first -> sink: one writer that sometimes fails, and nothing else. */
  public static final Graph SINGLE_FLAKY = Graph.named("drill_single_flaky")
      .addLocalFunction(FLAKY_FIRST, FlakyFirstWrite.class)
      .addEdge(Graph.SOURCE, FLAKY_FIRST, ApiaryFunction.SOURCE, String.class)
      .addEdge(FLAKY_FIRST, Graph.SINK, NEXT);

  /** source -> write_badkey -> observe -> sink: the write commits, then its output has a key of the wrong type. */
  public static final Graph BAD_KEY = Graph.named("drill_badkey")
      .addLocalFunction(WRITE_BADKEY, WriteBadKey.class)
      .addLocalFunction(OBSERVE, Observe.class)
      .addEdge(Graph.SOURCE, WRITE_BADKEY, ApiaryFunction.SOURCE, String.class)
      .addEdge(WRITE_BADKEY, OBSERVE, NEXT)
      .addEdge(OBSERVE, Graph.SINK, ApiaryFunction.SINK);

  public static final Application APP = Application.of(SCHEMA, ONE, TWO, FLAKY_ONLY, BAD_KEY, SINGLE,
      SINGLE_FLAKY);

  /** The writing steps of each graph, in the order they run. The drill's model; it does not ask Apiary. */
  public static List<String> writers(String graph) {
    return switch (graph) {
      case "drill_one" -> List.of(WRITE);
      case "drill_two" -> List.of(WRITE, FLAKY);
      case "drill_flaky" -> List.of(FLAKY_FIRST);
      case "drill_badkey" -> List.of(WRITE_BADKEY);
      case "drill_single" -> List.of(WRITE);
      case "drill_single_flaky" -> List.of(FLAKY_FIRST);
      default -> throw new IllegalArgumentException("not a drill graph: " + graph);
    };
  }

  /**
   * Whether a graph ends in {@code observe}, so that its value is the last writer's chain followed by
   * {@code "|seen=<rows>"}; otherwise the value is the last writer's chain itself. The drill's model, like
   * {@link #writers}.
   */
  public static boolean observes(String graph) {
    return switch (graph) {
      case "drill_one", "drill_two", "drill_flaky", "drill_badkey" -> true;
      case "drill_single", "drill_single_flaky" -> false;
      default -> throw new IllegalArgumentException("not a drill graph: " + graph);
    };
  }

  /** The invocation ID a payload names. */
  static String invocationOf(String payload) {
    int bar = payload.indexOf('|');
    return bar < 0 ? payload : payload.substring(0, bar);
  }

  /** The payload a chain starts with. */
  static String payloadOf(String chain) {
    int semi = chain.indexOf(';');
    return semi < 0 ? chain : chain.substring(0, semi);
  }

  /** The token of the last step of a chain, 0 if it has none. */
  static long lastToken(String chain) {
    int eq = chain.lastIndexOf('=');
    return eq < 0 || chain.lastIndexOf(';') < 0 ? 0L : Long.parseLong(chain.substring(eq + 1));
  }

  private DrillApp() {}
}
