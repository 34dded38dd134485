package org.apiary.benchmarks.retwis;

import org.apiary.LocalFunction;
import org.apiary.Statement;
import org.apiary.benchmarks.ManualLog;

/** A new post by the partition key's user; returns its ID. */
public class Post extends LocalFunction<Long> {
  static final Statement INSERT = Statement.of(
      "INSERT INTO retwis_posts (author, post_id, posted_at, body) VALUES (?, ?, ?, ?)");

  @Override
  protected void run() {
    String body = retrieveInput(SOURCE, String.class);
    long id = uniqueId();
    java.time.Instant now = transactionTime();
    long postedAt = now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000;
    queueSQL(INSERT, partitionKey(), id, postedAt, body);
    // left queued: runs when run() returns, in the transaction's last batch
    if (ManualLog.enabled()) {
      ManualLog.event(functionName(), id, "insert", "retwis_posts", id, body);
    }
    returnOutput(id);
  }
}
