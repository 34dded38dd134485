package org.apiary.provenance;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoField;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What differs between the analytical databases a {@link ProvenanceSink} writes to: type names, identifier quoting,
 * how a TIMESTAMP travels over JDBC, and the statements of an idempotent load. Everything else is one JDBC code path.
 *
 * <p>TIMESTAMP columns are SQL {@code TIMESTAMP} (without time zone) holding UTC, at microsecond precision.
 */
enum SinkDialect {
  /**
   * DuckDB enforces primary keys: {@code INSERT ... ON CONFLICT DO NOTHING}. Its JDBC driver executes a batch one
   * row at a time (measured here: under 8,000 rows/s), so rows go through DuckDB's appender into a staging table
   * and then in one {@code INSERT ... SELECT ... ON CONFLICT DO NOTHING}; tables with binary columns, which the
   * appender cannot write, use multi-row {@code VALUES} statements.
   */
  DUCKDB("jdbc:duckdb:") {
    @Override
    void configure(Connection connection) throws SQLException {
      // Loading is sequential; DuckDB's default of one worker per core would compete with the transactional
      // database for the same cores when both run on one machine (measured: three DuckDB threads took most of a
      // core on a 2-core machine under provenance load).
      try (Statement statement = connection.createStatement()) {
        statement.execute("SET threads TO 1");
      }
    }

    @Override
    void prepareLoad(Connection connection, ProvenanceTable table, Set<String> staged) throws SQLException {
      if (!staged.contains(table.name()) && appendable(table)) {
        try (Statement statement = connection.createStatement()) {
          statement.execute("CREATE TABLE IF NOT EXISTS " + quote(stagingName(table)) + " (" + columnDefinitions(table)
              + ")");
        }
        connection.commit();
        staged.add(table.name());
      }
    }

    @Override
    void load(Connection connection, ProvenanceTable table, List<ProvenanceRow> rows) throws SQLException {
      if (!appendable(table)) {
        loadWithValues(connection, table, rows);
        return;
      }
      String stage = quote(stagingName(table));
      try (Statement statement = connection.createStatement()) {
        statement.execute("DELETE FROM " + stage);
        try (org.duckdb.DuckDBAppender appender = connection.unwrap(org.duckdb.DuckDBConnection.class)
            .createAppender(org.duckdb.DuckDBConnection.DEFAULT_SCHEMA, stagingName(table))) {
          for (ProvenanceRow row : rows) {
            appender.beginRow();
            for (int i = 0; i < row.values().size(); i++) {
              append(appender, table.columns().get(i).type(), row.values().get(i));
            }
            appender.endRow();
          }
        }
        statement.executeUpdate("INSERT INTO " + quote(table.name()) + " SELECT * FROM " + stage
            + " ON CONFLICT DO NOTHING");
        statement.execute("DELETE FROM " + stage);
      }
    }

    private static boolean appendable(ProvenanceTable table) {
      return table.columns().stream().noneMatch(c -> c.type() == ColumnType.VARBINARY);
    }

    private static void append(org.duckdb.DuckDBAppender a, ColumnType type, Object value) throws SQLException {
      if (value == null) {
        a.append((String) null); // the appender's way to append NULL to a column of any type
        return;
      }
      switch (type) {
        case BIGINT -> a.append(((Number) value).longValue());
        case INTEGER -> a.append(((Number) value).intValue());
        case SMALLINT -> a.append(((Number) value).shortValue());
        case TINYINT -> a.append(((Number) value).byteValue());
        case DOUBLE -> a.append(((Number) value).doubleValue());
        case DECIMAL -> a.appendBigDecimal((BigDecimal) value);
        case VARCHAR -> a.append((String) value);
        case TIMESTAMP -> a.appendLocalDateTime(LocalDateTime.ofInstant(
            ((Instant) value).truncatedTo(ChronoUnit.MICROS), ZoneOffset.UTC));
        case VARBINARY -> throw new AssertionError("binary tables are loaded with VALUES statements");
      }
    }

    private void loadWithValues(Connection connection, ProvenanceTable table, List<ProvenanceRow> rows)
        throws SQLException {
      int width = table.columns().size();
      int perStatement = Math.max(1, Math.min(ROWS_PER_STATEMENT, MAX_PARAMETERS / width));
      for (int from = 0; from < rows.size(); from += perStatement) {
        List<ProvenanceRow> chunk = rows.subList(from, Math.min(rows.size(), from + perStatement));
        try (PreparedStatement insert = connection.prepareStatement(multiRowInsertSql(table, chunk.size()))) {
          int index = 1;
          for (ProvenanceRow row : chunk) {
            for (int i = 0; i < width; i++) {
              bind(insert, index++, table.columns().get(i).type(), row.values().get(i));
            }
          }
          insert.executeUpdate();
        }
      }
    }


    @Override
    String typeName(ColumnType type) {
      return switch (type) {
        case BIGINT -> "BIGINT";
        case INTEGER -> "INTEGER";
        case SMALLINT -> "SMALLINT";
        case TINYINT -> "TINYINT";
        case DOUBLE -> "DOUBLE";
        case DECIMAL -> DECIMAL_TYPE;
        case VARCHAR -> "VARCHAR";
        case VARBINARY -> "BLOB";
        case TIMESTAMP -> "TIMESTAMP";
      };
    }
  },

