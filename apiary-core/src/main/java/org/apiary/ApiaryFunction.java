package org.apiary;

import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apiary.internal.FunctionAccess;
import org.apiary.internal.FunctionRuntime;
import org.apiary.internal.Json;

/**
 * A function: plain Java that talks to data only through SQL and runs as one ACID transaction inside the
 * database (paper section 4.1). Extend {@link LocalFunction} for a function that touches one partition, chosen by
 * a partition key, or {@link GlobalFunction} for one that may touch any data.
 *
 * <pre>{@code
 * public class Increment extends LocalFunction<Long> {
 *   static final Statement GET = Statement.of("SELECT v FROM counters WHERE k = ?");
 *   static final Statement PUT = Statement.of("UPSERT INTO counters VALUES (?, ?)");
 *
 *   protected void run() {
 *     long by = retrieveInput(SOURCE, Long.class);
 *     queueSQL(GET, partitionKey());
 *     long v = executeSQL().get(0).firstRow().map(r -> r.getLong("v")).orElse(0L);
 *     queueSQL(PUT, partitionKey(), v + by);
 *     executeSQL();
 *     returnOutput(v + by);
 *   }
 * }
 * }</pre>
 *
 * <h2>Rules a function follows</h2>
 * <ul>
 *   <li>Its SQL is declared as {@code static final} {@link Statement} fields of its class, so Apiary can check it
 *       against the schema before deployment.</li>
 *   <li>It throws to abort: every write it made is rolled back and the caller gets the exception's message.</li>
 *   <li>It is deterministic, because on a replicated (k-safe) database every replica runs it and the results must
 *       agree: use {@link #transactionTime()}, {@link #uniqueId()} and {@link #random()}, never the wall clock,
 *       {@code java.util.Random} or unordered iteration that changes the outcome.</li>
 *   <li>Calls to external services, if any, are idempotent.</li>
 *   <li>It has a public no-argument constructor; Apiary creates a fresh instance for every execution.</li>
 * </ul>
 */
public abstract class ApiaryFunction {
  /** The edge that carries the caller's arguments into a function. */
  public static final String SOURCE = "source";
  /** The edge that carries a function's results back to the caller. */
  public static final String SINK = "sink";

  static {
    FunctionAccess.install(ApiaryFunction::runWith);
  }

  private FunctionRuntime runtime;

  ApiaryFunction() {}

  /**
   * The function's body. Reads inputs, runs SQL, returns outputs.
   *
   * @throws Exception to abort the transaction; the caller receives the message
   */
  protected abstract void run() throws Exception;

  private static void runWith(ApiaryFunction function, FunctionRuntime runtime) throws Exception {
    function.runtime = runtime;
    try {
      function.run();
    } finally {
      function.runtime = null;
    }
  }

  private FunctionRuntime runtime() {
    if (runtime == null) {
      throw new IllegalStateException(
          "the Apiary function API is only usable while Apiary runs this function inside the database");
    }
    return runtime;
  }

  /**
   * The single input on an edge, converted to {@code type}.
   *
   * @throws IllegalArgumentException if the edge carries no input, more than one, or one that is not a {@code type}
   */
  protected final <T> T retrieveInput(String edge, Class<T> type) {
    List<com.fasterxml.jackson.databind.JsonNode> values = runtime().inputs(edge);
    if (values.size() != 1) {
      throw new IllegalArgumentException("function '" + runtime().functionName() + "' expected exactly one input on edge '"
          + edge + "' but received " + values.size());
    }
    return Json.convert(values.get(0), type, "input on edge '" + edge + "' of function '" + runtime().functionName() + "'");
  }

  /**
   * Every input on an edge, converted to {@code type}, in the order they were sent; empty if there are none.
   *
   * @throws IllegalArgumentException if an input is not a {@code type}
   */
  protected final <T> List<T> retrieveInputs(String edge, Class<T> type) {
    String where = "input on edge '" + edge + "' of function '" + runtime().functionName() + "'";
    return runtime().inputs(edge).stream().map(v -> Json.convert(v, type, where)).toList();
  }

  /**
   * Queues a statement for the next {@link #executeSQL()} (the paper's {@code queueSQL(Query, List[Arg], Level)}).
   * Statements still queued when {@link #run()} returns run then, as the transaction's last batch (with Apiary's
   * own record of the outputs, if it keeps one): a function whose last statements are writes whose results it does
   * not need saves a batch by leaving them queued. If one of them fails, the function fails and all its writes roll
   * back, as if {@code executeSQL()} had thrown.
   *
   * @param statement a statement declared as a static field of this function's class
   * @param args one value per {@code ?}
   * @param level how much provenance this statement captures
   */
  protected final void queueSQL(Statement statement, List<?> args, ProvenanceLevel level) {
    runtime().queue(statement, args.toArray(), level);
  }

