package org.apiary.benchmarks.retwis;

import java.util.ArrayList;
import java.util.List;
import org.apiary.LocalFunction;
import org.apiary.QueryResult;
import org.apiary.Row;
import org.apiary.Statement;
import org.apiary.benchmarks.ManualLog;

/** The ten newest posts of one author. */
public class RecentPosts extends LocalFunction<Long> {
  static final Statement RECENT = Statement.of(
      "SELECT author, post_id, posted_at, body FROM retwis_posts WHERE author = ? ORDER BY posted_at DESC, post_id DESC LIMIT 10");

  /** One post as a timeline shows it. */
  public record PostView(long author, long postId, long postedAt, String body) {}

  @Override
  protected void run() {
    queueSQL(RECENT, partitionKey());
    QueryResult r = executeSQL().get(0);
    if (ManualLog.enabled()) {
      ManualLog.reads(functionName(), uniqueId(), "retwis_posts", "POST_ID", r);
    }
    List<PostView> posts = new ArrayList<>();
    for (Row row : r) {
      posts.add(new PostView(row.getLong("author"), row.getLong("post_id"), row.getLong("posted_at"),
          row.getString("body")));
    }
    returnOutput(posts);
  }
}