  /** PostgreSQL enforces primary keys: {@code INSERT ... ON CONFLICT DO NOTHING}. */
  POSTGRESQL("jdbc:postgresql:") {
    @Override
    String typeName(ColumnType type) {
      return switch (type) {
        case BIGINT -> "BIGINT";
        case INTEGER -> "INTEGER";
        case SMALLINT, TINYINT -> "SMALLINT"; // PostgreSQL has no one-byte integer
        case DOUBLE -> "DOUBLE PRECISION";
        case DECIMAL -> DECIMAL_TYPE;
        case VARCHAR -> "TEXT";
        case VARBINARY -> "BYTEA";
        case TIMESTAMP -> "TIMESTAMP";
      };
    }

    @Override
    String quote(String identifier) {
      // Unquoted names fold to lower case in PostgreSQL; quoting the folded name keeps them the same table.
      return '"' + identifier.toLowerCase(Locale.ROOT) + '"';
    }
  },

  /**
   * Vertica does not enforce primary keys by default: rows go into a session-local staging table, then
   * {@code MERGE ... WHEN NOT MATCHED THEN INSERT} adds the ones whose key is absent, in the same transaction.
   */
  VERTICA("jdbc:vertica:") {
    @Override
    String typeName(ColumnType type) {
      return switch (type) {
        case BIGINT -> "BIGINT";
        case INTEGER -> "INTEGER";
        case SMALLINT -> "SMALLINT";
        case TINYINT -> "TINYINT";
        case DOUBLE -> "DOUBLE PRECISION";
        case DECIMAL -> DECIMAL_TYPE;
        case VARCHAR -> "VARCHAR(65000)";
        case VARBINARY -> "VARBINARY(65000)";
        case TIMESTAMP -> "TIMESTAMP";
      };
    }

    @Override
    void prepareLoad(Connection connection, ProvenanceTable table, Set<String> staged) throws SQLException {
      if (staged.contains(table.name())) {
        return;
      }
      // DDL commits in Vertica, so the staging table is created before the load's transaction starts.
      // TIMESTAMP values are staged as text (see bindTimestamp) and cast by the MERGE.
      String columns = table.columns().stream().map(c -> quote(c.name()) + " "
          + (c.type() == ColumnType.TIMESTAMP ? "VARCHAR(32)" : typeName(c.type()))).collect(Collectors.joining(", "));
      String ddl = "CREATE LOCAL TEMPORARY TABLE IF NOT EXISTS " + quote(stagingName(table)) + " (" + columns
          + ") ON COMMIT DELETE ROWS";
      try (Statement statement = connection.createStatement()) {
        statement.execute(ddl);
      }
      connection.commit();
      staged.add(table.name());
    }

    @Override
    void load(Connection connection, ProvenanceTable table, List<ProvenanceRow> rows) throws SQLException {
      try (PreparedStatement insert = connection.prepareStatement(insertSql(table, stagingName(table)))) {
        bindBatch(insert, table, rows);
        insert.executeBatch();
      }
      try (Statement merge = connection.createStatement()) {
        merge.executeUpdate(mergeSql(table));
      }
    }

    @Override
    void bindTimestamp(PreparedStatement statement, int index, Instant value) throws SQLException {
      // Vertica's driver knows no java.time types and converts java.sql.Timestamp through the JVM's time zone; UTC
      // text into a VARCHAR staging column, cast to TIMESTAMP by the server, involves no time zone at all.
      if (value == null) {
        statement.setNull(index, Types.VARCHAR);
      } else {
        statement.setString(index, TIMESTAMP_TEXT.format(LocalDateTime.ofInstant(value, ZoneOffset.UTC)));
      }
    }

    @Override
    Instant readTimestamp(ResultSet resultSet, int column) throws SQLException {
      String text = resultSet.getString(column);
      return text == null ? null : LocalDateTime.parse(text.trim(), TIMESTAMP_TEXT).toInstant(ZoneOffset.UTC);
    }
  };

