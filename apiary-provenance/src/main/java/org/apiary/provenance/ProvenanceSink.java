package org.apiary.provenance;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.apiary.DatabaseException;

/**
 * A connection to the analytical database that provenance is loaded into, chosen by its JDBC URL:
 * <ul>
 *   <li>DuckDB, {@code jdbc:duckdb:/path/file.db}: embedded, nothing to set up (the default choice);</li>
 *   <li>PostgreSQL, {@code jdbc:postgresql://host:port/database};</li>
 *   <li>Vertica, {@code jdbc:vertica://host:port/database}.</li>
 * </ul>
 *
 * <p>Loads are idempotent: a row whose {@link ProvenanceTable#key() key} is already in the table is skipped, so a
 * batch can be delivered again, or overlap an earlier one, without duplicating rows. PostgreSQL and DuckDB enforce
 * the primary key that {@link #ensureTable} declares and loads use {@code INSERT ... ON CONFLICT DO NOTHING}; Vertica
 * does not enforce keys by default, so a load fills a session-local staging table and {@code MERGE}s into the target
 * the rows whose key is absent. Each load is one transaction.
 *
 * <p>Values map to SQL as {@link ColumnType} lists them; TIMESTAMP columns are {@code TIMESTAMP} without time zone,
 * holding UTC, truncated to microseconds (read them back with {@link #readTimestamp}). Table and column names must
 * be plain identifiers (letters, digits, underscores); they are case-insensitive in all three databases.
 *
 * <p>Not thread-safe: use one sink from one thread at a time. {@link ProvenanceSpooler} owns its sink.
 */
public final class ProvenanceSink implements AutoCloseable {
  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  private static final Pattern SECRET = Pattern.compile("(?i)(password|pwd)=[^&;]*");

  private final String url;
  private final SinkDialect dialect;
  private final Connection connection;
  /** Tables whose per-connection preparation (Vertica's staging table) is done. */
  private final Set<String> prepared = new HashSet<>();

  private ProvenanceSink(String url, SinkDialect dialect, Connection connection) {
    this.url = url;
    this.dialect = dialect;
    this.connection = connection;
  }

  /**
   * Connects to the database a JDBC URL names.
   *
   * @param jdbcUrl a {@code jdbc:duckdb:}, {@code jdbc:postgresql:} or {@code jdbc:vertica:} URL
   * @param props driver properties (user, password, timeouts, ...); may be empty
   * @throws IllegalArgumentException if the URL names another database
   * @throws SQLException if the connection fails; the message names the URL (without its password)
   */
  public static ProvenanceSink open(String jdbcUrl, Properties props) throws SQLException {
    Objects.requireNonNull(jdbcUrl, "jdbcUrl");
    SinkDialect dialect = SinkDialect.forUrl(jdbcUrl);
    Connection connection;
    try {
      connection = DriverManager.getConnection(jdbcUrl, props == null ? new Properties() : props);
    } catch (SQLException e) {
      throw new SQLException("cannot connect to provenance database " + redact(jdbcUrl) + ": " + describe(e),
          e.getSQLState(), e.getErrorCode(), e);
    }
    try {
      dialect.configure(connection);
      connection.setAutoCommit(false);
    } catch (SQLException e) {
      closeAfterFailure(connection, e);
      throw new SQLException("cannot start transactions on provenance database " + redact(jdbcUrl) + ": "
          + describe(e), e.getSQLState(), e.getErrorCode(), e);
    }
    return new ProvenanceSink(jdbcUrl, dialect, connection);
  }

  /**
   * A factory for {@link ProvenanceSpooler#start}: each call opens a new sink, and a failure to connect is thrown
   * as a {@link DatabaseException} (the spooler then backs off and calls it again).
   */
  public static Supplier<ProvenanceSink> opener(String jdbcUrl, Properties props) {
    SinkDialect.forUrl(jdbcUrl); // reject an unsupported URL now rather than on every retry
    Properties copy = new Properties();
    if (props != null) {
      copy.putAll(props);
    }
    return () -> {
      try {
        return open(jdbcUrl, copy);
      } catch (SQLException e) {
        throw new DatabaseException(e.getMessage(), e);
      }
    };
  }

