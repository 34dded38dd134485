package org.apiary.provenance;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

/** The load and idempotency assertions every database must pass, and the rows they use. */
final class SinkChecks {
  /** Application columns of every type; with the event columns this is an events table keyed by its event. */
  static final List<ProvenanceColumn> TYPED_COLUMNS = List.of(
      new ProvenanceColumn("id", ColumnType.BIGINT),
      new ProvenanceColumn("c_int", ColumnType.INTEGER),
      new ProvenanceColumn("c_small", ColumnType.SMALLINT),
      new ProvenanceColumn("c_tiny", ColumnType.TINYINT),
      new ProvenanceColumn("c_double", ColumnType.DOUBLE),
      new ProvenanceColumn("c_decimal", ColumnType.DECIMAL),
      new ProvenanceColumn("c_text", ColumnType.VARCHAR),
      new ProvenanceColumn("c_bytes", ColumnType.VARBINARY),
      new ProvenanceColumn("c_time", ColumnType.TIMESTAMP));
  private static final String[] EVENT_TYPES = {ProvenanceSchema.INSERT, ProvenanceSchema.UPDATE,
      ProvenanceSchema.DELETE, ProvenanceSchema.READ};
  private static final Instant BASE_TIME = Instant.parse("2024-03-01T12:00:00.123456Z");

  private SinkChecks() {}

  static ProvenanceTable typedTable(String applicationTable) {
    return ProvenanceSchema.eventsTable(applicationTable, TYPED_COLUMNS, List.of("id"));
  }

  /**
   * Row {@code seq} of a typed events table; {@code variant} changes only non-key values, so a row loaded again with
   * another variant shows whether the first one was kept. Every seventh row has NULL in every nullable column.
   */
  static ProvenanceRow typedRow(ProvenanceTable table, long seq, String variant) {
    boolean nulls = seq % 7 == 0;
    List<Object> values = new ArrayList<>();
    values.add(nulls ? null : BASE_TIME.plusSeconds(seq));
    values.add(Long.toString(1000 + seq / 4));
    values.add(1000 + seq / 4);
    values.add(0L);
    values.add((int) (seq % 2));
    values.add(EVENT_TYPES[(int) (seq % 4)]);
    values.add(seq);
    values.add(seq * 10);
    values.add(nulls ? null : (int) (seq * 7 - 100));
    values.add(nulls ? null : (short) (seq % 30_000 - 15_000));
    values.add(nulls ? null : (byte) (seq % 128 - 64));
    values.add(nulls ? null : seq / 3.0);
    values.add(nulls ? null : new BigDecimal("-12345678901234.123456789012").add(BigDecimal.valueOf(seq)));
    values.add(nulls ? null : variant + "-" + seq + " ünïcødé ✓ 'quoted'");
    values.add(nulls ? null : new byte[] {(byte) seq, 0, (byte) 0xFF, (byte) (seq >> 8), (byte) variant.length()});
    values.add(nulls ? null : seq % 5 == 0 ? Instant.parse("1969-07-20T20:17:40Z")
        : Instant.parse("1999-12-31T23:59:59.999999Z").plusMillis(seq));
    return new ProvenanceRow(table.name(), values);
  }

  static List<ProvenanceRow> typedRows(ProvenanceTable table, long fromSeq, long toSeqExclusive, String variant) {
    return LongStream.range(fromSeq, toSeqExclusive).mapToObj(seq -> typedRow(table, seq, variant)).toList();
  }

  /**
   * Ensures a typed table twice, loads a batch, loads it again, loads an overlapping batch whose shared rows differ,
   * and loads a batch that repeats keys within itself; checks exact counts and every stored value.
   */
  static void checkIdempotentLoads(ProvenanceSink sink, String applicationTable) throws SQLException {
    ProvenanceTable table = typedTable(applicationTable);
    sink.ensureTable(table);
    sink.ensureTable(table);
    assertEquals(0, count(sink, table));

    sink.load(table, typedRows(table, 0, 100, "first"));
    assertEquals(100, count(sink, table));
    sink.load(table, typedRows(table, 0, 100, "first"));
    assertEquals(100, count(sink, table), "re-delivering a batch must not add rows");

    sink.load(table, typedRows(table, 50, 150, "second"));
    assertEquals(150, count(sink, table), "an overlapping batch adds only its new rows");

    List<ProvenanceRow> repeated = new ArrayList<>(typedRows(table, 150, 160, "third"));
    repeated.addAll(typedRows(table, 150, 160, "fourth"));
    sink.load(table, repeated);
    assertEquals(160, count(sink, table), "keys repeated within a batch are loaded once");
    assertEquals(160, countDistinctKeys(sink, table));

    List<ProvenanceRow> expected = new ArrayList<>(typedRows(table, 0, 100, "first"));
    expected.addAll(typedRows(table, 100, 150, "second"));
    expected.addAll(typedRows(table, 150, 160, "third"));
    assertStored(sink, table, expected);
  }

