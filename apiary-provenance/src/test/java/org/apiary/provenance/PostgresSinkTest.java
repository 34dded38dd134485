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