  /** The JDBC URL with any password parameter masked, for messages. */
  public String url() {
    return redact(url);
  }

  /**
   * The JDBC connection, for queries. It is not in auto-commit mode: end what you run with {@code commit()} or
   * {@code rollback()}.
   */
  public Connection connection() {
    return connection;
  }

  /**
   * Creates the table if it does not exist, with a primary key on {@link ProvenanceTable#key()} (enforced by
   * DuckDB and PostgreSQL; declared only, by default, in Vertica). Does nothing to an existing table, whatever its
   * columns are.
   *
   * @throws IllegalArgumentException if a name is not a plain identifier or the table has no key
   * @throws SQLException naming the table and URL
   */
  public void ensureTable(ProvenanceTable table) throws SQLException {
    checkTable(table);
    executeDdl(dialect.createTableSql(table), "provenance table " + table.name());
  }

  /** Creates or replaces a view ({@code ddl} is a complete {@code CREATE OR REPLACE VIEW} statement). */
  public void ensureView(String ddl) throws SQLException {
    executeDdl(ddl, "a provenance view");
  }

  /** Runs one DDL statement in a transaction of its own; the failure names {@code what} and the URL. */
  private void executeDdl(String ddl, String what) throws SQLException {
    try {
      try (Statement statement = connection.createStatement()) {
        statement.execute(ddl);
      }
      connection.commit();
    } catch (SQLException e) {
      rollbackAfterFailure(e);
      throw new SQLException("cannot create " + what + " in " + url() + " (" + ddl + "): " + describe(e),
          e.getSQLState(), e.getErrorCode(), e);
    }
  }

  /**
   * Loads rows into a table in one transaction, skipping every row whose key is already present (and all but the
   * first of rows sharing a key within the batch). The table must exist ({@link #ensureTable}).
   *
   * @param rows rows of {@code table}, values in its column order
   * @throws IllegalArgumentException if a row does not fit the table (wrong table, column count, Java type, or a
   *     null key value)
   * @throws SQLException naming the table and URL; nothing of the batch was loaded
   */
  public void load(ProvenanceTable table, List<ProvenanceRow> rows) throws SQLException {
    checkTable(table);
    for (ProvenanceRow row : rows) {
      checkRow(table, row);
    }
    if (rows.isEmpty()) {
      return;
    }
    List<ProvenanceRow> distinct = distinctKeys(table, rows);
    try {
      dialect.prepareLoad(connection, table, prepared);
      dialect.load(connection, table, distinct);
      connection.commit();
    } catch (SQLException e) {
      rollbackAfterFailure(e);
      throw new SQLException("cannot load " + rows.size() + " rows into provenance table " + table.name() + " in "
          + url() + ": " + describe(e), e.getSQLState(), e.getErrorCode(), e);
    }
  }

  /** Reads a TIMESTAMP column that this sink wrote (UTC) as an instant; {@code null} for SQL NULL. */
  public Instant readTimestamp(ResultSet resultSet, int column) throws SQLException {
    return dialect.readTimestamp(resultSet, column);
  }

  /** Closes the connection, rolling back anything uncommitted. */
  @Override
  public void close() throws SQLException {
    connection.close();
  }

  SinkDialect dialect() {
    return dialect;
  }

  /** Rejects a table whose names could not be used unquoted, or that has no key to make loads idempotent. */
  static void checkTable(ProvenanceTable table) {
    checkIdentifier(table.name(), "table name");
    for (ProvenanceColumn column : table.columns()) {
      checkIdentifier(column.name(), "column name in table " + table.name());
    }
    if (table.key().isEmpty()) {
      throw new IllegalArgumentException("provenance table " + table.name()
          + " has no key; loads are idempotent only by key");
    }
  }