  /** Rows per multi-row insert, and the most parameters one statement binds. */
  private static final int ROWS_PER_STATEMENT = 1000;
  private static final int MAX_PARAMETERS = 30_000;

  /** VoltDB's DECIMAL is fixed at precision 38, scale 12. */
  private static final String DECIMAL_TYPE = "DECIMAL(38,12)";

  private static final DateTimeFormatter TIMESTAMP_TEXT = new DateTimeFormatterBuilder()
      .appendPattern("uuuu-MM-dd HH:mm:ss")
      .optionalStart().appendFraction(ChronoField.MICRO_OF_SECOND, 0, 6, true).optionalEnd()
      .toFormatter(Locale.ROOT);

  private final String urlPrefix;

  SinkDialect(String urlPrefix) {
    this.urlPrefix = urlPrefix;
  }

  /** The dialect of a JDBC URL. */
  static SinkDialect forUrl(String jdbcUrl) {
    for (SinkDialect dialect : values()) {
      if (jdbcUrl.regionMatches(true, 0, dialect.urlPrefix, 0, dialect.urlPrefix.length())) {
        return dialect;
      }
    }
    throw new IllegalArgumentException("unsupported provenance database URL " + ProvenanceSink.redact(jdbcUrl)
        + "; supported: jdbc:duckdb:<file>, jdbc:postgresql://..., jdbc:vertica://...");
  }

  abstract String typeName(ColumnType type);

  /** An identifier as it appears in SQL (names are checked to be plain identifiers first). */
  String quote(String identifier) {
    return '"' + identifier + '"';
  }

  String createTableSql(ProvenanceTable table) {
    return "CREATE TABLE IF NOT EXISTS " + quote(table.name()) + " (" + columnDefinitions(table) + ", PRIMARY KEY ("
        + table.key().stream().map(this::quote).collect(Collectors.joining(", ")) + "))";
  }

  /** Runs once per connection, right after it opens. */
  void configure(Connection connection) throws SQLException {
    // nothing by default
  }

  /** Runs once per table and connection before the first load: work that must happen outside the load's transaction. */
  void prepareLoad(Connection connection, ProvenanceTable table, Set<String> staged) throws SQLException {
    // nothing by default
  }

  /** Loads rows (distinct keys) inside the caller's transaction, skipping those whose key is present. */
  void load(Connection connection, ProvenanceTable table, List<ProvenanceRow> rows) throws SQLException {
    try (PreparedStatement insert = connection.prepareStatement(describeLoad(table))) {
      bindBatch(insert, table, rows);
      insert.executeBatch();
    }
  }

  /** The statement(s) {@link #load} runs. */
  String describeLoad(ProvenanceTable table) {
    if (this == VERTICA) {
      return insertSql(table, stagingName(table)) + "; " + mergeSql(table);
    }
    return insertSql(table, table.name()) + " ON CONFLICT DO NOTHING";
  }

  void bindTimestamp(PreparedStatement statement, int index, Instant value) throws SQLException {
    if (value == null) {
      statement.setNull(index, Types.TIMESTAMP);
    } else {
      statement.setObject(index, LocalDateTime.ofInstant(value, ZoneOffset.UTC));
    }
  }