  /** Queues a statement capturing {@link ProvenanceLevel#READS_AND_WRITES full provenance}. */
  protected final void queueSQL(Statement statement, Object... args) {
    runtime().queue(statement, Arrays.copyOf(args, args.length), ProvenanceLevel.READS_AND_WRITES);
  }

  /**
   * Executes every queued statement in one batch, in one database round trip, and returns one result per
   * statement in queue order.
   *
   * @throws RuntimeException if a statement fails (for example a constraint violation); let it propagate to abort
   */
  protected final List<QueryResult> executeSQL() {
    return runtime().execute();
  }

  /** Returns a value to the caller, along the {@link #SINK} edge. */
  protected final void returnOutput(Object value) {
    runtime().output(SINK, value, null);
  }

  /** Returns a value along an edge into a global function (or the sink). */
  protected final void returnOutput(Object value, String edge) {
    runtime().output(edge, value, null);
  }

  /**
   * Returns a value along an edge into a local function, associated with the partition key that chooses which
   * partition the receiving function runs on (the paper's {@code returnOutput(Object, Edge, Key)}).
   */
  protected final void returnOutput(Object value, String edge, Object partitionKey) {
    runtime().output(edge, value, partitionKey);
  }

  /**
   * Puts an invocation on a durable queue ({@link Queue}) atomically with this function's writes (issue 42: an
   * outbox that cannot disagree with the data): the request is stored with this function's outputs, in its
   * transaction, so if the function fails (or its transaction rolls back) nothing is enqueued, and once it commits the
   * item is enqueued, by whichever frontend runs or recovers this invocation, before anything after this function
   * runs. Its invocation ID is derived from this invocation, function, partition key and the enqueue's order, so a
   * replay or recovery enqueues the same item once. The queue and graph are checked only when the item is stored:
   * an unknown queue or graph, arguments of the wrong type, or a deduplication ID taken by a different request fail
   * the invocation then, after this function's writes committed.
   *
   * @param queue a queue declared with the application
   * @param deduplicationId names the item within the queue (see {@code ApiaryClient.enqueue}), or {@code null}
   * @param graph the graph to run
   * @param partitionKey its partition key, or {@code null}
   * @param arguments its arguments
   */
  protected final void enqueue(String queue, String deduplicationId, String graph, Object partitionKey,
                               Object... arguments) {
    enqueue(queue, deduplicationId, java.time.Duration.ZERO, 0, graph, partitionKey, arguments);
  }

  /**
   * As {@link #enqueue(String, String, String, Object, Object...)}, with the item kept from starting until
   * {@code delay} after it is stored (by the database's clock), and claimed before waiting items of lower
   * {@code priority} on a queue declared with {@link Queue#priority()} (as {@code ApiaryClient.enqueue} with a delay
   * and a priority). A priority other than 0 on a queue without priority fails the invocation when the item is
   * stored, after this function's writes committed.
   *
   * @param delay how long after it is stored the item may start; {@link java.time.Duration#ZERO} for at once
   * @param priority higher is claimed first; 0 is the default
   * @throws IllegalArgumentException if {@code delay} is negative
   */
  protected final void enqueue(String queue, String deduplicationId, java.time.Duration delay, int priority,
                               String graph, Object partitionKey, Object... arguments) {
    java.util.Objects.requireNonNull(queue, "queue");
    java.util.Objects.requireNonNull(graph, "graph");
    java.util.Objects.requireNonNull(delay, "delay");
    if (delay.isNegative()) {
      throw new IllegalArgumentException("an enqueue's delay must not be negative, not " + delay);
    }
    java.util.Map<String, Object> item = new java.util.LinkedHashMap<>();
    item.put("queue", queue);
    item.put("dedup", deduplicationId);
    item.put("graph", graph);
    item.put("key", partitionKey);
    item.put("args", java.util.Arrays.asList(arguments));
    if (!delay.isZero()) {
      item.put("delayMs", delay.toMillis());
    }
    if (priority != 0) {
      item.put("priority", priority);
    }
    runtime().output(org.apiary.internal.Output.ENQUEUE_EDGE, item, null);
  }

  /** The transaction's timestamp: the same on every replica. Use it instead of the wall clock. */
  protected final Instant transactionTime() {
    return runtime().transactionTime();
  }

  /** An ID unique across the database, the same on every replica. */
  protected final long uniqueId() {
    return runtime().uniqueId();
  }

  /** A random generator seeded by the transaction, so every replica draws the same numbers. */
  protected final Random random() {
    return runtime().random();
  }

  /** The name this function was registered under. */
  protected final String functionName() {
    return runtime().functionName();
  }

  /** The current execution's partition key, or {@code null} for a global function. */
  Object currentPartitionKey() {
    return runtime().partitionKey();
  }
}
