package org.apiary.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sink tables of issue 43 item 1: {@code Invocations}, one row per ended invocation, and
 * {@code FunctionInvocations.mode}, which a sink created before it gains. The checks read the sink with plain SQL, and
 * the older layout is created with the literal DDL an earlier release ran, not with {@link ProvenanceSchema}.
 */
class InvocationsSinkTest {
  @TempDir
  Path dir;

  /** FunctionInvocations as releases before {@code mode} created it in DuckDB. */
  private static final String OLD_FUNCTION_INVOCATIONS = "CREATE TABLE FunctionInvocations (event_time TIMESTAMP, "
      + "exec_id VARCHAR, tx_id BIGINT, exec_seq BIGINT, partition_id INTEGER, function_name VARCHAR, graph_id VARCHAR, "
      + "execution_id VARCHAR, partition_key VARCHAR, caller VARCHAR, latency_us BIGINT, purpose VARCHAR, "
      + "caller_roles VARCHAR";

  private static final Instant T = Instant.parse("2026-11-29T10:00:00Z");

  private String duckdb() {
    return "jdbc:duckdb:" + dir.resolve("provenance.db");
  }

  @Test
  void anOlderFunctionInvocationsGainsModeOnDuckDb() throws SQLException {
    migratesFunctionInvocations(duckdb(), new Properties(), OLD_FUNCTION_INVOCATIONS + ")");
  }

  @Test
  void anOlderFunctionInvocationsGainsModeOnPostgres() throws SQLException {
    try (PostgresTestSchema schema = new PostgresTestSchema()) {
      migratesFunctionInvocations(schema.url(), PostgresTestSchema.props(),
          OLD_FUNCTION_INVOCATIONS.replace("VARCHAR", "TEXT") + ", PRIMARY KEY (exec_id))");
    }
  }

  /**
   * Every server of a cluster opens the sink at once: four connections upgrade the same older table at the same
   * moment, and each succeeds (PostgreSQL's ALTER TABLE ADD COLUMN races are retried), leaving one {@code mode}.
   */
  @Test
  void concurrentUpgradesOfTheSameTableSucceedOnPostgres() throws Exception {
    try (PostgresTestSchema schema = new PostgresTestSchema()) {
      execute(schema.url(), PostgresTestSchema.props(),
          OLD_FUNCTION_INVOCATIONS.replace("VARCHAR", "TEXT") + ", PRIMARY KEY (exec_id))");
      int sinks = 4;
      List<ProvenanceSink> open = new ArrayList<>();
      java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(sinks);
      try {
        for (int i = 0; i < sinks; i++) {
          open.add(ProvenanceSink.open(schema.url(), PostgresTestSchema.props()));
        }
        java.util.concurrent.CyclicBarrier together = new java.util.concurrent.CyclicBarrier(sinks);
        List<java.util.concurrent.Future<?>> calls = new ArrayList<>();
        for (ProvenanceSink sink : open) {
          calls.add(pool.submit(() -> {
            together.await(30, java.util.concurrent.TimeUnit.SECONDS);
            sink.ensureTable(ProvenanceSchema.functionInvocations());
            sink.ensureTable(ProvenanceSchema.invocations());
            return null;
          }));
        }
        for (java.util.concurrent.Future<?> call : calls) {
          call.get(60, java.util.concurrent.TimeUnit.SECONDS);
        }
      } finally {
        pool.shutdownNow();
        for (ProvenanceSink sink : open) {
          sink.close();
        }
      }
      assertEquals(1, schema.scalar("SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = '"
          + schema.schema() + "' AND table_name = 'functioninvocations' AND column_name = 'mode'"));
      assertEquals(1, schema.scalar("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = '"
          + schema.schema() + "' AND table_name = 'invocations'"));
    }
  }

  private void migratesFunctionInvocations(String url, Properties props, String oldDdl) throws SQLException {
    execute(url, props, oldDdl, "INSERT INTO FunctionInvocations (event_time, exec_id, tx_id, exec_seq, partition_id, "
        + "function_name, graph_id, execution_id, partition_key, caller, latency_us) VALUES "
        + "(TIMESTAMP '2026-11-29 09:00:00', 'old-1', 1, 0, 1, 'f', 'g', 'inv-old', '7', 'alice', 10)");
    try (ProvenanceSink sink = ProvenanceSink.open(url, props)) {
      ProvenanceTable table = ProvenanceSchema.functionInvocations();
      sink.ensureTable(table);
      sink.load(table, List.of(new ProvenanceRow(table.name(), List.of(T, "new-1", 2L, 0L, 1, "f", "g", "inv-new",
          "7", "alice", 12L, "billing", "nurse", "ran")), new ProvenanceRow(table.name(), List.of(T, "new-2r1@9", 2L,
          1L, 1, "f", "g", "inv-new", "7", "alice", 3L, "billing", "nurse", "recorded"))));
    }
    assertEquals(List.of("new-1=ran", "new-2r1@9=recorded", "old-1=null"),
        strings(url, props, "SELECT exec_id, mode FROM FunctionInvocations ORDER BY exec_id"));
  }