  private static void checkIdentifier(String name, String what) {
    if (!IDENTIFIER.matcher(name).matches()) {
      throw new IllegalArgumentException(what + " '" + name + "' is not a plain SQL identifier "
          + "(letters, digits and underscores, not starting with a digit)");
    }
  }

  /** Rejects a row that does not fit its table: every load of it would fail the same way. */
  static void checkRow(ProvenanceTable table, ProvenanceRow row) {
    if (!row.table().equals(table.name())) {
      throw new IllegalArgumentException("row of table " + row.table() + " given for table " + table.name());
    }
    List<ProvenanceColumn> columns = table.columns();
    if (row.values().size() != columns.size()) {
      throw new IllegalArgumentException("row of table " + table.name() + " has " + row.values().size()
          + " values but the table has " + columns.size() + " columns");
    }
    for (int i = 0; i < columns.size(); i++) {
      Object value = row.values().get(i);
      ProvenanceColumn column = columns.get(i);
      if (value == null) {
        if (table.key().contains(column.name())) {
          throw new IllegalArgumentException("row of table " + table.name() + " has NULL in key column "
              + column.name());
        }
      } else if (!fits(column.type(), value)) {
        throw new IllegalArgumentException("column " + column.name() + " of table " + table.name() + " is "
            + column.type() + " but the row has a " + value.getClass().getName() + " (" + value + ")");
      }
    }
  }

  private static boolean fits(ColumnType type, Object value) {
    return switch (type) {
      case BIGINT -> value instanceof Long || value instanceof Integer || value instanceof Short
          || value instanceof Byte;
      case INTEGER -> value instanceof Integer || value instanceof Short || value instanceof Byte;
      case SMALLINT -> value instanceof Short || value instanceof Byte;
      case TINYINT -> value instanceof Byte;
      case DOUBLE -> value instanceof Double;
      case DECIMAL -> value instanceof BigDecimal;
      case VARCHAR -> value instanceof String;
      case VARBINARY -> value instanceof byte[];
      case TIMESTAMP -> value instanceof Instant;
    };
  }

  private static List<ProvenanceRow> distinctKeys(ProvenanceTable table, List<ProvenanceRow> rows) {
    int[] keyIndexes = table.key().stream().mapToInt(table::indexOf).toArray();
    Set<List<Object>> seen = new HashSet<>();
    List<ProvenanceRow> distinct = new ArrayList<>(rows.size());
    for (ProvenanceRow row : rows) {
      List<Object> key = new ArrayList<>(keyIndexes.length);
      for (int index : keyIndexes) {
        Object value = row.values().get(index);
        key.add(value instanceof byte[] bytes ? ByteBuffer.wrap(bytes) : value); // arrays compare by identity
      }
      if (seen.add(key)) {
        distinct.add(row);
      }
    }
    return distinct;
  }

  private void rollbackAfterFailure(SQLException failure) {
    try {
      connection.rollback();
    } catch (SQLException e) {
      failure.addSuppressed(e);
    }
  }

  private static void closeAfterFailure(Connection connection, SQLException failure) {
    try {
      connection.close();
    } catch (SQLException e) {
      failure.addSuppressed(e);
    }
  }

  /** An exception's message with the driver's chained batch errors, which hold the actual cause. */
  static String describe(SQLException e) {
    StringBuilder text = new StringBuilder(String.valueOf(e.getMessage()));
    SQLException next = e.getNextException();
    if (e instanceof BatchUpdateException && next != null && next.getMessage() != null
        && !text.toString().contains(next.getMessage())) {
      text.append(" (").append(next.getMessage()).append(')');
    }
    return text.toString();
  }

  static String redact(String jdbcUrl) {
    return SECRET.matcher(jdbcUrl).replaceAll("$1=***");
  }
}
