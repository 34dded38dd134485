package org.apiary.frontend.authz;

import org.apiary.AccessPolicy;
import org.apiary.Application;
import org.apiary.Graph;
import org.apiary.LocalFunction;
import org.apiary.Statement;

/**
 * The access-control scenario: patient records that nurses may read and touch for treatment (and read for billing),
 * through graphs that declare their roles and purposes.
 */
public final class AuthzApp {
  public static final String SCHEMA = """
      CREATE TABLE az_records (id BIGINT NOT NULL, hits BIGINT NOT NULL, PRIMARY KEY (id));
      PARTITION TABLE az_records ON COLUMN id;
      """;

  /** Reads record k: nurses, for treatment or billing. */
  public static final Graph READ = Graph.named("az_read")
      .addLocalFunction("az_readRecord", ReadRecord.class)
      .addEdge(Graph.SOURCE, "az_readRecord", "source", String.class)
      .addEdge("az_readRecord", Graph.SINK, "sink")
      .withAccess(AccessPolicy.roles("nurse").withPurposes("treatment", "billing"))
      .withFunctionAccess("az_readRecord", AccessPolicy.roles("nurse").withPurposes("treatment", "billing"));

  /** Reads record k through a graph open to all: its function's own policy still applies. */
  public static final Graph SUMMARY = Graph.named("az_summary")
      .addLocalFunction("az_readRecord", ReadRecord.class)
      .addEdge(Graph.SOURCE, "az_readRecord", "source", String.class)
      .addEdge("az_readRecord", Graph.SINK, "sink");

  /** Adds a hit to record k (inserting it): nurses, for treatment only. */
  public static final Graph TOUCH = Graph.named("az_touch")
      .addLocalFunction("az_touchRecord", TouchRecord.class)
      .addEdge(Graph.SOURCE, "az_touchRecord", "source", String.class)
      .addEdge("az_touchRecord", Graph.SINK, "sink")
      .withAccess(AccessPolicy.roles("nurse").withPurposes("treatment"));

  /** Adds a hit to record k, then reads it: two functions, so its invocations are logged, not one transaction. */
  public static final Graph TOUCH_THEN_READ = Graph.named("az_touch_read")
      .addLocalFunction("az_touchForward", TouchForward.class)
      .addLocalFunction("az_readRecord", ReadRecord.class)
      .addEdge(Graph.SOURCE, "az_touchForward", "source", String.class)
      .addEdge("az_touchForward", "az_readRecord", "touched")
      .addEdge("az_readRecord", Graph.SINK, "sink")
      .withAccess(AccessPolicy.roles("nurse").withPurposes("treatment"));

  public static final Application APP = Application.of(SCHEMA, READ, TOUCH, SUMMARY, TOUCH_THEN_READ);

  private static boolean registered;

  private AuthzApp() {}

  /** Registers {@link #APP} once per test JVM (test classes share the database). */
  static synchronized void registerOnce(org.apiary.database.ApiaryDatabase db) {
    if (!registered) {
      org.apiary.frontend.Registrar.register(db, APP);
      registered = true;
    }
  }

  /** Returns record k's hits, or -1 if there is no such record. */
  public static class ReadRecord extends LocalFunction<Long> {
    static final Statement GET = Statement.of("SELECT hits FROM az_records WHERE id = ?");

    @Override
    protected void run() {
      queueSQL(GET, partitionKey());
      var rows = executeSQL().get(0).rows();
      returnOutput(rows.isEmpty() ? -1L : rows.get(0).getLong("hits"));
    }
  }

  /** Adds one hit to record k, inserting it first if absent; returns the new count. */
  public static class TouchRecord extends LocalFunction<Long> {
    static final Statement GET = Statement.of("SELECT hits FROM az_records WHERE id = ?");
    static final Statement UPSERT = Statement.of("UPSERT INTO az_records (id, hits) VALUES (?, ?)");

    @Override
    protected void run() {
      queueSQL(GET, partitionKey());
      var rows = executeSQL().get(0).rows();
      long hits = rows.isEmpty() ? 1L : rows.get(0).getLong("hits") + 1;
      queueSQL(UPSERT, partitionKey(), hits);
      executeSQL();
      emit(hits);
    }

    /** Returns the new count (to the sink). */
    protected void emit(long hits) {
      returnOutput(hits);
    }
  }

  /** {@link TouchRecord}, passing its count on to the next function of record k. */
  public static class TouchForward extends TouchRecord {
    @Override
    protected void emit(long hits) {
      returnOutput(hits, "touched", partitionKey());
    }
  }
}
