package org.apiary.provenance;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoField;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What differs between the analytical databases a {@link ProvenanceSink} writes to: type names, identifier quoting,
 * how a TIMESTAMP travels over JDBC, the statements of an idempotent load, and how the driver bounds network
 * operations. Everything else is one JDBC code path.
 *
 * <p>TIMESTAMP columns are SQL {@code TIMESTAMP} (without time zone) holding UTC, at microsecond precision.
 */
enum SinkDialect {
  /**
   * DuckDB's tables have no primary key: maintaining its index cost about a third of the CPU of each loaded row
   * (measured: 2.6 against 1.8 µs per row), most of provenance's cost in the database process. Rows go through
   * DuckDB's appender (its JDBC driver executes a batch one row at a time, under 8,000 rows/s measured here).
   * {@link #append} writes rows never loaded before straight into the table; {@link #load} appends them to a
   * staging table and inserts those whose key is absent ({@code INSERT ... SELECT ... WHERE NOT EXISTS}), looking
   * only at rows with {@code tx_id} in the batch's range when the table has one (a key's {@code exec_id} determines
   * its {@code tx_id}), which DuckDB's per-row-group min/max statistics turn into reading a few row groups.
   *
   * <p>Appending without a key check is safe because a DuckDB file is open in one process at a time and one VoltDB
   * server runs per process: no other writer loads the same rows. A table created with a primary key by an earlier
   * version keeps it, and an append that meets a present key there falls back to the staged load.
   */
  DUCKDB("jdbc:duckdb:") {
    @Override
    void setQueryTimeout(Statement statement, int seconds) {
      // Embedded, so nothing waits on a network; and duckdb_jdbc 1.1.3's setQueryTimeout only logs "not supported".
    }

    /**
     * One thread, a checkpoint every {@value #DUCKDB_CHECKPOINT_THRESHOLD} of write-ahead log, and a memory limit of
     * {@value #DUCKDB_MEMORY_LIMIT}, each unless the URL
     * ({@code jdbc:duckdb:FILE;memory_limit=2GB}) or the properties set one. Set with {@code SET} on the open
     * database rather than as connection properties, which DuckDB compares: another connection to the same file in
     * this process with other properties (or none) would be refused.
     */
    @Override
    void configure(Connection connection, String jdbcUrl, Properties props, int queryTimeout) throws SQLException {
      try (Statement statement = createStatement(connection, queryTimeout)) {
        // Loading is sequential; DuckDB's default of one worker per core would compete with the transactional
        // database for the same cores when both run on one machine (measured: three DuckDB threads took most of a
        // core on a 2-core machine under provenance load).
        statement.execute("SET threads TO 1");
        // DuckDB's own default is 80% of the machine's memory, inside the VoltDB server's process; its buffer pool
        // grows toward it as the file does.
        setUnlessGiven(statement, jdbcUrl, props, "memory_limit", DUCKDB_MEMORY_LIMIT);
        // DuckDB checkpoints whenever its write-ahead log passes 16 MB (its default), and each checkpoint rewrites
        // the partly filled row groups again: loading the spooler's batches cost about 30% more CPU per row than
        // with fewer, larger checkpoints, the final one included (measured: 3.8-4.0 against 2.6-2.8 µs per
        // 13-column row). The price is a longer log to replay after a crash.
        setUnlessGiven(statement, jdbcUrl, props, "checkpoint_threshold", DUCKDB_CHECKPOINT_THRESHOLD);
      }
    }

    /** {@code SET name = 'value'} unless the URL's options or the properties set {@code name} themselves. */
    private static void setUnlessGiven(Statement statement, String jdbcUrl, Properties props, String name,
                                       String value) throws SQLException {
      if (!given(props.stringPropertyNames(), name, true) && !given(duckDbUrlOptions(jdbcUrl), name, true)) {
        statement.execute("SET " + name + " = '" + value + "'");
      }
    }

    @Override
    void prepareLoad(Connection connection, ProvenanceTable table, Set<String> staged, int queryTimeout)
        throws SQLException {
      if (!staged.contains(stagingName(table))) {
        try (Statement statement = createStatement(connection, queryTimeout)) {
          statement.execute("CREATE TABLE IF NOT EXISTS " + quote(stagingName(table)) + " (" + columnDefinitions(table)
              + ")");
        }
        connection.commit();
        staged.add(stagingName(table));
      }
    }

    @Override
    String createTableSql(ProvenanceTable table) {
      return "CREATE TABLE IF NOT EXISTS " + quote(table.name()) + " (" + columnDefinitions(table) + ")";
    }

    /**
     * Appends straight into the table (one appender, no staging, no key lookup). On a table an earlier version
     * created with a primary key, an append that meets a present key is rolled back and staged instead, and so are
     * the next {@value #STAGED_AFTER_CONFLICT} appends of that table.
     */
    @Override
    void append(Connection connection, ProvenanceTable table, List<ProvenanceRow> rows, int queryTimeout,
                Map<String, Integer> conflicts) throws SQLException {
      int stagedLeft = conflicts.getOrDefault(stagingName(table), 0);
      if (stagedLeft > 0) {
        conflicts.put(stagingName(table), stagedLeft - 1);
      } else {
        try {
          appendRows(connection, table.name(), table, rows);
          return;
        } catch (SQLException e) {
          if (!isKeyConflict(e)) {
            throw e;
          }
          connection.rollback(); // nothing of this attempt stays; the staged load below skips the present keys
          conflicts.put(stagingName(table), STAGED_AFTER_CONFLICT);
        }
      }
      load(connection, table, rows, queryTimeout);
    }

    @Override
    int load(Connection connection, ProvenanceTable table, List<ProvenanceRow> rows, int queryTimeout)
        throws SQLException {
      String stage = quote(stagingName(table));
      try (Statement statement = createStatement(connection, queryTimeout)) {
        statement.execute("DELETE FROM " + stage);
        appendRows(connection, stagingName(table), table, rows);
        int inserted = statement.executeUpdate(insertAbsentSql(table, txRange(table, rows)));
        statement.execute("DELETE FROM " + stage);
        return inserted;
      }
    }

    @Override
    String describeLoad(ProvenanceTable table) {
      return insertAbsentSql(table, "");
    }

    /** Inserts the staged rows whose key is absent from the table ({@code range} narrows the rows looked at). */
    private String insertAbsentSql(ProvenanceTable table, String range) {
      // By name: a table that gained columns after it was created (ensureTable) has them in another place.
      String columns = table.columns().stream().map(c -> quote(c.name())).collect(Collectors.joining(", "));
      String present = table.key().stream().map(k -> "x." + quote(k) + " = s." + quote(k))
          .collect(Collectors.joining(" AND "));
      return "INSERT INTO " + quote(table.name()) + " (" + columns + ") SELECT " + columns + " FROM "
          + quote(stagingName(table)) + " s WHERE NOT EXISTS (SELECT 1 FROM " + quote(table.name()) + " x WHERE "
          + present + range + ") ORDER BY s.rowid"; // the anti-join alone does not keep the rows' order
    }

    /**
     * {@code AND x.tx_id BETWEEN lo AND hi} over the rows' {@code tx_id}s, if the table has that column and its key
     * has {@code exec_id} (which determines {@code tx_id}, see {@link ProvenanceSchema}); else nothing.
     */
    private String txRange(ProvenanceTable table, List<ProvenanceRow> rows) {
      int tx = table.indexOf(ProvenanceSchema.TX_ID);
      if (tx < 0 || table.columns().get(tx).type() != ColumnType.BIGINT
          || !table.key().contains(ProvenanceSchema.EXEC_ID)) {
        return "";
      }
      long lo = Long.MAX_VALUE;
      long hi = Long.MIN_VALUE;
      for (ProvenanceRow row : rows) {
        Object value = row.values().get(tx);
        if (value == null) {
          return "";
        }
        long id = ((Number) value).longValue();
        lo = Math.min(lo, id);
        hi = Math.max(hi, id);
      }
      return rows.isEmpty() ? "" : " AND x." + quote(ProvenanceSchema.TX_ID) + " BETWEEN " + lo + " AND " + hi;
    }

    private static final int STAGED_AFTER_CONFLICT = 64;

    /** A load that failed because a row's key was present (the appender's message; SQL's is a Constraint Error). */
    private static boolean isKeyConflict(SQLException e) {
      String message = String.valueOf(e.getMessage());
      return message.contains("violates primary key constraint") || message.startsWith("Constraint Error");
    }

    /**
     * Appends rows of {@code table}'s layout to the table {@code target} with DuckDB's appender, which fills a data
     * chunk in Java memory and crosses into native code once per chunk rather than once per value.
     */
    private static void appendRows(Connection connection, String target, ProvenanceTable table,
                                   List<ProvenanceRow> rows) throws SQLException {
      List<ProvenanceColumn> columns = table.columns();
      int width = columns.size();
      ColumnType[] types = new ColumnType[width];
      for (int i = 0; i < width; i++) {
        types[i] = columns.get(i).type();
      }
      try (org.duckdb.DuckDBAppender appender = connection.unwrap(org.duckdb.DuckDBConnection.class)
          .createAppender(org.duckdb.DuckDBConnection.DEFAULT_SCHEMA, target)) {
        for (ProvenanceRow row : rows) {
          List<Object> values = row.values();
          appender.beginRow();
          for (int i = 0; i < width; i++) {
            append(appender, types[i], values.get(i));
          }
          appender.endRow();
        }
        appender.flush(); // close() alone drops the rows of a failed flush without an error (DuckDB JDBC 1.4.4)
      }
    }

    private static void append(org.duckdb.DuckDBAppender a, ColumnType type, Object value) throws SQLException {
      if (value == null) {
        a.appendNull();
        return;
      }
      switch (type) {
        case BIGINT -> a.append(((Number) value).longValue());
        case INTEGER -> a.append(((Number) value).intValue());
        case SMALLINT -> a.append(((Number) value).shortValue());
        case TINYINT -> a.append(((Number) value).byteValue());
        case DOUBLE -> a.append(((Number) value).doubleValue());
        case DECIMAL -> a.append((BigDecimal) value);
        case VARCHAR -> a.append((String) value);
        case VARBINARY -> a.append((byte[]) value);
        case TIMESTAMP -> {
          Instant at = (Instant) value;
          a.appendEpochMicros(Math.addExact(Math.multiplyExact(at.getEpochSecond(), 1_000_000L),
              at.getNano() / 1_000));
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

  /**
   * PostgreSQL enforces primary keys: {@code INSERT ... ON CONFLICT DO NOTHING}. pgjdbc's timeouts are the connection
   * properties {@code connectTimeout} (TCP connect), {@code loginTimeout} (the whole login) and {@code socketTimeout}
   * (each socket read), all in seconds. The sink's statements are bounded by the server's {@code statement_timeout},
   * set for each of the sink's transactions, rather than by JDBC's query timeout: pgjdbc enforces that one by sending
   * a cancel request on a new connection and makes the timed-out statement wait for it, so into a silent network a
   * statement would hang past its socket timeout until the cancel request's own timeout ({@code cancelSignalTimeout},
   * 10 s by default) ran out too.
   */
  POSTGRESQL("jdbc:postgresql:") {
    @Override
    void beginTransaction(Connection connection, int queryTimeout) throws SQLException {
      // SET LOCAL, as set_config(..., true): for this transaction only, so queries that others run on the connection
      // keep the session's setting; and only if the session has none of its own (from options in the properties or
      // URL, the role, the database or the server), which then applies.
      try (Statement statement = connection.createStatement();
           ResultSet ignored = statement.executeQuery("SELECT set_config('statement_timeout', '"
               + (long) queryTimeout * 1000 + "', true) WHERE current_setting('statement_timeout') = '0'")) {
        // the query's effect is all
      }
    }

    @Override
    void setQueryTimeout(Statement statement, int seconds) {
      // statement_timeout, set by beginTransaction(), bounds the sink's statements
    }

    @Override
    Properties withTimeouts(String jdbcUrl, Properties props, Duration timeout) {
      Properties result = copy(props);
      String seconds = Integer.toString(ProvenanceSink.seconds(timeout));
      for (String name : List.of("connectTimeout", "loginTimeout", "socketTimeout")) {
        putUnlessGiven(result, jdbcUrl, name, seconds, false); // pgjdbc's property names are case-sensitive
      }
      return result;
    }

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
   * {@code MERGE ... WHEN NOT MATCHED THEN INSERT} adds the ones whose key is absent, in the same transaction. Its
   * driver's timeouts are the connection properties {@code LoginTimeout} (the whole login, seconds),
   * {@code LoginNetworkTimeout} (TCP connect, seconds) and {@code NetworkTimeout} (each socket read, milliseconds);
   * it reads property names in any case.
   */
  VERTICA("jdbc:vertica:") {
    @Override
    Properties withTimeouts(String jdbcUrl, Properties props, Duration timeout) {
      Properties result = copy(props);
      String seconds = Integer.toString(ProvenanceSink.seconds(timeout));
      putUnlessGiven(result, jdbcUrl, "LoginTimeout", seconds, true);
      putUnlessGiven(result, jdbcUrl, "LoginNetworkTimeout", seconds, true);
      putUnlessGiven(result, jdbcUrl, "NetworkTimeout",
          Long.toString(Math.min(Integer.MAX_VALUE, timeout.toMillis())), true);
      return result;
    }

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
    void prepareLoad(Connection connection, ProvenanceTable table, Set<String> staged, int queryTimeout)
        throws SQLException {
      if (staged.contains(stagingName(table))) {
        return;
      }
      // DDL commits in Vertica, so the staging table is created before the load's transaction starts.
      // TIMESTAMP values are staged as text (see bindTimestamp) and cast by the MERGE.
      String columns = table.columns().stream().map(c -> quote(c.name()) + " "
          + (c.type() == ColumnType.TIMESTAMP ? "VARCHAR(32)" : typeName(c.type()))).collect(Collectors.joining(", "));
      String ddl = "CREATE LOCAL TEMPORARY TABLE IF NOT EXISTS " + quote(stagingName(table)) + " (" + columns
          + ") ON COMMIT DELETE ROWS";
      try (Statement statement = createStatement(connection, queryTimeout)) {
        statement.execute(ddl);
      }
      connection.commit();
      staged.add(stagingName(table));
    }

    @Override
    int load(Connection connection, ProvenanceTable table, List<ProvenanceRow> rows, int queryTimeout)
        throws SQLException {
      try (PreparedStatement insert = prepareStatement(connection, insertSql(table, stagingName(table)),
          queryTimeout)) {
        bindBatch(insert, table, rows);
        insert.executeBatch();
      }
      try (Statement merge = createStatement(connection, queryTimeout)) {
        return merge.executeUpdate(mergeSql(table));
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

  /**
   * The statement that adds a column to a table an earlier version created without it ({@link
   * ProvenanceSink#ensureTable}): the same in all three databases, NULL in the table's rows.
   */
  String addColumnSql(ProvenanceTable table, ProvenanceColumn column) {
    return "ALTER TABLE " + quote(table.name()) + " ADD COLUMN " + quote(column.name()) + " " + typeName(column.type());
  }

  String createTableSql(ProvenanceTable table) {
    return "CREATE TABLE IF NOT EXISTS " + quote(table.name()) + " (" + columnDefinitions(table) + ", PRIMARY KEY ("
        + table.key().stream().map(this::quote).collect(Collectors.joining(", ")) + "))";
  }

  /** The memory an embedded DuckDB sink may use unless its URL says otherwise (DuckDB's size syntax). */
  static final String DUCKDB_MEMORY_LIMIT = "512MB";
  /** How much write-ahead log DuckDB gathers before it checkpoints, unless the URL or properties say otherwise. */
  static final String DUCKDB_CHECKPOINT_THRESHOLD = "128MB";

  /**
   * The connection properties to connect with: {@code props} plus the driver's connect, login and socket-read
   * timeouts set to {@code timeout}, except those already given in {@code props} or in the URL. Nothing by default.
   */
  Properties withTimeouts(String jdbcUrl, Properties props, Duration timeout) {
    return copy(props);
  }

  /** Bounds how long a statement may run, in seconds (JDBC's query timeout). */
  void setQueryTimeout(Statement statement, int seconds) throws SQLException {
    statement.setQueryTimeout(seconds);
  }

  /** A statement with the query timeout; the {@code queryTimeout} parameters below are in seconds. */
  final Statement createStatement(Connection connection, int queryTimeout) throws SQLException {
    Statement statement = connection.createStatement();
    try {
      setQueryTimeout(statement, queryTimeout);
    } catch (SQLException e) {
      statement.close();
      throw e;
    }
    return statement;
  }

  /** A prepared statement with the query timeout. */
  final PreparedStatement prepareStatement(Connection connection, String sql, int queryTimeout) throws SQLException {
    PreparedStatement statement = connection.prepareStatement(sql);
    try {
      setQueryTimeout(statement, queryTimeout);
    } catch (SQLException e) {
      statement.close();
      throw e;
    }
    return statement;
  }

  /**
   * Runs first in each of the sink's transactions (a load, a DDL statement), on a connection not in auto-commit
   * mode: whatever bounds the transaction's statements that a per-statement query timeout does not. Nothing by
   * default.
   */
  void beginTransaction(Connection connection, int queryTimeout) throws SQLException {
    // nothing by default
  }

  /** Runs once per connection, right after it opens ({@code jdbcUrl} and {@code props} it was opened with). */
  void configure(Connection connection, String jdbcUrl, Properties props, int queryTimeout) throws SQLException {
    // nothing by default
  }

  /** Runs once per table and connection before the first load: work that must happen outside the load's transaction. */
  void prepareLoad(Connection connection, ProvenanceTable table, Set<String> staged, int queryTimeout)
      throws SQLException {
    // nothing by default
  }

  /**
   * Loads rows (distinct keys) that were never loaded before, in any attempt, inside the caller's transaction. By
   * default as {@link #load(Connection, ProvenanceTable, List, int)}, which skips present keys.
   *
   * @param conflicts per table, state the dialect keeps on one connection about earlier loads' key conflicts
   */
  void append(Connection connection, ProvenanceTable table, List<ProvenanceRow> rows, int queryTimeout,
              Map<String, Integer> conflicts) throws SQLException {
    load(connection, table, rows, queryTimeout);
  }

  /**
   * Loads rows (distinct keys) inside the caller's transaction, skipping those whose key is present.
   *
   * @return how many rows were added, or -1 if the database does not say
   */
  int load(Connection connection, ProvenanceTable table, List<ProvenanceRow> rows, int queryTimeout)
      throws SQLException {
    try (PreparedStatement insert = prepareStatement(connection, describeLoad(table), queryTimeout)) {
      bindBatch(insert, table, rows);
      int added = 0;
      for (int count : insert.executeBatch()) {
        if (count < 0) {
          return -1;
        }
        added += count;
      }
      return added;
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

  /** A copy of connection properties, including any defaults they fall back on. */
  static Properties copy(Properties props) {
    Properties result = new Properties();
    result.putAll(props);
    for (String name : props.stringPropertyNames()) {
      result.setProperty(name, props.getProperty(name));
    }
    return result;
  }

  /** Sets a property unless the properties or the URL's parameters already name it. */
  static void putUnlessGiven(Properties props, String jdbcUrl, String name, String value, boolean ignoreCase) {
    if (!given(props.stringPropertyNames(), name, ignoreCase) && !given(urlParameters(jdbcUrl), name, ignoreCase)) {
      props.setProperty(name, value);
    }
  }

  private static boolean given(Set<String> names, String name, boolean ignoreCase) {
    return ignoreCase ? names.stream().anyMatch(name::equalsIgnoreCase) : names.contains(name);
  }

  /** The names of a DuckDB URL's {@code ;name=value;...} options. */
  static Set<String> duckDbUrlOptions(String jdbcUrl) {
    Set<String> names = new java.util.HashSet<>();
    String[] parts = jdbcUrl.split(";");
    for (int i = 1; i < parts.length; i++) {
      int eq = parts[i].indexOf('=');
      String name = (eq < 0 ? parts[i] : parts[i].substring(0, eq)).trim();
      if (!name.isEmpty()) {
        names.add(name);
      }
    }
    return names;
  }

  /** The names of a JDBC URL's {@code ?name=value&...} parameters. */
  static Set<String> urlParameters(String jdbcUrl) {
    int query = jdbcUrl.indexOf('?');
    if (query < 0) {
      return Set.of();
    }
    Set<String> names = new java.util.HashSet<>();
    for (String parameter : jdbcUrl.substring(query + 1).split("&")) {
      int eq = parameter.indexOf('=');
      String name = (eq < 0 ? parameter : parameter.substring(0, eq)).trim();
      if (!name.isEmpty()) {
        names.add(name);
      }
    }
    return names;
  }

  /**
   * The staging table of a table, named after its layout too: DuckDB keeps staging tables in the file, so one made
   * for an earlier layout of the table (before it gained a column) is never reused for the new one.
   */
  static String stagingName(ProvenanceTable table) {
    String layout = table.columns().stream().map(c -> c.name() + " " + c.type().name())
        .collect(Collectors.joining(","));
    return "apiary_stage_" + table.name().toLowerCase(Locale.ROOT) + "_" + Integer.toHexString(layout.hashCode());
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
