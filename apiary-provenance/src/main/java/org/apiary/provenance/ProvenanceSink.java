package org.apiary.provenance;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
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
 * <p>Loads are idempotent: {@link #load} skips a row whose {@link ProvenanceTable#key() key} is already in the table,
 * so a batch can be delivered again, or overlap an earlier one, without duplicating rows. PostgreSQL enforces the
 * primary key that {@link #ensureTable} declares and loads use {@code INSERT ... ON CONFLICT DO NOTHING}; Vertica
 * does not enforce keys by default, so a load fills a session-local staging table and {@code MERGE}s into the target
 * the rows whose key is absent; DuckDB's tables have no key index, and a load stages its rows and inserts those whose
 * key is absent. {@link #append} is for rows never loaded before, in any attempt: DuckDB appends them without
 * looking for their keys (the others load them as {@link #load} does). Each load is one transaction.
 *
 * <p>Values map to SQL as {@link ColumnType} lists them; TIMESTAMP columns are {@code TIMESTAMP} without time zone,
 * holding UTC, truncated to microseconds (read them back with {@link #readTimestamp}). Table and column names must
 * be plain identifiers (letters, digits, underscores); they are case-insensitive in all three databases.
 *
 * <p>Every network operation is bounded by the sink's {@linkplain #timeout() timeout} (default
 * {@link #DEFAULT_TIMEOUT}), so a database whose network goes silent fails the operation rather than hanging it:
 * connecting and logging in, each read from the socket (PostgreSQL and Vertica, through the drivers' connection
 * properties), and each statement the sink runs (PostgreSQL's {@code statement_timeout}, Vertica's JDBC query
 * timeout); see {@link #open(String, Properties, Duration)}. A failure caused by the timeout is a
 * {@link SQLTimeoutException} whose message names the URL and the timeout.
 *
 * <p>Not thread-safe: use one sink from one thread at a time. {@link ProvenanceSpooler} owns its sink.
 */
public final class ProvenanceSink implements BatchSink {
  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  private static final Pattern SECRET = Pattern.compile("(?i)(password|pwd)=[^&;]*");

  /**
   * The timeout of {@link #open(String, Properties)} and {@link #opener(String, Properties)}: 30 seconds for
   * connecting, for each read from the database's socket, and for each statement.
   */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);
  /** PostgreSQL's SQLSTATE for a cancelled statement, as an expired statement timeout is reported. */
  private static final String QUERY_CANCELED = "57014";
  /** The standard SQLSTATE of a broken connection; its class, {@code 08}, covers every connection failure. */
  private static final String CONNECTION_FAILURE = "08006";

  private final String url;
  private final SinkDialect dialect;
  private final Connection connection;
  private final Duration timeout;
  /** Tables whose per-connection preparation (Vertica's staging table) is done. */
  private final Set<String> prepared = new HashSet<>();
  /** The dialect's memory of key conflicts in earlier loads on this connection, per table. */
  private final Map<String, Integer> conflicts = new HashMap<>();
  /** Per table ensured, the columns it has in the sink (lower-case): a layout with fewer loads staged, by name. */
  private final Map<String, Set<String>> sinkColumns = new HashMap<>();

  private ProvenanceSink(String url, SinkDialect dialect, Connection connection, Duration timeout) {
    this.url = url;
    this.dialect = dialect;
    this.connection = connection;
    this.timeout = timeout;
  }

  /** Driver properties holding a user and a password, each only if not {@code null}. */
  public static Properties credentials(String user, String password) {
    Properties props = new Properties();
    if (user != null) {
      props.setProperty("user", user);
    }
    if (password != null) {
      props.setProperty("password", password);
    }
    return props;
  }

  /**
   * Connects to the database a JDBC URL names, with the {@link #DEFAULT_TIMEOUT}; see
   * {@link #open(String, Properties, Duration)}.
   *
   * @param jdbcUrl a {@code jdbc:duckdb:}, {@code jdbc:postgresql:} or {@code jdbc:vertica:} URL
   * @param props driver properties (user, password, timeouts, ...); may be empty
   * @throws IllegalArgumentException if the URL names another database
   * @throws SQLException if the connection fails; the message names the URL (without its password)
   */
  public static ProvenanceSink open(String jdbcUrl, Properties props) throws SQLException {
    return open(jdbcUrl, props, DEFAULT_TIMEOUT);
  }

  /**
   * Connects to the database a JDBC URL names, bounding every network operation by {@code timeout}:
   * <ul>
   *   <li>PostgreSQL: the driver properties {@code connectTimeout}, {@code loginTimeout} and {@code socketTimeout}
   *       (whole seconds, rounded up), and {@code statement_timeout} for the sink's own transactions unless the
   *       session has one already (for example from {@code options=-c statement_timeout=...});</li>
   *   <li>Vertica: {@code LoginTimeout} and {@code LoginNetworkTimeout} (whole seconds, rounded up),
   *       {@code NetworkTimeout} (milliseconds), and a query timeout on each statement the sink runs;</li>
   *   <li>DuckDB: embedded, so no network; its driver ignores query timeouts, so none is set.</li>
   * </ul>
   * A property already given, in {@code props} or in the URL, is kept as it is (Vertica's names in any case, as its
   * driver reads them). The socket timeout also applies to queries run on {@link #connection()}: a query that
   * legitimately runs longer without the database sending anything (such as one whose own query timeout is longer)
   * needs a larger sink timeout.
   *
   * @param jdbcUrl a {@code jdbc:duckdb:}, {@code jdbc:postgresql:} or {@code jdbc:vertica:} URL
   * @param props driver properties (user, password, ...); may be empty; not modified
   * @param timeout how long connecting, each read from the database and each statement may take; positive
   * @throws IllegalArgumentException if the URL names another database or the timeout is not positive
   * @throws SQLException if the connection fails; the message names the URL (without its password), and if the
   *     timeout ended it, it is a {@link SQLTimeoutException} that names the timeout too
   */
  public static ProvenanceSink open(String jdbcUrl, Properties props, Duration timeout) throws SQLException {
    Objects.requireNonNull(jdbcUrl, "jdbcUrl");
    SinkDialect dialect = SinkDialect.forUrl(jdbcUrl);
    checkTimeout(timeout);
    Properties effective = dialect.withTimeouts(jdbcUrl, props == null ? new Properties() : props, timeout);
    long started = System.nanoTime();
    Connection connection;
    try {
      connection = DriverManager.getConnection(jdbcUrl, effective);
    } catch (SQLException e) {
      throw failure("cannot connect to provenance database " + redact(jdbcUrl), e, started, true, timeout);
    }
    started = System.nanoTime();
    try {
      dialect.configure(connection, jdbcUrl, effective, seconds(timeout));
      connection.setAutoCommit(false);
    } catch (SQLException e) {
      closeAfterFailure(connection, e);
      throw failure("cannot start transactions on provenance database " + redact(jdbcUrl), e, started, false,
          timeout);
    }
    return new ProvenanceSink(jdbcUrl, dialect, connection, timeout);
  }

  /**
   * A factory for {@link ProvenanceSpooler#start} with the {@link #DEFAULT_TIMEOUT}; see
   * {@link #opener(String, Properties, Duration)}.
   */
  public static Supplier<ProvenanceSink> opener(String jdbcUrl, Properties props) {
    return opener(jdbcUrl, props, DEFAULT_TIMEOUT);
  }

  /**
   * A factory for {@link ProvenanceSpooler#start}: each call {@linkplain #open(String, Properties, Duration) opens}
   * a new sink with this timeout, and a failure to connect is thrown as a {@link DatabaseException} (the spooler
   * then backs off and calls it again). The spooler's loads then fail, rather than hang, once the database stops
   * answering for longer than the timeout, and are retried like any failed load.
   *
   * @throws IllegalArgumentException if the URL names another database or the timeout is not positive
   */
  public static Supplier<ProvenanceSink> opener(String jdbcUrl, Properties props, Duration timeout) {
    SinkDialect.forUrl(jdbcUrl); // reject an unsupported URL now rather than on every retry
    checkTimeout(timeout);
    Properties copy = props == null ? new Properties() : SinkDialect.copy(props);
    return () -> {
      try {
        return open(jdbcUrl, copy, timeout);
      } catch (SQLException e) {
        throw new DatabaseException(e.getMessage(), e);
      }
    };
  }

  /** How long connecting, each read from the database and each statement of this sink may take. */
  public Duration timeout() {
    return timeout;
  }

  /** Whether {@code jdbcUrl} names a DuckDB database (a file one process at a time may open). */
  public static boolean isDuckDb(String jdbcUrl) {
    return jdbcUrl.regionMatches(true, 0, "jdbc:duckdb:", 0, "jdbc:duckdb:".length());
  }

  /**
   * The file an embedded sink's database lives in ({@code jdbc:duckdb:FILE}, options after {@code ;} left out): what
   * fills its volume as rows are loaded. Empty for a database server (PostgreSQL, Vertica) and for an in-memory DuckDB.
   */
  public static java.util.Optional<java.nio.file.Path> localFile(String jdbcUrl) {
    if (SinkDialect.forUrl(jdbcUrl) != SinkDialect.DUCKDB) {
      return java.util.Optional.empty();
    }
    String path = jdbcUrl.substring("jdbc:duckdb:".length()).split(";", 2)[0].strip();
    if (path.isEmpty() || path.startsWith(":memory:")) {
      return java.util.Optional.empty();
    }
    return java.util.Optional.of(java.nio.file.Path.of(path));
  }

  /** {@link #localFile(String)} of this sink's URL. */
  public java.util.Optional<java.nio.file.Path> localFile() {
    return localFile(url);
  }

  /** The JDBC URL with any password parameter masked, for messages. */
  public String url() {
    return redact(url);
  }

  /**
   * The JDBC connection, for queries. It is not in auto-commit mode: end what you run with {@code commit()} or
   * {@code rollback()}. Its socket reads are bounded by the sink's {@linkplain #timeout() timeout} (PostgreSQL,
   * Vertica); statements created on it have no query timeout unless you set one.
   */
  public Connection connection() {
    return connection;
  }

  /**
   * Creates the table if it does not exist, with a primary key on {@link ProvenanceTable#key()} (enforced by
   * DuckDB and PostgreSQL; declared only, by default, in Vertica). An existing table that lacks some of the
   * columns (created by an earlier version: {@code FunctionInvocations.purpose} came with access control,
   * {@code FunctionInvocations.mode} with issue 43) gains
   * them, at its end and NULL in its old rows, so a sink keeps loading after an upgrade; columns it has are left as
   * they are.
   *
   * @throws IllegalArgumentException if a name is not a plain identifier or the table has no key
   * @throws SQLException naming the table and URL
   */
  public void ensureTable(ProvenanceTable table) throws SQLException {
    checkTable(table);
    Set<String> known = sinkColumns.get(table.name());
    if (known != null && table.columns().stream()
        .allMatch(c -> known.contains(c.name().toLowerCase(java.util.Locale.ROOT)))) {
      return; // ensured on this connection already (export loads ensure their table with every block)
    }
    executeConcurrentDdl(dialect.createTableSql(table), "provenance table " + table.name(), () -> false);
    Set<String> present = existingColumns(table);
    for (ProvenanceColumn column : table.columns()) {
      String name = column.name().toLowerCase(java.util.Locale.ROOT);
      if (present.add(name)) {
        executeConcurrentDdl(dialect.addColumnSql(table, column), "column " + column.name()
            + " of provenance table " + table.name(), () -> existingColumns(table).contains(name));
      }
    }
    sinkColumns.put(table.name(), present);
  }

  /** Whether DDL that another connection runs at the same moment is already done (checked after a clash). */
  @FunctionalInterface
  private interface DoneCheck {
    boolean done() throws SQLException;
  }

  /** SQLSTATEs of DDL that clashed with the same DDL on another connection (PostgreSQL's, the ones seen). */
  private static final Set<String> CONCURRENT_DDL_STATES = Set.of(
      "23505", // unique_violation: CREATE TABLE IF NOT EXISTS racing another on pg_type's name index
      "42P07", // duplicate_table
      "42710", // duplicate_object
      "42701", // duplicate_column: ALTER TABLE ADD COLUMN after another added it
      "XX000", // "tuple concurrently updated": CREATE OR REPLACE VIEW racing another
      "40P01", // deadlock_detected
      "40001"); // serialization_failure

  /**
   * Runs idempotent DDL that every node of a cluster runs when it starts, perhaps at the same moment as another:
   * PostgreSQL's {@code IF NOT EXISTS} and {@code OR REPLACE} are not safe against a concurrent twin, which fails
   * with one of {@link #CONCURRENT_DDL_STATES}. Such a clash is tried again (the statement then finds the object),
   * up to 5 times, unless {@code done} says the other connection's DDL did it.
   */
  private void executeConcurrentDdl(String ddl, String what, DoneCheck done) throws SQLException {
    for (int attempt = 1; ; attempt++) {
      try {
        executeDdl(ddl, what);
        return;
      } catch (SQLException e) {
        if (attempt >= 5 || !concurrentDdl(e)) {
          throw e;
        }
        if (done.done()) {
          return;
        }
        try {
          Thread.sleep(java.util.concurrent.ThreadLocalRandom.current().nextLong(10, 50) * attempt);
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          e.addSuppressed(interrupted);
          throw e;
        }
      }
    }
  }

  private static boolean concurrentDdl(SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException sql && sql.getSQLState() != null
          && CONCURRENT_DDL_STATES.contains(sql.getSQLState())) {
        return true;
      }
    }
    return false;
  }

  /** The columns the table has in the sink, lower-case (from an empty query's metadata, the same on every sink). */
  private java.util.Set<String> existingColumns(ProvenanceTable table) throws SQLException {
    java.util.Set<String> names = new java.util.HashSet<>();
    try {
      dialect.beginTransaction(connection, seconds(timeout));
      try (Statement statement = dialect.createStatement(connection, seconds(timeout));
           java.sql.ResultSet rs = statement.executeQuery("SELECT * FROM " + dialect.quote(table.name())
               + " WHERE 1 = 0")) {
        java.sql.ResultSetMetaData meta = rs.getMetaData();
        for (int i = 1; i <= meta.getColumnCount(); i++) {
          names.add(meta.getColumnName(i).toLowerCase(java.util.Locale.ROOT));
        }
      }
      connection.commit();
    } catch (SQLException e) {
      rollbackAfterFailure(e);
      throw new SQLException("cannot read the columns of provenance table " + table.name() + " in " + url() + ": "
          + e.getMessage(), e.getSQLState(), e);
    }
    return names;
  }

  /** Creates or replaces a view ({@code ddl} is a complete {@code CREATE OR REPLACE VIEW} statement). */
  public void ensureView(String ddl) throws SQLException {
    executeConcurrentDdl(ddl, "a provenance view", () -> false);
  }

  /**
   * Per DuckDB file (its URL), the lock DDL takes: DuckDB lets one process open a file, so every writer to it is in
   * this JVM, and two connections creating the same table at once fail one with "Catalog write-write conflict" (no
   * SQL state to retry on; the demo printed it when two loaders started together).
   */
  private static final java.util.concurrent.ConcurrentHashMap<String, Object> DUCKDB_DDL_LOCKS =
      new java.util.concurrent.ConcurrentHashMap<>();

  /** Runs one DDL statement in a transaction of its own; the failure names {@code what} and the URL. */
  private void executeDdl(String ddl, String what) throws SQLException {
    if (dialect == SinkDialect.DUCKDB) {
      synchronized (DUCKDB_DDL_LOCKS.computeIfAbsent(url(), k -> new Object())) {
        executeDdlNow(ddl, what);
      }
    } else {
      executeDdlNow(ddl, what);
    }
  }

  private void executeDdlNow(String ddl, String what) throws SQLException {
    long started = System.nanoTime();
    try {
      dialect.beginTransaction(connection, seconds(timeout));
      try (Statement statement = dialect.createStatement(connection, seconds(timeout))) {
        statement.execute(ddl);
      }
      connection.commit();
    } catch (SQLException e) {
      rollbackAfterFailure(e);
      throw failure("cannot create " + what + " in " + url() + " (" + ddl + ")", e, started, false, timeout);
    }
  }

  /**
   * Loads rows into a table in one transaction, skipping every row whose key is already present (and all but the
   * first of rows sharing a key within the batch). The table must exist ({@link #ensureTable}).
   *
   * @param rows rows of {@code table}, values in its column order
   * @return how many rows were added, or -1 if the database does not say
   * @throws IllegalArgumentException if a row does not fit the table (wrong table, column count, Java type, or a
   *     null key value)
   * @throws SQLException naming the table and URL; nothing of the batch was loaded
   */
  public int load(ProvenanceTable table, List<ProvenanceRow> rows) throws SQLException {
    checkRows(table, rows);
    return loadChecked(table, rows, false);
  }

  /**
   * Loads rows that were never loaded into this sink before, by any attempt of anyone (all but the first of rows
   * sharing a key within the batch are skipped): DuckDB appends them without looking for their keys. Rows that a
   * failed attempt may have committed, or that a crashed process may have loaded, go through {@link #load}.
   *
   * @throws IllegalArgumentException as {@link #load} does
   * @throws SQLException as {@link #load} does
   */
  public void append(ProvenanceTable table, List<ProvenanceRow> rows) throws SQLException {
    checkRows(table, rows);
    loadChecked(table, rows, true);
  }

  private static void checkRows(ProvenanceTable table, List<ProvenanceRow> rows) {
    checkTable(table);
    for (ProvenanceRow row : rows) {
      checkRow(table, row);
    }
  }

  /**
   * {@link #load} ({@code fresh}: {@link #append}) of rows already checked against {@code table} ({@link #checkRow}):
   * the spooler checks rows when it takes them, and checking them again here cost its loader about a third of its
   * time (JFR).
   *
   * @return how many rows were added, or -1 if the database does not say (always -1 for {@code fresh} rows)
   */
  int loadChecked(ProvenanceTable table, List<ProvenanceRow> rows, boolean fresh) throws SQLException {
    if (rows.isEmpty()) {
      return 0;
    }
    List<ProvenanceRow> distinct = distinctKeys(table, rows);
    long started = System.nanoTime();
    try {
      int queryTimeout = seconds(timeout);
      Set<String> inSink = sinkColumns.get(table.name());
      if (inSink != null && inSink.size() != table.columns().size()) {
        // An older layout (rows from spill files written before the table gained a column): never appended
        // straight into the table, whose columns it does not match, but staged and inserted by column name.
        conflicts.put(SinkDialect.stagingName(table), Integer.MAX_VALUE);
      }
      dialect.prepareLoad(connection, table, prepared, queryTimeout); // may commit (Vertica's DDL)
      dialect.beginTransaction(connection, queryTimeout);
      int added = -1;
      if (fresh) {
        dialect.append(connection, table, distinct, queryTimeout, conflicts);
      } else {
        added = dialect.load(connection, table, distinct, queryTimeout);
      }
      connection.commit();
      return added;
    } catch (SQLException e) {
      rollbackAfterFailure(e);
      throw failure("cannot load " + rows.size() + " rows into provenance table " + table.name() + " in " + url(),
          e, started, false, timeout);
    } catch (AssertionError e) {
      // With assertions enabled, pgjdbc 42.7 reports a connection that broke mid-batch (as a socket timeout breaks
      // it) as this error instead of an SQLException (pgjdbc issues 1458 and 3180).
      if (!fromDriver(e)) {
        throw e;
      }
      SQLException broken = new SQLException("the connection broke during the batch (pgjdbc: " + e.getMessage()
          + (e.getCause() == null ? "" : ": " + e.getCause().getMessage()) + ")", CONNECTION_FAILURE, e);
      rollbackAfterFailure(broken);
      throw failure("cannot load " + rows.size() + " rows into provenance table " + table.name() + " in " + url(),
          broken, started, false, timeout);
    }
  }

  /**
   * {@link #append} ({@code fresh}) or {@link #load} of rows already checked against {@code table}, as a
   * {@link ProvenanceSpooler} checks them when they are offered; rows from anywhere else go through those two.
   */
  @Override
  public int loadBatch(ProvenanceTable table, List<ProvenanceRow> rows, boolean fresh) throws SQLException {
    return loadChecked(table, rows, fresh);
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
    int[] keyIndexes = new int[table.key().size()];
    for (int i = 0; i < keyIndexes.length; i++) {
      keyIndexes[i] = table.indexOf(table.key().get(i));
    }
    Set<Object> seen = new HashSet<>(Math.max(16, rows.size() * 2));
    List<ProvenanceRow> distinct = new ArrayList<>(rows.size());
    for (ProvenanceRow row : rows) {
      List<Object> values = row.values();
      Object key;
      if (keyIndexes.length == 1) { // most tables: one value is the key, no list needed
        key = comparable(values.get(keyIndexes[0]));
      } else {
        Object[] parts = new Object[keyIndexes.length];
        for (int i = 0; i < parts.length; i++) {
          parts[i] = comparable(values.get(keyIndexes[i]));
        }
        key = Arrays.asList(parts);
      }
      if (seen.add(key)) {
        distinct.add(row);
      }
    }
    return distinct;
  }

  /** A key value that compares by content: arrays compare by identity. */
  private static Object comparable(Object value) {
    return value instanceof byte[] bytes ? ByteBuffer.wrap(bytes) : value;
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

  private static void checkTimeout(Duration timeout) {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isZero() || timeout.isNegative()) {
      throw new IllegalArgumentException("the provenance sink timeout must be positive, not " + timeout);
    }
  }

  /** A timeout in whole seconds, rounded up, as JDBC query timeouts and most drivers' properties take it. */
  static int seconds(Duration timeout) {
    long millis = timeout.toMillis();
    return (int) Math.min(Integer.MAX_VALUE, (millis + 999) / 1000);
  }

  /**
   * The exception for a failed operation that started at {@code startedNanos}: a {@link SQLTimeoutException} naming
   * the timeout if the timeout ended it, else a plain {@link SQLException}; both name {@code what}.
   */
  static SQLException failure(String what, SQLException e, long startedNanos, boolean connecting, Duration timeout) {
    if (timedOut(e, System.nanoTime() - startedNanos >= timeout.toNanos(), connecting)) {
      return new SQLTimeoutException(what + ": timed out, the database did not answer within the sink timeout of "
          + describe(timeout) + " (" + describe(e) + ")", e.getSQLState(), e.getErrorCode(), e);
    }
    return new SQLException(what + ": " + describe(e), e.getSQLState(), e.getErrorCode(), e);
  }

  /**
   * Whether a timeout ended an operation: the driver says so (a socket read timed out, or a
   * {@link SQLTimeoutException}), or the operation lasted the whole timeout and failed the way an expired timeout
   * does without saying so: PostgreSQL cancels a statement past its statement timeout as {@code query_canceled},
   * pgjdbc reports an expired login timeout as a plain connection failure, and a socket timeout closes the
   * connection, which later calls report as closed.
   */
  private static boolean timedOut(SQLException e, boolean tookTheTimeout, boolean connecting) {
    if (tookTheTimeout && connecting) {
      return true;
    }
    Set<Throwable> seen = new HashSet<>();
    List<Throwable> pending = new ArrayList<>(List.of(e));
    while (!pending.isEmpty()) {
      Throwable t = pending.remove(pending.size() - 1);
      if (t == null || !seen.add(t)) {
        continue;
      }
      if (t instanceof SQLTimeoutException || t instanceof java.net.SocketTimeoutException) {
        return true;
      }
      if (t instanceof SQLException sql) {
        String state = sql.getSQLState();
        if (tookTheTimeout && state != null && (state.equals(QUERY_CANCELED) || state.startsWith("08"))) {
          return true;
        }
        pending.add(sql.getNextException());
      }
      pending.add(t.getCause());
    }
    return false;
  }

  private static boolean fromDriver(AssertionError e) {
    StackTraceElement[] frames = e.getStackTrace();
    return frames.length > 0 && frames[0].getClassName().startsWith("org.postgresql.");
  }

  /** A duration for messages: {@code 30 s}, or {@code 1500 ms} when not whole seconds. */
  static String describe(Duration timeout) {
    long millis = timeout.toMillis();
    return millis % 1000 == 0 ? millis / 1000 + " s" : millis + " ms";
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

  /** {@code jdbcUrl} with any password parameter masked, for messages and pages. */
  public static String redact(String jdbcUrl) {
    return SECRET.matcher(jdbcUrl).replaceAll("$1=***");
  }
}