  static long count(ProvenanceSink sink, ProvenanceTable table) throws SQLException {
    return queryLong(sink.connection(), "SELECT COUNT(*) FROM " + table.name());
  }

  static long countDistinctKeys(ProvenanceSink sink, ProvenanceTable table) throws SQLException {
    return countDistinctKeys(sink.connection(), table);
  }

  static long countDistinctKeys(Connection connection, ProvenanceTable table) throws SQLException {
    return queryLong(connection, "SELECT COUNT(*) FROM (SELECT DISTINCT " + String.join(", ", table.key())
        + " FROM " + table.name() + ") k");
  }

  static long queryLong(Connection connection, String sql) throws SQLException {
    try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(sql)) {
      assertTrue(rs.next(), sql);
      long value = rs.getLong(1);
      commitIfManual(connection);
      return value;
    }
  }

  /** Asserts the table holds exactly {@code expected}, comparing every value (rows matched by event_seq). */
  static void assertStored(ProvenanceSink sink, ProvenanceTable table, List<ProvenanceRow> expected)
      throws SQLException {
    String columns = table.columns().stream().map(ProvenanceColumn::name).collect(Collectors.joining(", "));
    List<ProvenanceRow> sorted = expected.stream()
        .sorted((a, b) -> Long.compare((Long) a.values().get(6), (Long) b.values().get(6))).toList();
    try (Statement statement = sink.connection().createStatement();
         ResultSet rs = statement.executeQuery("SELECT " + columns + " FROM " + table.name()
             + " ORDER BY event_seq")) {
      for (ProvenanceRow row : sorted) {
        assertTrue(rs.next(), "missing row " + row.values().get(6));
        for (int i = 0; i < table.columns().size(); i++) {
          ProvenanceColumn column = table.columns().get(i);
          assertValue(sink, rs, i + 1, column, row.values().get(i), "row " + row.values().get(6));
        }
      }
      assertFalse(rs.next(), "more rows stored than expected");
    } finally {
      commitIfManual(sink.connection());
    }
  }

  private static void assertValue(ProvenanceSink sink, ResultSet rs, int index, ProvenanceColumn column,
                                  Object expected, String where) throws SQLException {
    String what = where + ", column " + column.name();
    switch (column.type()) {
      case BIGINT, INTEGER, SMALLINT, TINYINT -> {
        long actual = rs.getLong(index);
        if (expected == null) {
          assertTrue(rs.wasNull(), what);
        } else {
          assertFalse(rs.wasNull(), what);
          assertEquals(((Number) expected).longValue(), actual, what);
        }
      }
      case DOUBLE -> {
        double actual = rs.getDouble(index);
        if (expected == null) {
          assertTrue(rs.wasNull(), what);
        } else {
          assertEquals((Double) expected, actual, 0.0, what);
        }
      }
      case DECIMAL -> {
        BigDecimal actual = rs.getBigDecimal(index);
        if (expected == null) {
          assertNull(actual, what);
        } else {
          assertEquals(0, ((BigDecimal) expected).compareTo(actual), what + ": expected " + expected + ", was "
              + actual);
        }
      }
      case VARCHAR -> assertEquals(expected, rs.getString(index), what);
      case VARBINARY -> {
        byte[] actual = rs.getBytes(index);
        if (expected == null) {
          assertNull(actual, what);
        } else {
          assertArrayEquals((byte[]) expected, actual, what + ": was " + Arrays.toString(actual));
        }
      }
      case TIMESTAMP -> assertEquals(expected, sink.readTimestamp(rs, index), what);
    }
  }

  private static void commitIfManual(Connection connection) throws SQLException {
    if (!connection.getAutoCommit()) {
      connection.commit();
    }
  }
}