  Instant readTimestamp(ResultSet resultSet, int column) throws SQLException {
    LocalDateTime value = resultSet.getObject(column, LocalDateTime.class);
    return value == null ? null : value.toInstant(ZoneOffset.UTC);
  }

  final String columnDefinitions(ProvenanceTable table) {
    return table.columns().stream().map(c -> quote(c.name()) + " " + typeName(c.type()))
        .collect(Collectors.joining(", "));
  }

  final String insertSql(ProvenanceTable table, String into) {
    return "INSERT INTO " + quote(into) + " (" + table.columns().stream().map(c -> quote(c.name()))
        .collect(Collectors.joining(", ")) + ") VALUES (" + "?, ".repeat(table.columns().size() - 1) + "?)";
  }

  final String multiRowInsertSql(ProvenanceTable table, int rows) {
    String row = "(" + "?, ".repeat(table.columns().size() - 1) + "?)";
    return "INSERT INTO " + quote(table.name()) + " (" + table.columns().stream().map(c -> quote(c.name()))
        .collect(Collectors.joining(", ")) + ") VALUES " + String.join(", ", java.util.Collections.nCopies(rows, row))
        + " ON CONFLICT DO NOTHING";
  }

  final String mergeSql(ProvenanceTable table) {
    String on = table.key().stream()
        .map(k -> "t." + quote(k) + " = " + stagedValue(table.columns().get(table.indexOf(k))))
        .collect(Collectors.joining(" AND "));
    return "MERGE INTO " + quote(table.name()) + " t USING " + quote(stagingName(table)) + " s ON " + on
        + " WHEN NOT MATCHED THEN INSERT (" + table.columns().stream().map(c -> quote(c.name()))
        .collect(Collectors.joining(", ")) + ") VALUES ("
        + table.columns().stream().map(this::stagedValue).collect(Collectors.joining(", ")) + ")";
  }

  private String stagedValue(ProvenanceColumn column) {
    String value = "s." + quote(column.name());
    return column.type() == ColumnType.TIMESTAMP ? "CAST(" + value + " AS TIMESTAMP)" : value;
  }

  static String stagingName(ProvenanceTable table) {
    return "apiary_stage_" + table.name().toLowerCase(Locale.ROOT);
  }

  final void bindBatch(PreparedStatement statement, ProvenanceTable table, List<ProvenanceRow> rows)
      throws SQLException {
    List<ProvenanceColumn> columns = table.columns();
    for (ProvenanceRow row : rows) {
      for (int i = 0; i < columns.size(); i++) {
        bind(statement, i + 1, columns.get(i).type(), row.values().get(i));
      }
      statement.addBatch();
    }
  }

  final void bind(PreparedStatement statement, int index, ColumnType type, Object value) throws SQLException {
    if (type == ColumnType.TIMESTAMP) {
      bindTimestamp(statement, index, value == null ? null : ((Instant) value).truncatedTo(ChronoUnit.MICROS));
      return;
    }
    if (value == null) {
      statement.setNull(index, sqlType(type));
      return;
    }
    switch (type) {
      case BIGINT -> statement.setLong(index, ((Number) value).longValue());
      case INTEGER -> statement.setInt(index, ((Number) value).intValue());
      case SMALLINT -> statement.setShort(index, ((Number) value).shortValue());
      case TINYINT -> statement.setByte(index, ((Number) value).byteValue());
      case DOUBLE -> statement.setDouble(index, ((Number) value).doubleValue());
      case DECIMAL -> statement.setBigDecimal(index, (BigDecimal) value);
      case VARCHAR -> statement.setString(index, (String) value);
      case VARBINARY -> statement.setBytes(index, (byte[]) value);
      case TIMESTAMP -> throw new AssertionError("bound above");
    }
  }

  static int sqlType(ColumnType type) {
    return switch (type) {
      case BIGINT -> Types.BIGINT;
      case INTEGER -> Types.INTEGER;
      case SMALLINT -> Types.SMALLINT;
      case TINYINT -> Types.TINYINT;
      case DOUBLE -> Types.DOUBLE;
      case DECIMAL -> Types.DECIMAL;
      case VARCHAR -> Types.VARCHAR;
      case VARBINARY -> Types.VARBINARY;
      case TIMESTAMP -> Types.TIMESTAMP;
    };
  }
}
