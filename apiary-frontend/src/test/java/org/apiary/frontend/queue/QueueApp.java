package org.apiary.frontend.queue;

import java.time.Duration;
import org.apiary.ApiaryFunction;
import org.apiary.Application;
import org.apiary.Graph;
import org.apiary.Queue;
import org.apiary.StepPolicy;

/**
 * Issue 42, item 2: graphs run from durable queues. {@code qMark} [item] records that item ran under key k
 * ({@code q_marks}, with the time of its transaction, {@code ran_at}); {@code qSlow} [item, ms] records when the item entered
 * ({@code enter}), waits ms in the frontend ({@code pause}, an external step) and records when it left
 * ({@code leave}), so the intervals in {@code q_runs} show how many ran at once.
 */
public final class QueueApp {
  public static final String SCHEMA = """
      CREATE TABLE q_marks (k BIGINT NOT NULL, item VARCHAR(64) NOT NULL, ran_at TIMESTAMP NOT NULL, PRIMARY KEY (k, item));
      PARTITION TABLE q_marks ON COLUMN k;
      CREATE TABLE q_runs (k BIGINT NOT NULL, item VARCHAR(64) NOT NULL, entered TIMESTAMP NOT NULL,
        left_at TIMESTAMP, PRIMARY KEY (k, item));
      PARTITION TABLE q_runs ON COLUMN k;
      CREATE TABLE q_tally (k BIGINT NOT NULL, item VARCHAR(64) NOT NULL, ran_at TIMESTAMP NOT NULL);
      PARTITION TABLE q_tally ON COLUMN k;
      """;

  public static final Graph MARK = Graph.named("qMark")
      .addLocalFunction("qMarkIt", Mark.class)
      .addEdge(Graph.SOURCE, "qMarkIt", ApiaryFunction.SOURCE)
      .addEdge("qMarkIt", Graph.SINK, ApiaryFunction.SINK);

  /** {@code qTally} [item]: adds a row to {@code q_tally} (no key) for every run, so a repeated run is seen. */
  public static final Graph TALLY = Graph.named("qTally")
      .addLocalFunction("qTallyIt", Tally.class)
      .addEdge(Graph.SOURCE, "qTallyIt", ApiaryFunction.SOURCE)
      .addEdge("qTallyIt", Graph.SINK, ApiaryFunction.SINK);

  public static final Graph SLOW = Graph.named("qSlow")
      .addLocalFunction("qEnter", Enter.class)
      .addExternalFunction("qPause", Pause.class, StepPolicy.defaults().withMaxAttempts(1)
          .withTimeout(Duration.ofSeconds(10)))
      .addLocalFunction("qLeave", Leave.class)
      .addEdge(Graph.SOURCE, "qEnter", ApiaryFunction.SOURCE)
      .addEdge("qEnter", "qPause", "pause")
      .addEdge("qPause", "qLeave", "leave")
      .addEdge("qLeave", Graph.SINK, ApiaryFunction.SINK);

  /** {@code qSpawn} [item, fail]: records the item and enqueues a child {@code qMark} in the same transaction. */
  public static final Graph SPAWN = Graph.named("qSpawn")
      .addLocalFunction("qSpawnIt", Spawn.class)
      .addEdge(Graph.SOURCE, "qSpawnIt", ApiaryFunction.SOURCE)
      .addEdge("qSpawnIt", Graph.SINK, ApiaryFunction.SINK);

  /** {@code qSpawnRanked} [item]: as {@code qSpawn}, its children enqueued with priorities and a delay. */
  public static final Graph SPAWN_RANKED = Graph.named("qSpawnRanked")
      .addLocalFunction("qSpawnRankedIt", SpawnRanked.class)
      .addEdge(Graph.SOURCE, "qSpawnRankedIt", ApiaryFunction.SOURCE)
      .addEdge("qSpawnRankedIt", Graph.SINK, ApiaryFunction.SINK);

  /** At most 2 running across every frontend, up to 2 on each. */
  public static final Queue LIMITED = Queue.named("q_limited").concurrency(2).perFrontend(2);
  /** At most 1 running on each frontend. */
  public static final Queue ONE_EACH = Queue.named("q_one_each").perFrontend(1);
  /** At most 3 started in any second. */
  public static final Queue RATED = Queue.named("q_rated").rate(3, Duration.ofSeconds(1));
  /** One at a time, highest priority first. */
  public static final Queue PRIORITIZED = Queue.named("q_prio").concurrency(1).priority();
  /** One at a time per partition key. */
  public static final Queue PER_KEY = Queue.named("q_per_key").partitioned().concurrency(1);
  /** No limits. */
  public static final Queue PLAIN = Queue.named("q_plain");

  public static final Application APP = Application.of(SCHEMA, MARK, TALLY, SLOW, SPAWN, SPAWN_RANKED)
      .withQueues(LIMITED, ONE_EACH, RATED, PLAIN, PRIORITIZED, PER_KEY);

  private QueueApp() {}
}
