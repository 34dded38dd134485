package org.apiary.docs.readme;

import java.util.ArrayList;
import java.util.List;
import org.apiary.LocalFunction;
import org.apiary.Row;
import org.apiary.Statement;

/** The timeline graph of README.md and docs/programming-guide.md: one followee's posts, on the followee's partition. */
public class GetPosts extends LocalFunction<Long> {
  static final Statement POSTS = Statement.of("SELECT body FROM posts WHERE author = ?");

  @Override
  protected void run() {
    queueSQL(POSTS, partitionKey());
    List<String> posts = new ArrayList<>();
    for (Row row : executeSQL().get(0)) {
      posts.add(row.getString("body"));
    }
    returnOutput(posts);
  }
}
