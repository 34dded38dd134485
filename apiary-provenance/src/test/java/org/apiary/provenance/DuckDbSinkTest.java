package org.apiary.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DuckDbSinkTest {
  @TempDir
  Path dir;

  private String url() {
    return "jdbc:duckdb:" + dir.resolve("provenance.db");
  }

  @Test
  void loadsEveryTypeIdempotently() throws SQLException {
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      assertEquals(SinkDialect.DUCKDB, sink.dialect());
      SinkChecks.checkIdempotentLoads(sink, "typed");
    }
  }

  @Test
  void theEmbeddedDatabaseUsesAtMostItsMemoryLimitUnlessTheUrlSetsAnother() throws SQLException {
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      assertEquals("488.2 MiB", memoryLimit(sink), "512MB by default, not DuckDB's 80% of the machine's memory");
    }
    String other = "jdbc:duckdb:" + dir.resolve("other.db") + ";memory_limit=100MB";
    try (ProvenanceSink sink = ProvenanceSink.open(other, new Properties())) {
      assertEquals("95.3 MiB", memoryLimit(sink));
    }
  }

  @Test
  void theEmbeddedDatabaseCheckpointsEvery128MbOfLogUnlessTheUrlSaysOtherwise() throws SQLException {
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      assertEquals("122.0 MiB", setting(sink.connection(), "checkpoint_threshold"),
          "128MB by default, not DuckDB's 16MB, whose frequent checkpoints cost a third more per loaded row");
    }
    String other = "jdbc:duckdb:" + dir.resolve("other.db") + ";checkpoint_threshold=32MB";
    try (ProvenanceSink sink = ProvenanceSink.open(other, new Properties())) {
      assertEquals("30.5 MiB", setting(sink.connection(), "checkpoint_threshold"));
    }
  }

  /**
   * Two loaders of one DuckDB file creating the same tables at the same moment both succeed (issue 44: the demo
   * printed DuckDB's "Catalog write-write conflict" when its two loaders created a provenance table at once).
   */
  @Test
  void twoSinksOfOneFileCreateTheSameTablesAtOnce() throws Exception {
    int rounds = 15;
    java.util.concurrent.CyclicBarrier together = new java.util.concurrent.CyclicBarrier(2);
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
    try (ProvenanceSink a = ProvenanceSink.open(url(), new Properties());
         ProvenanceSink b = ProvenanceSink.open(url(), new Properties())) {
      List<java.util.concurrent.Future<?>> done = new ArrayList<>();
      for (ProvenanceSink sink : List.of(a, b)) {
        done.add(pool.submit(() -> {
          for (int i = 0; i < rounds; i++) {
            together.await(10, java.util.concurrent.TimeUnit.SECONDS);
            sink.ensureTable(new ProvenanceTable("T" + i, List.of(new ProvenanceColumn("id", ColumnType.BIGINT),
                new ProvenanceColumn("v", ColumnType.VARCHAR)), List.of("id"), List.of()));
          }
          return null;
        }));
      }
      for (java.util.concurrent.Future<?> f : done) {
        f.get(60, java.util.concurrent.TimeUnit.SECONDS); // throws the first failure
      }
    } finally {
      pool.shutdownNow();
    }
  }

  private static String setting(java.sql.Connection connection, String name) throws SQLException {
    try (java.sql.Statement s = connection.createStatement();
         java.sql.ResultSet r = s.executeQuery("SELECT current_setting('" + name + "')")) {
      r.next();
      return r.getString(1);
    }
  }

  @Test
  void anotherConnectionToTheFileInThisProcessIsNotRefusedForItsConfiguration() throws SQLException {
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties());
         java.sql.Connection reader = java.sql.DriverManager.getConnection(url())) {
      // DuckDB refuses a second connection whose properties differ from those the file was opened with; the
      // sink's settings are applied with SET, so a plain connection (an application's, a test's) still opens.
      assertEquals("488.2 MiB", memoryLimitOf(reader));
    }
  }

  private static String memoryLimit(ProvenanceSink sink) throws SQLException {
    return memoryLimitOf(sink.connection());
  }

  private static String memoryLimitOf(java.sql.Connection connection) throws SQLException {
    return setting(connection, "memory_limit");
  }

  @Test
  void rowsSurviveReopeningTheFile() throws SQLException {
    ProvenanceTable table = SinkChecks.typedTable("kept");
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      sink.ensureTable(table);
      sink.load(table, SinkChecks.typedRows(table, 0, 30, "a"));
    }
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      sink.ensureTable(table);
      sink.load(table, SinkChecks.typedRows(table, 20, 40, "b"));
      List<ProvenanceRow> expected = new ArrayList<>(SinkChecks.typedRows(table, 0, 30, "a"));
      expected.addAll(SinkChecks.typedRows(table, 30, 40, "b"));
      SinkChecks.assertStored(sink, table, expected);
    }
  }

  /**
   * DuckDB tables carry no key index (maintaining one cost about a third of the CPU of each loaded row, measured):
   * {@code append} takes rows that were never loaded without looking for their keys, {@code load} still skips every
   * row whose key is present and says how many it added.
   */
  @Test
  void tablesHaveNoKeyIndexYetLoadsStillSkipPresentKeys() throws SQLException {
    ProvenanceTable table = SinkChecks.typedTable("unindexed");
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      sink.ensureTable(table);
      assertEquals(0, SinkChecks.queryLong(sink.connection(), "SELECT COUNT(*) FROM duckdb_constraints() WHERE "
          + "lower(table_name) = lower('" + table.name() + "') AND constraint_type = 'PRIMARY KEY'"));
      sink.append(table, SinkChecks.typedRows(table, 0, 100, "first"));
      assertEquals(0, sink.load(table, SinkChecks.typedRows(table, 0, 100, "again")));
      assertEquals(50, sink.load(table, SinkChecks.typedRows(table, 50, 150, "second")));
      sink.append(table, SinkChecks.typedRows(table, 150, 160, "third"));
      List<ProvenanceRow> expected = new ArrayList<>(SinkChecks.typedRows(table, 0, 100, "first"));
      expected.addAll(SinkChecks.typedRows(table, 100, 150, "second"));
      expected.addAll(SinkChecks.typedRows(table, 150, 160, "third"));
      SinkChecks.assertStored(sink, table, expected);
      assertEquals(160, SinkChecks.countDistinctKeys(sink, table));
    }
  }

  /**
   * A table that an earlier version created with a primary key keeps loading: appends that meet a present key (which
   * only a caller that misjudged its rows as new can cause) fall back to skipping present keys, and loads skip them.
   */
  @Test
  void aTableCreatedWithAPrimaryKeyKeepsLoadingThroughBothPaths() throws SQLException {
    ProvenanceTable table = SinkChecks.typedTable("keyed");
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      try (java.sql.Statement s = sink.connection().createStatement()) {
        s.execute("CREATE TABLE " + table.name() + " (" + SinkDialect.DUCKDB.columnDefinitions(table)
            + ", PRIMARY KEY (" + String.join(", ", table.key()) + "))");
      }
      sink.connection().commit();
      sink.ensureTable(table);
      SinkChecks.assertStored(sink, table, appendAndLoadAlternately(sink, table, 60, true));
    }
  }

  /**
   * {@code loads} batches of five new rows each, every twentieth also carrying another version of the previous
   * batch's rows; new batches appended, the others loaded (if {@code appendRepeats}, every odd batch appended,
   * repeats and all, as a misjudging caller would). Returns the rows the table must hold.
   */
  private static List<ProvenanceRow> appendAndLoadAlternately(ProvenanceSink sink, ProvenanceTable table, int loads,
                                                             boolean appendRepeats) throws SQLException {
    List<ProvenanceRow> expected = new ArrayList<>();
    for (int load = 0; load < loads; load++) {
      long from = load * 5L;
      expected.addAll(SinkChecks.typedRows(table, from, from + 5, "first"));
      List<ProvenanceRow> batch = new ArrayList<>();
      boolean repeats = load % 20 == 19;
      if (repeats) { // besides its own rows, another version of the previous load's
        batch.addAll(SinkChecks.typedRows(table, from - 5, from, "again"));
      }
      batch.addAll(SinkChecks.typedRows(table, from, from + 5, "first"));
      if (appendRepeats ? load % 2 == 1 : !repeats) { // odd loads, among them every one that repeats rows
        sink.append(table, batch);
      } else {
        sink.load(table, batch);
      }
    }
    return expected;
  }

  /**
   * First attempts appended, batches that repeat rows loaded, in turn: every row is stored once, with its first
   * version, on a table without a key index.
   */
  @Test
  void appendsAndLoadsAlternateWithoutLosingOrRepeatingRows() throws SQLException {
    ProvenanceTable table = SinkChecks.typedTable("alternating");
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      sink.ensureTable(table);
      SinkChecks.assertStored(sink, table, appendAndLoadAlternately(sink, table, 300, false));
    }
  }

  /**
   * A sink created before FunctionInvocations had its purpose column (issue 14) keeps loading: the table gains the
   * column (NULL in its old rows), and rows of the old layout (from spill files written before) and of the new one
   * both load, whichever went first through the staging table.
   */
  @Test
  void aTableFromBeforeTheNewColumnGainsItAndKeepsLoading() throws SQLException {
    ProvenanceTable current = ProvenanceSchema.functionInvocations();
    ProvenanceTable old = new ProvenanceTable(current.name(), current.columns().subList(0, current.indexOf("purpose")),
        current.key(), List.of());
    java.time.Instant t = java.time.Instant.parse("2024-01-01T00:00:00Z");
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      sink.ensureTable(old);
      sink.load(old, List.of(new ProvenanceRow(old.name(), List.of(t, "1", 1L, 0L, 1, "f", "g", "e-1", "p", "c", 5L))));
    }
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      sink.ensureTable(current);
      sink.load(current, List.of(new ProvenanceRow(current.name(),
          List.of(t, "2", 2L, 0L, 1, "f", "g", "e-2", "p", "c", 5L, "billing", "nurse", "ran"))));
      sink.load(old, List.of(new ProvenanceRow(old.name(), List.of(t, "3", 3L, 0L, 1, "f", "g", "e-3", "p", "c", 5L))));
      sink.load(current, List.of(new ProvenanceRow(current.name(),
          List.of(t, "2", 2L, 0L, 1, "f", "g", "e-2", "p", "c", 5L, "billing", "nurse", "ran"))));
      assertEquals(3, SinkChecks.count(sink, current));
      try (java.sql.Statement s = sink.connection().createStatement();
           java.sql.ResultSet rs = s.executeQuery("SELECT exec_id, purpose FROM FunctionInvocations ORDER BY exec_id")) {
        List<String> rows = new ArrayList<>();
        while (rs.next()) {
          rows.add(rs.getString(1) + "=" + rs.getString(2));
        }
        assertEquals(List.of("1=null", "2=billing", "3=null"), rows);
      }
      sink.connection().rollback();
    }
  }

  @Test
  void loadsTheStandardTables() throws SQLException {
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      ProvenanceTable invocations = ProvenanceSchema.functionInvocations();
      sink.ensureTable(invocations);
      ProvenanceRow row = new ProvenanceRow(invocations.name(), List.of(java.time.Instant.parse("2024-01-01T00:00:00Z"),
          "42", 42L, 0L, 1, "inc", "graph", "exec-1", "p1", "caller", 17L, "treatment", "nurse", "ran"));
      sink.load(invocations, List.of(row));
      sink.load(invocations, List.of(row));
      assertEquals(1, SinkChecks.count(sink, invocations));
    }
  }

  @Test
  void failureNamesTableAndUrlAndLeavesTheSinkUsable() throws SQLException {
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      ProvenanceTable missing = SinkChecks.typedTable("never");
      SQLException e = assertThrows(SQLException.class,
          () -> sink.load(missing, SinkChecks.typedRows(missing, 0, 3, "x")));
      assertTrue(e.getMessage().contains("neverEvents"), e.getMessage());
      assertTrue(e.getMessage().contains(url()), e.getMessage());

      ProvenanceTable table = SinkChecks.typedTable("after");
      sink.ensureTable(table);
      sink.load(table, SinkChecks.typedRows(table, 0, 3, "x"));
      assertEquals(3, SinkChecks.count(sink, table));
    }
  }

  @Test
  void rejectsRowsThatDoNotFitTheTable() throws SQLException {
    try (ProvenanceSink sink = ProvenanceSink.open(url(), new Properties())) {
      ProvenanceTable table = SinkChecks.typedTable("strict");
      sink.ensureTable(table);
      List<Object> values = new ArrayList<>(SinkChecks.typedRow(table, 1, "x").values());
      values.set(7, "not a number");
      IllegalArgumentException wrongType = assertThrows(IllegalArgumentException.class,
          () -> sink.load(table, List.of(new ProvenanceRow(table.name(), values))));
      assertTrue(wrongType.getMessage().contains("column id"), wrongType.getMessage());

      values.set(7, 1L);
      values.set(6, null);
      assertThrows(IllegalArgumentException.class,
          () -> sink.load(table, List.of(new ProvenanceRow(table.name(), values))), "NULL key");
      assertThrows(IllegalArgumentException.class,
          () -> sink.load(table, List.of(new ProvenanceRow(table.name(), values.subList(0, 5)))), "arity");
      assertEquals(0, SinkChecks.count(sink, table));
    }
  }

  @Test
  void rejectsOtherDatabasesAndHidesPasswords() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ProvenanceSink.open("jdbc:mysql://db/x?user=u&password=secret", new Properties()));
    assertFalse(e.getMessage().contains("secret"), e.getMessage());
    assertEquals("jdbc:postgresql://h/db?user=u&password=***&ssl=true",
        ProvenanceSink.redact("jdbc:postgresql://h/db?user=u&password=s3cr3t&ssl=true"));
    assertEquals(SinkDialect.VERTICA, SinkDialect.forUrl("jdbc:vertica://h:5433/VMart"));
    assertEquals(SinkDialect.POSTGRESQL, SinkDialect.forUrl("jdbc:postgresql://h/db"));
  }

  @Test
  void dialectsWriteTheDocumentedStatements() {
    ProvenanceTable table = ProvenanceSchema.functionExecTimes();
    assertEquals("INSERT INTO \"functionexectimes\" (\"event_time\", \"exec_id\", \"tx_id\", \"latency_us\") "
        + "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING", SinkDialect.POSTGRESQL.describeLoad(table));
    String stage = SinkDialect.stagingName(table);
    assertEquals("INSERT INTO \"FunctionExecTimes\" (\"event_time\", \"exec_id\", \"tx_id\", \"latency_us\") "
        + "SELECT \"event_time\", \"exec_id\", \"tx_id\", \"latency_us\" FROM \"" + stage + "\" s WHERE NOT EXISTS "
        + "(SELECT 1 FROM \"FunctionExecTimes\" x WHERE x.\"exec_id\" = s.\"exec_id\") ORDER BY s.rowid",
        SinkDialect.DUCKDB.describeLoad(table));
    assertEquals("CREATE TABLE IF NOT EXISTS \"FunctionExecTimes\" (\"event_time\" TIMESTAMP, \"exec_id\" VARCHAR, "
        + "\"tx_id\" BIGINT, \"latency_us\" BIGINT)", SinkDialect.DUCKDB.createTableSql(table));
    assertEquals("INSERT INTO \"" + stage + "\" (\"event_time\", \"exec_id\", \"tx_id\", "
        + "\"latency_us\") VALUES (?, ?, ?, ?); MERGE INTO \"FunctionExecTimes\" t USING "
        + "\"" + stage + "\" s ON t.\"exec_id\" = s.\"exec_id\" WHEN NOT MATCHED THEN INSERT "
        + "(\"event_time\", \"exec_id\", \"tx_id\", \"latency_us\") VALUES (CAST(s.\"event_time\" AS TIMESTAMP), "
        + "s.\"exec_id\", s.\"tx_id\", s.\"latency_us\")",
        SinkDialect.VERTICA.describeLoad(table));
    assertEquals("CREATE TABLE IF NOT EXISTS \"functionexectimes\" (\"event_time\" TIMESTAMP, \"exec_id\" TEXT, "
        + "\"tx_id\" BIGINT, \"latency_us\" BIGINT, PRIMARY KEY (\"exec_id\"))",
        SinkDialect.POSTGRESQL.createTableSql(table));
  }
}
