package org.apiary.testapp;

import org.apiary.LocalFunction;
import org.apiary.Statement;

/** Stores a large string under key k (the disk-full test fills a small volume with few transactions). */
public class PutBlob extends LocalFunction<Long> {
  public static final String SCHEMA = """
      CREATE TABLE blobs (k BIGINT NOT NULL, v VARCHAR(40000 BYTES) NOT NULL, PRIMARY KEY (k));
      PARTITION TABLE blobs ON COLUMN k;
      """;

  static final Statement PUT = Statement.of("UPSERT INTO blobs (k, v) VALUES (?, ?)");

  @Override
  protected void run() {
    queueSQL(PUT, partitionKey(), retrieveInput(SOURCE, String.class));
    executeSQL();
    returnOutput(partitionKey());
  }
}
