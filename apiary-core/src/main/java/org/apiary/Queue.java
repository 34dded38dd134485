package org.apiary;

import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A durable queue of invocations, declared with the application ({@link Application#withQueues}) and limited by
 * flow control (issue 42). Work put on a queue ({@code client.enqueue(queue, request)}) is stored in the database in
 * one single-partition transaction and runs later as an ordinary invocation of its graph, on whichever frontend
 * claims it, within the queue's limits:
 *
 * <pre>{@code
 * Queue emails = Queue.named("emails")
 *     .concurrency(8)                        // at most 8 of its invocations running, across every frontend
 *     .perFrontend(2)                        // at most 2 of them on any one frontend
 *     .rate(100, Duration.ofSeconds(1));     // at most 100 started in any second
 * Queue perUser = Queue.named("exports")
 *     .partitioned().concurrency(1)          // at most 1 running per partition key (the invocation's key)
 *     .priority();                           // items enqueued with a higher priority are claimed first
 * Application app = Application.of(SCHEMA, sendEmail).withQueues(emails);
 * }</pre>
 *
 * <h2>What Apiary guarantees</h2>
 * <ul>
 *   <li>An enqueued item survives the loss of every frontend: it is a row in the database until it has run; a
 *       frontend that starts later runs it.</li>
 *   <li>The limits are counted from the database's own rows, in the transaction that claims an item (all of one
 *       queue's items live in one partition, whose transactions VoltDB runs one at a time), so they hold across
 *       any number of frontends.</li>
 *   <li>Each item runs as one invocation under its invocation ID, with the exactly-once guarantees of any other
 *       invocation; a deduplication ID names one item: enqueuing it again, while that item waits, runs or after it
 *       ended (within retention), answers with the first item's invocation, and with other arguments is refused.</li>
 * </ul>
 *
 * <h2>Priority and partitioned queues</h2>
 * A queue declared with {@link #priority()} takes a priority with each item
 * ({@code client.enqueue(queue, dedupId, request, delay, priority)}, any {@code int}, default 0): waiting items are
 * claimed highest priority first, and in the order they were enqueued within one priority. A priority given for a
 * queue without it is refused. A {@link #partitioned()} queue applies its {@link #concurrency} and {@link #rate}
 * limits to each partition key separately (the key its item's invocation runs under, compared as JSON text), while
 * {@link #perFrontend} still bounds the whole queue on one frontend; a claim looks at most
 * {@value #PARTITIONED_CLAIM_SCAN} waiting items ahead, so a backlog of that many items of keys at their limit delays
 * the others until some of them start.
 *
 * <p>A queue's items are kept in one partition, so one queue's enqueues and claims are serialized there; spread
 * heavy work over several queues. A limit left undeclared is unlimited.
 */
public final class Queue {
  private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_.-]{0,63}");

  private final String name;
  private final int concurrency;
  private final int perFrontend;
  private final int rateLimit;
  private final Duration ratePeriod;
  private final boolean priority;
  private final boolean partitioned;

  /**
   * The queue of delayed starts ({@link org.apiary.client.ApiaryClient#start(org.apiary.client.InvocationRequest,
   * Duration)}, issue 42): declared, without limits, by every registration of an application. Names starting with
   * {@code apiary.} are Apiary's: {@link #named} refuses them.
   */
  public static final String DELAYED = "apiary.delayed";

  /** How many waiting items of a {@link #partitioned()} queue one claim looks at, in claiming order. */
  public static final int PARTITIONED_CLAIM_SCAN = 1_000;

  private Queue(String name, int concurrency, int perFrontend, int rateLimit, Duration ratePeriod, boolean priority,
                boolean partitioned) {
    this.name = name;
    this.concurrency = concurrency;
    this.perFrontend = perFrontend;
    this.rateLimit = rateLimit;
    this.ratePeriod = ratePeriod;
    this.priority = priority;
    this.partitioned = partitioned;
  }

  /**
   * A queue without limits, to be limited with {@link #concurrency}, {@link #perFrontend} and {@link #rate}.
   *
   * @param name 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or '_'
   * @throws IllegalArgumentException if the name is not such a name, or starts with {@code apiary.} (Apiary's own,
   *     as {@link #DELAYED})
   */
  public static Queue named(String name) {
    Objects.requireNonNull(name, "name");
    if (!NAME.matcher(name).matches()) {
      throw new IllegalArgumentException("a queue's name is 1 to 64 letters, digits, '_', '.' or '-', starting with "
          + "a letter or '_', not '" + name + "'");
    }
    if (name.startsWith("apiary.")) {
      throw new IllegalArgumentException("queue names starting with 'apiary.' are Apiary's own, not '" + name + "'");
    }
    return new Queue(name, 0, 0, 0, null, false, false);
  }

  /**
   * This queue with at most {@code limit} of its invocations running at once, across every frontend.
   *
   * @throws IllegalArgumentException if {@code limit} is not positive
   */
  public Queue concurrency(int limit) {
    return new Queue(name, positive(limit, "concurrency"), perFrontend, rateLimit, ratePeriod, priority, partitioned);
  }

  /**
   * This queue with at most {@code limit} of its invocations running at once on any one frontend.
   *
   * @throws IllegalArgumentException if {@code limit} is not positive
   */
  public Queue perFrontend(int limit) {
    return new Queue(name, concurrency, positive(limit, "perFrontend"), rateLimit, ratePeriod, priority,
        partitioned);
  }

  /**
   * This queue with at most {@code limit} of its invocations started in any window of {@code period} (by the
   * database's clock, across every frontend).
   *
   * @throws IllegalArgumentException if {@code limit} is not positive or {@code period} is shorter than 1 ms
   */
  public Queue rate(int limit, Duration period) {
    Objects.requireNonNull(period, "period");
    if (period.toMillis() < 1) {
      throw new IllegalArgumentException("a queue's rate period is at least 1 ms, not " + period);
    }
    return new Queue(name, concurrency, perFrontend, positive(limit, "rate"), period, priority, partitioned);
  }

  /**
   * This queue taking a priority with each item: waiting items are claimed highest priority first (then oldest
   * first). Without it, an enqueue that gives a priority other than 0 is refused.
   */
  public Queue priority() {
    return new Queue(name, concurrency, perFrontend, rateLimit, ratePeriod, true, partitioned);
  }

  /**
   * This queue with its {@link #concurrency} and {@link #rate} limits applied to each partition key (its items'
   * invocations' keys) separately; {@link #perFrontend} still bounds all of the queue's items on one frontend.
   */
  public Queue partitioned() {
    return new Queue(name, concurrency, perFrontend, rateLimit, ratePeriod, priority, true);
  }

  private static int positive(int limit, String what) {
    if (limit < 1) {
      throw new IllegalArgumentException("a queue's " + what + " limit is at least 1, not " + limit);
    }
    return limit;
  }

  /** The queue's name. */
  public String name() {
    return name;
  }

  /** The most invocations running at once across every frontend; 0 if unlimited. */
  public int concurrency() {
    return concurrency;
  }

  /** The most invocations running at once on one frontend; 0 if unlimited. */
  public int perFrontend() {
    return perFrontend;
  }

  /** The most invocations started in any {@link #ratePeriod()}; 0 if unlimited. */
  public int rateLimit() {
    return rateLimit;
  }

  /** The window of {@link #rateLimit()}; {@code null} if unlimited. */
  public Duration ratePeriod() {
    return ratePeriod;
  }

  /** Whether items carry a priority ({@link #priority()}). */
  public boolean hasPriority() {
    return priority;
  }

  /** Whether the limits apply per partition key ({@link #partitioned()}). */
  public boolean isPartitioned() {
    return partitioned;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Queue q && name.equals(q.name) && concurrency == q.concurrency
        && perFrontend == q.perFrontend && rateLimit == q.rateLimit && Objects.equals(ratePeriod, q.ratePeriod)
        && priority == q.priority && partitioned == q.partitioned;
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, concurrency, perFrontend, rateLimit, ratePeriod, priority, partitioned);
  }

  @Override
  public String toString() {
    return "Queue[" + name + (concurrency > 0 ? ", concurrency " + concurrency : "")
        + (perFrontend > 0 ? ", per frontend " + perFrontend : "")
        + (rateLimit > 0 ? ", rate " + rateLimit + " per " + ratePeriod : "") + (priority ? ", priority" : "")
        + (partitioned ? ", partitioned" : "") + "]";
  }
}
