package org.apiary.benchmarks.retwis;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;
import org.apiary.ApiaryFunction;
import org.apiary.Application;
import org.apiary.Graph;
import org.apiary.benchmarks.rpc.ServiceDefinition;
import org.apiary.benchmarks.workload.DataLoader;
import org.apiary.benchmarks.workload.Request;
import org.apiary.benchmarks.workload.Workload;
import org.apiary.database.ApiaryDatabase;
import org.voltdb.VoltTable;

/**
 * Retwis (after Redis's Twitter clone; paper Table 1): get-timeline 90% (the 10 newest posts of each of the 50
 * users a user follows: 1 + 50 functions, each on its user's partition, about 550 rows), post 10%.
 */
public final class RetwisWorkload implements Workload {
  public static final int FOLLOWS_PER_USER = 50;
  public static final int POSTS_PER_USER = 10;

  static final String SCHEMA = """
      CREATE TABLE retwis_follows (follower BIGINT NOT NULL, followee BIGINT NOT NULL, PRIMARY KEY (follower, followee));
      PARTITION TABLE retwis_follows ON COLUMN follower;
      CREATE TABLE retwis_posts (author BIGINT NOT NULL, post_id BIGINT NOT NULL, posted_at BIGINT NOT NULL,
        body VARCHAR(140) NOT NULL, PRIMARY KEY (author, post_id));
      PARTITION TABLE retwis_posts ON COLUMN author;
      CREATE INDEX retwis_posts_by_time ON retwis_posts (author, posted_at);
      """;

  /** source -> followees -(one per followee)-> recentPosts -> sink. */
  public static final Graph TIMELINE = Graph.named("timeline")
      .addLocalFunction("followees", Followees.class)
      .addLocalFunction("recentPosts", RecentPosts.class)
      .addEdge(Graph.SOURCE, "followees", ApiaryFunction.SOURCE, Long.class)
      .addEdge("followees", "recentPosts", "followee", Long.class)
      .addEdge("recentPosts", Graph.SINK, ApiaryFunction.SINK);

  public static final Graph POST = Graph.named("post")
      .addLocalFunction("post", Post.class)
      .addEdge(Graph.SOURCE, "post", ApiaryFunction.SOURCE, String.class)
      .addEdge("post", Graph.SINK, ApiaryFunction.SINK);

  private volatile int users = 10_000;

  @Override
  public String name() {
    return "retwis";
  }

  @Override
  public Application application() {
    return Application.of(SCHEMA, TIMELINE, POST);
  }

  @Override
  public List<String> operations() {
    return List.of("timeline", "post");
  }

  @Override
  public List<String> writtenTables() {
    return List.of("retwis_posts");
  }

  static int users(Scale scale) {
    return scale == Scale.QUICK ? 1_000 : 10_000;
  }

  @Override
  public void load(ApiaryDatabase db, Scale scale) throws InterruptedException {
    users = users(scale);
    DataLoader loader = new DataLoader(db);
    SplittableRandom random = new SplittableRandom(42);
    for (long u = 0; u < users; u++) {
      for (long followee : distinctFollowees(u, random)) {
        loader.insert("retwis_follows", u, followee);
      }
      for (int i = 0; i < POSTS_PER_USER; i++) {
        loader.insert("retwis_posts", u, u * 1_000 + i, 1_000_000L * i, "post " + i + " by user " + u);
      }
    }
    loader.finish();
  }

  private List<Long> distinctFollowees(long user, SplittableRandom random) {
    java.util.Set<Long> chosen = new java.util.LinkedHashSet<>();
    while (chosen.size() < FOLLOWS_PER_USER) {
      long f = random.nextInt(users);
      if (f != user) {
        chosen.add(f);
      }
    }
    return new ArrayList<>(chosen);
  }

  @Override
  public Request next(RandomGenerator random) {
    long user = random.nextInt(users);
    if (random.nextInt(100) < 90) {
      return new Request(0, "timeline", user, user);
    }
    return new Request(1, "post", user, "a new post by user " + user);
  }

  @Override
  public List<Double> fixedLoads(Scale scale) {
    return scale == Scale.QUICK ? List.of(100.0) : List.of(200.0, 1_000.0);
  }

  @Override
  public String rpcProcedures() {
    return """
        CREATE PROCEDURE rpc_retwis_followees PARTITION ON TABLE retwis_follows COLUMN follower PARAMETER 0
          AS SELECT follower, followee FROM retwis_follows WHERE follower = ?;
        CREATE PROCEDURE rpc_retwis_recent PARTITION ON TABLE retwis_posts COLUMN author PARAMETER 0
          AS SELECT author, post_id, posted_at, body FROM retwis_posts WHERE author = ? ORDER BY posted_at DESC, post_id DESC LIMIT 10;
        CREATE PROCEDURE rpc_retwis_post PARTITION ON TABLE retwis_posts COLUMN author PARAMETER 0
          AS INSERT INTO retwis_posts (author, post_id, posted_at, body) VALUES (?, ?, ?, ?);
        """;
  }

  /** Three services, as in the original: the frontend, the social graph and the posts. */
  @Override
  public List<ServiceDefinition> rpcServices() {
    return List.of(
        new ServiceDefinition(ServiceDefinition.FRONTEND, Map.of(
            "timeline", (ctx, args) -> {
              JsonNode followees = ctx.call("social", "followees", args.get(0).asLong());
              return ctx.call("posts", "recent", followees);
            },
            "post", (ctx, args) -> ctx.call("posts", "post", args.get(0).asLong(), args.get(1).asText()))),
        new ServiceDefinition("social", Map.of("followees", (ctx, args) -> {
          VoltTable t = ctx.query("rpc_retwis_followees", args.get(0).asLong());
          List<Long> followees = new ArrayList<>();
          while (t.advanceRow()) {
            followees.add(t.getLong("followee"));
          }
          return followees;
        })),
        new ServiceDefinition("posts", Map.of(
            "recent", (ctx, args) -> {
              List<Object[]> calls = new ArrayList<>();
              args.get(0).forEach(f -> calls.add(new Object[] {"rpc_retwis_recent", f.asLong()}));
              List<List<RecentPosts.PostView>> timeline = new ArrayList<>();
              for (VoltTable t : ctx.queryAll(calls)) {
                List<RecentPosts.PostView> posts = new ArrayList<>();
                while (t.advanceRow()) {
                  posts.add(new RecentPosts.PostView(t.getLong("author"), t.getLong("post_id"), t.getLong("posted_at"),
                      t.getString("body")));
                }
                timeline.add(posts);
              }
              return timeline;
            },
            "post", (ctx, args) -> {
              long id = ThreadLocalRandom.current().nextLong(Long.MAX_VALUE);
              ctx.query("rpc_retwis_post", args.get(0).asLong(), id, System.currentTimeMillis() * 1_000,
                  args.get(1).asText());
              return id;
            })));
  }
}
