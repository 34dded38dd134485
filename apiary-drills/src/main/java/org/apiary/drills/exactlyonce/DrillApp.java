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
      CREATE TABLE drill_queued_effects (k BIGINT NOT NULL, item VARCHAR(64) NOT NULL, step VARCHAR(8) NOT NULL,
        token BIGINT NOT NULL, ran_at TIMESTAMP NOT NULL);
      PARTITION TABLE drill_queued_effects ON COLUMN k;
      CREATE TABLE drill_queue_state (k BIGINT NOT NULL, running BIGINT NOT NULL, high BIGINT NOT NULL,
        PRIMARY KEY (k));
      PARTITION TABLE drill_queue_state ON COLUMN k;
      CREATE TABLE drill_ticks (k BIGINT NOT NULL, tick VARCHAR(40) NOT NULL);
      PARTITION TABLE drill_ticks ON COLUMN k;
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

  /**
   * Queued work (issue 42): source -> queued_enter -> queued_call (an external step calling the drill's stub) ->
   * queued_leave -> sink. Argument {@code "<item>|<stub URL>"}; the item's name starts with {@code "<key>-"}.
   */
  public static final Graph QUEUED = Graph.named("drill_queued")
      .addLocalFunction("queued_enter", QueuedEnter.class)
      .addExternalFunction("queued_call", QueuedCall.class, org.apiary.StepPolicy.defaults().withMaxAttempts(3)
          .withTimeout(java.time.Duration.ofSeconds(10)))
      .addLocalFunction("queued_leave", QueuedLeave.class)
      .addEdge(Graph.SOURCE, "queued_enter", ApiaryFunction.SOURCE, String.class)
      .addEdge("queued_enter", "queued_call", NEXT)
      .addEdge("queued_call", "queued_leave", NEXT)
      .addEdge("queued_leave", Graph.SINK, ApiaryFunction.SINK);

  /** The key of limited items: their running count and its high-water mark are this key's row. */
  public static final long LIMITED_KEY = 1_000_001L;
  /** The key of items the drill cancels (their count never comes down, so it is kept apart). */
  public static final long CANCEL_KEY = 1_000_002L;
  /** The key the schedule's ticks run under. */
  public static final long TICK_KEY = 1_000_003L;
  /** The limited queue: at most 3 running across both frontends, 2 on either. */
  public static final org.apiary.Queue LIMITED = org.apiary.Queue.named("drill_limited").concurrency(3)
      .perFrontend(2);
  /** The queue of items the drill cancels while their external step runs: no limits. */
  public static final org.apiary.Queue CANCELLABLE = org.apiary.Queue.named("drill_cancellable");

  /** source -> tick -> sink, run by {@link #EVERY_SECOND}. */
  public static final Graph TICK = Graph.named("drill_tick")
      .addLocalFunction("tick", Tick.class)
      .addEdge(Graph.SOURCE, "tick", ApiaryFunction.SOURCE, String.class)
      .addEdge("tick", Graph.SINK, ApiaryFunction.SINK);
  /** A tick every second; after an outage, up to 30 missed ticks are caught up, so none is lost. */
  public static final org.apiary.Schedule EVERY_SECOND = org.apiary.Schedule.cron("drill_every_second",
      "* * * * * *", TICK).key(TICK_KEY).missed(org.apiary.Schedule.catchUp(30));

  public static final Application APP = Application.of(SCHEMA, ONE, TWO, FLAKY_ONLY, BAD_KEY, SINGLE,
      SINGLE_FLAKY, QUEUED, TICK).withQueues(LIMITED, CANCELLABLE).withSchedules(EVERY_SECOND);

  /** The partition key of a queued item, from its name ({@code "<key>-..."}). */
  static long keyOf(String item) {
    return Long.parseLong(item.substring(0, item.indexOf('-')));
  }

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