  @Test
  void invocationsLoadIdempotentlyOnDuckDb() throws SQLException {
    loadsInvocations(duckdb(), new Properties());
  }

  @Test
  void invocationsLoadIdempotentlyOnPostgres() throws SQLException {
    try (PostgresTestSchema schema = new PostgresTestSchema()) {
      loadsInvocations(schema.url(), PostgresTestSchema.props());
    }
  }

  private void loadsInvocations(String url, Properties props) throws SQLException {
    ProvenanceTable table = ProvenanceSchema.invocations();
    ProvenanceRow done = new ProvenanceRow(table.name(), Arrays.asList("inv-1", "shop", 3, "DONE", null, T,
        T.plusMillis(5), "frontend-a", "alice", 1, null));
    ProvenanceRow failed = new ProvenanceRow(table.name(), Arrays.asList("bob/inv-2", "shop", 3, "FAILED",
        "function-failed in function 'pay' (IllegalStateException): no money", T, T.plusMillis(7), "frontend-b", "bob",
        2, null));
    try (ProvenanceSink sink = ProvenanceSink.open(url, props)) {
      sink.ensureTable(table);
      sink.append(table, List.of(done));
      sink.load(table, List.of(done, failed));
      sink.load(table, List.of(failed));
    }
    assertEquals(List.of(
        "bob/inv-2|shop|3|FAILED|function-failed in function 'pay' (IllegalStateException): no money|frontend-b|bob|2|null",
        "inv-1|shop|3|DONE|null|frontend-a|alice|1|null"),
        strings(url, props, "SELECT invocation_id, graph, graph_version, status, error, frontend, caller, attempts, "
            + "traceparent FROM Invocations ORDER BY invocation_id"));
    List<Long> took = new ArrayList<>();
    try (Connection c = DriverManager.getConnection(url, props); Statement s = c.createStatement();
         ResultSet rs = s.executeQuery("SELECT started_at, finished_at FROM Invocations ORDER BY invocation_id DESC")) {
      while (rs.next()) {
        took.add(rs.getTimestamp(2).getTime() - rs.getTimestamp(1).getTime());
      }
    }
    assertEquals(List.of(5L, 7L), took);
  }

  /** The DDL for Vertica, which cannot run here: the table and the upgrade of an older FunctionInvocations. */
  @Test
  void verticaDdl() {
    assertEquals("CREATE TABLE IF NOT EXISTS \"Invocations\" (\"invocation_id\" VARCHAR(65000), \"graph\" "
        + "VARCHAR(65000), \"graph_version\" INTEGER, \"status\" VARCHAR(65000), \"error\" VARCHAR(65000), "
        + "\"started_at\" TIMESTAMP, \"finished_at\" TIMESTAMP, \"frontend\" VARCHAR(65000), \"caller\" "
        + "VARCHAR(65000), \"attempts\" INTEGER, \"traceparent\" VARCHAR(65000), PRIMARY KEY (\"invocation_id\", "
        + "\"finished_at\"))", SinkDialect.VERTICA.createTableSql(ProvenanceSchema.invocations()));
    ProvenanceTable functions = ProvenanceSchema.functionInvocations();
    assertEquals("ALTER TABLE \"FunctionInvocations\" ADD COLUMN \"mode\" VARCHAR(65000)",
        SinkDialect.VERTICA.addColumnSql(functions, functions.columns().get(functions.indexOf("mode"))));
  }

  private static void execute(String url, Properties props, String... statements) throws SQLException {
    try (Connection c = DriverManager.getConnection(url, props); Statement s = c.createStatement()) {
      for (String sql : statements) {
        s.execute(sql);
      }
    }
  }

  /** Each row's columns joined by '|' (the first two by '=' when there are two). */
  private static List<String> strings(String url, Properties props, String sql) throws SQLException {
    List<String> rows = new ArrayList<>();
    try (Connection c = DriverManager.getConnection(url, props); Statement s = c.createStatement();
         ResultSet rs = s.executeQuery(sql)) {
      int n = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        StringBuilder row = new StringBuilder();
        for (int i = 1; i <= n; i++) {
          if (i > 1) {
            row.append(n == 2 ? "=" : "|");
          }
          row.append(rs.getString(i));
        }
        rows.add(row.toString());
      }
    }
    assertTrue(rows.size() < 1000, sql);
    return rows;
  }
}
