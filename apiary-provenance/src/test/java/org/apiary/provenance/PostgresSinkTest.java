package org.apiary.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Against the machine's PostgreSQL server, in a schema of the test's own. */
class PostgresSinkTest {
  private PostgresTestSchema schema;

  @BeforeEach
  void createSchema() throws SQLException {
    schema = new PostgresTestSchema();
  }

  @AfterEach
  void dropSchema() throws SQLException {
    schema.close();
  }

  @Test
  void loadsEveryTypeIdempotently() throws SQLException {
    try (ProvenanceSink sink = ProvenanceSink.open(schema.url(), PostgresTestSchema.props())) {
      assertEquals(SinkDialect.POSTGRESQL, sink.dialect());
      SinkChecks.checkIdempotentLoads(sink, "typed");
      // the table landed in the test's schema, under PostgreSQL's folded name
      assertEquals(1, SinkChecks.queryLong(sink.connection(), "SELECT COUNT(*) FROM information_schema.tables "
          + "WHERE table_schema = '" + schema.schema() + "' AND table_name = 'typedevents'"));
    }
  }

  @Test
  void aSecondConnectionSeesTheSameRowsAndSkipsThem() throws SQLException {
    ProvenanceTable table = SinkChecks.typedTable("shared");
    try (ProvenanceSink first = ProvenanceSink.open(schema.url(), PostgresTestSchema.props());
         ProvenanceSink second = ProvenanceSink.open(schema.url(), PostgresTestSchema.props())) {
      first.ensureTable(table);
      second.ensureTable(table);
      first.load(table, SinkChecks.typedRows(table, 0, 40, "first"));
      second.load(table, SinkChecks.typedRows(table, 30, 60, "second"));
      List<ProvenanceRow> expected = new ArrayList<>(SinkChecks.typedRows(table, 0, 40, "first"));
      expected.addAll(SinkChecks.typedRows(table, 40, 60, "second"));
      SinkChecks.assertStored(first, table, expected);
    }
  }

  /**
   * Every node of a cluster creates the provenance tables it loads into when it starts, at the same moment as the
   * others: PostgreSQL's {@code CREATE TABLE IF NOT EXISTS} is not safe against a concurrent one (it fails with a
   * unique violation on {@code pg_type}), which a 2-node cluster hit in {@code ClusterCommandLineTest}. Four
   * connections create the same tables at once, 25 times: every call succeeds.
   */
  @Test
  void concurrentCreationOfTheSameTablesSucceedsEverywhere() throws Exception {
    int sinks = 4;
    List<ProvenanceSink> open = new ArrayList<>();
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(sinks);
    try {
      for (int i = 0; i < sinks; i++) {
        open.add(ProvenanceSink.open(schema.url(), PostgresTestSchema.props()));
      }
      for (int round = 0; round < 25; round++) {
        ProvenanceTable table = SinkChecks.typedTable("race" + round);
        java.util.concurrent.CyclicBarrier together = new java.util.concurrent.CyclicBarrier(sinks);
        List<java.util.concurrent.Future<?>> calls = new ArrayList<>();
        for (ProvenanceSink sink : open) {
          calls.add(pool.submit(() -> {
            together.await(30, java.util.concurrent.TimeUnit.SECONDS);
            sink.ensureTable(table);
            return null;
          }));
        }
        for (java.util.concurrent.Future<?> call : calls) {
          call.get(60, java.util.concurrent.TimeUnit.SECONDS); // throws what ensureTable threw
        }
        open.get(round % sinks).load(table, SinkChecks.typedRows(table, 0, 3, "x"));
        assertEquals(3, SinkChecks.count(open.get((round + 1) % sinks), table));
      }
    } finally {
      pool.shutdownNow();
      for (ProvenanceSink sink : open) {
        sink.close();
      }
    }
  }

  @Test
  void failureNamesTableAndUrlAndLeavesTheSinkUsable() throws SQLException {
    try (ProvenanceSink sink = ProvenanceSink.open(schema.url(), PostgresTestSchema.props())) {
      ProvenanceTable missing = SinkChecks.typedTable("absent");
      SQLException e = assertThrows(SQLException.class,
          () -> sink.load(missing, SinkChecks.typedRows(missing, 0, 3, "x")));
      assertTrue(e.getMessage().contains("absentEvents"), e.getMessage());
      assertTrue(e.getMessage().contains(schema.url()), e.getMessage());
      assertTrue(e.getMessage().contains("does not exist"), e.getMessage());

      ProvenanceTable table = SinkChecks.typedTable("usable");
      sink.ensureTable(table);
      sink.load(table, SinkChecks.typedRows(table, 0, 3, "x"));
      assertEquals(3, SinkChecks.count(sink, table));
    }
  }

  @Test
  void connectionFailureNamesTheUrl() {
    String url = "jdbc:postgresql://127.0.0.1:1/test?password=hidden";
    SQLException e = assertThrows(SQLException.class, () -> ProvenanceSink.open(url, PostgresTestSchema.props()));
    assertTrue(e.getMessage().contains("jdbc:postgresql://127.0.0.1:1/test?password=***"), e.getMessage());
  }
}
