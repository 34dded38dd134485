package org.apiary.provenance;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLTimeoutException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * The provenance queries of the paper (section 6.3), over the tables a {@link ProvenanceSink} fills, on a JDBC
 * connection the caller owns: DuckDB, PostgreSQL or Vertica. Each query is plain SQL that runs unchanged on all
 * three.
 *
 * <p>Tables are named by {@link ProvenanceTable} descriptions ({@link ProvenanceSchema#eventsTable}, or
 * {@link #describeEventsTable} to read one from the database); their names and column names are checked to be plain
 * identifiers before they appear in SQL. Every value a caller gives (record keys, execution IDs, function names,
 * times) is bound as a statement parameter, never written into the SQL text.
 *
 * <p>A record key is a map from column name (case-insensitive) to value. For an events table with a
 * {@link ProvenanceTable#recordKey() record key} it must name exactly those columns; otherwise any application
 * columns, which then identify the record. A value is the column's Java type as {@link ColumnType} lists it (any
 * integral {@code Long}, {@code Integer}, {@code Short} or {@code Byte} for the integer types), or its text, parsed
 * for the column's type ({@code 42}, {@code 1.5}, {@code 2024-03-01T12:00:00Z}, hex digits for VARBINARY). Returned
 * values have the Java types {@link ColumnType} lists; TIMESTAMP values are {@link Instant}s (UTC).
 *
 * <p><b>Bounds.</b> Every statement has a timeout ({@link #DEFAULT_QUERY_TIMEOUT} unless the constructor says
 * otherwise): PostgreSQL and Vertica enforce it through their drivers, in whole seconds (rounded up); on DuckDB,
 * whose driver ignores statement timeouts, the statement is cancelled when it passes. A statement that passes it
 * fails with {@link SQLTimeoutException}. A statement that returns more than {@code maxRows} rows fails rather than
 * return a truncated answer.
 *
 * <p><b>Transactions.</b> Statements run in the connection's current mode; this class never commits or rolls back.
 * On PostgreSQL and DuckDB, a failed (or timed-out) statement on a connection that is not in auto-commit mode aborts
 * its transaction: roll back before the next query. {@link #readsOutside} creates and drops a temporary table; on
 * Vertica that DDL commits the connection's open transaction.
 *
 * <p>Not thread-safe, like the connection it uses.
 */
public final class ProvenanceQueries {
  /** The statement timeout of {@link #ProvenanceQueries(Connection)}: 60 seconds. */
  public static final Duration DEFAULT_QUERY_TIMEOUT = Duration.ofSeconds(60);
  /** The row limit of {@link #ProvenanceQueries(Connection)}: 1,000,000 rows per statement. */
  public static final int DEFAULT_MAX_ROWS = 1_000_000;

  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  private static final Set<String> EVENT_COLUMNS = Set.copyOf(ProvenanceSchema.EVENT_COLUMNS);
  /** The order of one record's events (see {@link ProvenanceSchema#EVENT_ORDER}). */
  public static final String EVENT_ORDER = ProvenanceSchema.EVENT_ORDER;
  private static final String WRITE_TYPES = "('" + ProvenanceSchema.INSERT + "', '" + ProvenanceSchema.UPDATE
      + "', '" + ProvenanceSchema.DELETE + "')";
  private static final String READ_TYPE = "'" + ProvenanceSchema.READ + "'";
  private static final String INVOCATIONS = quote(ProvenanceSchema.FUNCTION_INVOCATIONS);
  private static final DateTimeFormatter TIMESTAMP_TEXT = DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss.SSSSSS",
      Locale.ROOT);
  private static final int INSERT_BATCH = 1000;
  private static final String EVENTS_SUFFIX = "events";
  /** The prefix of the staging tables a sink may keep (see SinkDialect.stagingName). */
  private static final String STAGING_PREFIX = "apiary_stage_";

  private final Connection connection;
  private final Duration queryTimeout;
  private final int maxRows;
  /** How TIMESTAMP values are read and bound, and whether timeouts need cancelling here (DuckDB). */
  private final SinkDialect dialect;

  /**
   * Queries over a connection with the {@link #DEFAULT_QUERY_TIMEOUT default timeout} and
   * {@link #DEFAULT_MAX_ROWS row limit}.
   *
   * @param connection an open connection to the analytical database; the caller keeps owning (and closes) it
   * @throws SQLException if the connection's metadata cannot be read
   */
  public ProvenanceQueries(Connection connection) throws SQLException {
    this(connection, DEFAULT_QUERY_TIMEOUT, DEFAULT_MAX_ROWS);
  }

  /**
   * Queries over a connection with a timeout and row limit of their own.
   *
   * @param connection an open connection to DuckDB, PostgreSQL or Vertica (another database is treated as
   *     PostgreSQL); the caller keeps owning (and closes) it
   * @param queryTimeout how long one statement may run, results included; positive
   * @param maxRows the most rows one statement may return; a statement returning more fails; positive
   * @throws IllegalArgumentException if a bound is not positive
   * @throws SQLException if the connection's metadata cannot be read
   */
  public ProvenanceQueries(Connection connection, Duration queryTimeout, int maxRows) throws SQLException {
    this.connection = Objects.requireNonNull(connection, "connection");
    this.queryTimeout = Objects.requireNonNull(queryTimeout, "queryTimeout");
    if (queryTimeout.isZero() || queryTimeout.isNegative()) {
      throw new IllegalArgumentException("queryTimeout must be positive, not " + queryTimeout);
    }
    if (maxRows < 1) {
      throw new IllegalArgumentException("maxRows must be at least 1, not " + maxRows);
    }
    this.maxRows = maxRows;
    SinkDialect detected;
    try {
      detected = SinkDialect.forUrl(String.valueOf(connection.getMetaData().getURL()));
    } catch (IllegalArgumentException e) {
      detected = SinkDialect.POSTGRESQL;
    }
    this.dialect = detected;
  }

  /**
   * A record an execution wrote, as {@link #writtenByExecutionsThatRead} finds it.
   *
   * @param table the {@link ProvenanceTable#name() events table} holding the write
   * @param executionId the graph execution (invocation ID) the writing function belonged to
   * @param functionName the function that wrote
   * @param eventType {@code insert}, {@code update} or {@code delete}
   * @param key the written record's key: the events table's record key columns, or all its application columns if
   *     it has no record key; in column order
   * @param txId the write's {@code tx_id}: the writing transaction's position in the record's partition
   */
  public record WrittenRecord(String table, String executionId, String functionName, String eventType,
                              Map<String, Object> key, long txId) {
    public WrittenRecord {
      Objects.requireNonNull(table, "table");
      Objects.requireNonNull(eventType, "eventType");
      key = Collections.unmodifiableMap(new LinkedHashMap<>(key));
    }
  }

  /**
   * The state of a record as a graph execution read it (the paper's debugging query): the values of the last
   * insert or update of the record that came before the execution's first read of it.
   *
   * <p>"Before" is the partition's order ({@link ProvenanceSchema#EVENT_ORDER}): the read is the execution's read
   * event of the record that comes first by {@code (tx_id, exec_seq)} among reads on the record's partition; a write
   * comes before it if its {@code tx_id} is smaller, or equal and the read is a read-only execution that followed
   * that transaction ({@code exec_seq > 0}). Among the writes of one transaction the one with the largest
   * {@code event_seq} is the last. Writes by the reading transaction itself are not counted: capture does not order
   * a transaction's reads against its writes, so a function that writes a record and then reads it in one
   * transaction gets the state before that transaction. Writes are ordered the same way whether single- or
   * multi-partition transactions made them (export gives every write its partition's position).
   *
   * <p>SQL (keys bound once per use): first the read,
   * <pre>
   * SELECT r.tx_id, r.exec_seq, r.partition_id FROM &lt;events&gt; r JOIN FunctionInvocations f ON f.exec_id = r.exec_id
   * WHERE f.execution_id = ? AND r.event_type = 'read' AND r.&lt;key&gt; = ?
   * </pre>
   * (the first by {@code (tx_id, exec_seq)} whose {@code partition_id} is not {@value ProvenanceSchema#MULTI_PARTITION}),
   * then the last write before it:
   * <pre>
   * SELECT w.event_type, w.&lt;application columns&gt; FROM &lt;events&gt; w
   * WHERE w.&lt;key&gt; = ? AND w.event_type IN ('insert', 'update', 'delete') AND w.partition_id = ?
   *   AND (w.tx_id &lt; ? [OR w.tx_id = ?, if the read's exec_seq &gt; 0])
   * ORDER BY w.tx_id DESC, w.event_seq DESC LIMIT 1
   * </pre>
   *
   * @param events the record's events table
   * @param recordKey the record's key (see the class description)
   * @param executionId the graph execution
   * @return the record's application column values, in column order; empty if the execution never read the record,
   *     or no insert or update came before the read, or the last write before it was a delete
   * @throws IllegalArgumentException if the table or key is not valid, or the execution read the record only from
   *     global functions, whose reads capture has no position in the record's partition for
   * @throws SQLException if the query fails or times out
   */
  public Optional<Map<String, Object>> stateWhenRead(ProvenanceTable events, Map<String, Object> recordKey,
                                                     String executionId) throws SQLException {
    checkEventsTable(events);
    Map<ProvenanceColumn, Object> key = recordKey(events, recordKey);
    Objects.requireNonNull(executionId, "executionId");
    String table = quote(events.name());
    String txId = quote(ProvenanceSchema.TX_ID);
    String execSeq = quote(ProvenanceSchema.EXEC_SEQ);
    String partition = quote(ProvenanceSchema.PARTITION_ID);
    Sql read = new Sql().add("SELECT r.").add(txId).add(", r.").add(execSeq).add(", r.").add(partition)
        .add(" FROM ").add(table).add(" r JOIN ").add(INVOCATIONS).add(" f ON f.").add(quote(ProvenanceSchema.EXEC_ID))
        .add(" = r.").add(quote(ProvenanceSchema.EXEC_ID)).add(" WHERE f.").add(quote("execution_id")).add(" = ")
        .param(ColumnType.VARCHAR, executionId).add(" AND r.").add(quote(ProvenanceSchema.EVENT_TYPE)).add(" = ")
        .add(READ_TYPE).add(" AND ").keyMatch("r", key);
    List<long[]> reads = query(read, rs -> new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)});
    long[] first = reads.stream().filter(r -> r[2] != ProvenanceSchema.MULTI_PARTITION)
        .min(Comparator.<long[]>comparingLong(r -> r[0]).thenComparingLong(r -> r[1])).orElse(null);
    if (first == null) {
      if (!reads.isEmpty()) {
        throw new IllegalArgumentException("execution " + executionId + " read this record only from global "
            + "functions, whose reads are not ordered against the record's writes");
      }
      return Optional.empty();
    }
    Sql sql = new Sql().add("SELECT w.").add(quote(ProvenanceSchema.EVENT_TYPE));
    applicationColumns(events).forEach(c -> sql.add(", w.").add(quote(c.name())));
    sql.add(" FROM ").add(table).add(" w WHERE ").keyMatch("w", key)
        .add(" AND w.").add(quote(ProvenanceSchema.EVENT_TYPE)).add(" IN ").add(WRITE_TYPES)
        .add(" AND w.").add(partition).add(" = ").param(ColumnType.BIGINT, first[2])
        .add(" AND (w.").add(txId).add(" < ").param(ColumnType.BIGINT, first[0]);
    if (first[1] > 0) { // a read-only execution follows the writes of the transaction whose ID it was given
      sql.add(" OR w.").add(txId).add(" = ").param(ColumnType.BIGINT, first[0]);
    }
    sql.add(") ORDER BY w.").add(txId).add(" DESC, w.").add(quote(ProvenanceSchema.EVENT_SEQ)).add(" DESC LIMIT 1");
    return lastState(events, sql);
  }

  /**
   * The state of a record at a time (the paper's first query, which also answers "deleted"): the values of its last
   * insert or update with {@code event_time} at or before {@code time}, unless a delete came after it.
   *
   * <p>SQL:
   * <pre>
   * SELECT event_type, &lt;application columns&gt; FROM &lt;events&gt;
   * WHERE &lt;key&gt; = ? AND event_type IN ('insert', 'update', 'delete') AND event_time &lt;= CAST(? AS TIMESTAMP)
   * ORDER BY tx_id DESC, event_seq DESC LIMIT 1
   * </pre>
   * The last write is the last in the partition's order ({@link ProvenanceSchema#EVENT_ORDER}) among those with
   * {@code event_time} at or before the moment.
   * <pre>
   * </pre>
   *
   * @param events the record's events table
   * @param recordKey the record's key (see the class description)
   * @param time the moment; event times are stored in microseconds, so it is truncated to microseconds
   * @return the record's application column values, in column order; empty if the record did not exist then
   *     (never inserted yet, or deleted)
   * @throws IllegalArgumentException if the table or key is not valid
   * @throws SQLException if the query fails or times out
   */
  public Optional<Map<String, Object>> stateAt(ProvenanceTable events, Map<String, Object> recordKey, Instant time)
      throws SQLException {
    checkEventsTable(events);
    Map<ProvenanceColumn, Object> key = recordKey(events, recordKey);
    Objects.requireNonNull(time, "time");
    Sql sql = new Sql().add("SELECT w.").add(quote(ProvenanceSchema.EVENT_TYPE));
    applicationColumns(events).forEach(c -> sql.add(", w.").add(quote(c.name())));
    sql.add(" FROM ").add(quote(events.name())).add(" w WHERE ").keyMatch("w", key)
        .add(" AND w.").add(quote(ProvenanceSchema.EVENT_TYPE)).add(" IN ").add(WRITE_TYPES)
        .add(" AND w.").add(quote(ProvenanceSchema.EVENT_TIME)).add(" <= ").param(ColumnType.TIMESTAMP, time)
        .add(" ORDER BY w.").add(quote(ProvenanceSchema.TX_ID)).add(" DESC, w.").add(quote(ProvenanceSchema.EVENT_SEQ)).add(" DESC LIMIT 1");
    return lastState(events, sql);
  }

  /**
   * Every record written by a graph execution after it read a record (the paper's downstream query, for taint
   * tracking): for each execution with a read event of the record, every insert, update and delete, in any of the
   * given events tables, by a function of that execution that ran at the same time as or later than a function of
   * it that read the record.
   *
   * <p><b>"Later"</b> is decided by the {@code event_time} of the two functions' rows in {@code FunctionInvocations}
   * (their transactions' times), not by {@code tx_id}: functions of one graph run on different partitions, whose
   * transaction IDs are not ordered against each other. A write counts if its execution is an execution that read
   * the record (the same {@code exec_id}), or its function's {@code event_time} is greater than or equal to that of a function of the same
   * execution that read the record. Ties count, erring towards reporting a record: writes of the reading transaction
   * itself all count, even any that preceded the read within it; so do writes of a function of the same execution on
   * another partition whose transaction time equals the reading one's. This relies on the functions of a graph
   * running one after another, each transaction starting after the previous one committed.
   *
   * <p>SQL, once per events table {@code W} (the same write matched through several reads is reported once):
   * <pre>
   * SELECT fw.execution_id, fw.function_name, fw.event_time, w.event_type, w.tx_id, w.&lt;key of W&gt;,
   *        MIN(w.event_seq)
   * FROM W w JOIN FunctionInvocations fw ON fw.exec_id = &lt;w's writer: ProvenanceSchema.writerExecId("w")&gt;
   * JOIN (SELECT fr.execution_id, fr.exec_id, fr.event_time
   *       FROM &lt;readTable&gt; r JOIN FunctionInvocations fr ON fr.exec_id = r.exec_id
   *       WHERE r.event_type = 'read' AND r.&lt;key&gt; = ?) rd
   *   ON rd.execution_id = fw.execution_id AND (rd.exec_id = fw.exec_id OR fw.event_time &gt;= rd.event_time)
   * WHERE w.event_type IN ('insert', 'update', 'delete')
   * GROUP BY fw.execution_id, fw.function_name, fw.event_time, w.event_type, w.tx_id, w.&lt;key of W&gt;
   * </pre>
   *
   * @param allEventsTables the events tables to look for writes in (usually every events table of the application)
   * @param readTable the events table of the record that was read
   * @param recordKey the read record's key (see the class description)
   * @return one entry per written record, execution, transaction and event type (a transaction updating a record
   *     twice gives one entry), ordered by execution ID, then the writing function's time, transaction, the table's
   *     position in {@code allEventsTables} and the write's {@code event_seq}; empty if no execution read the record
   * @throws IllegalArgumentException if a table or the key is not valid, or a table is listed twice
   * @throws SQLException if a query fails or times out
   */
  public List<WrittenRecord> writtenByExecutionsThatRead(List<ProvenanceTable> allEventsTables,
                                                         ProvenanceTable readTable, Map<String, Object> recordKey)
      throws SQLException {
    checkEventsTable(readTable);
    Map<ProvenanceColumn, Object> key = recordKey(readTable, recordKey);
    Set<String> names = new HashSet<>();
    for (ProvenanceTable table : allEventsTables) {
      checkEventsTable(table);
      if (!names.add(table.name().toLowerCase(Locale.ROOT))) {
        throw new IllegalArgumentException("events table " + table.name() + " is listed twice");
      }
    }
    record Found(WrittenRecord record, Instant functionTime, int tableIndex, long firstSeq) {}
    List<Found> found = new ArrayList<>();
    String txId = quote(ProvenanceSchema.TX_ID);
    String execId = quote(ProvenanceSchema.EXEC_ID);
    String execution = quote("execution_id");
    String eventTime = quote(ProvenanceSchema.EVENT_TIME);
    String writer = writerExecId("w");
    for (int t = 0; t < allEventsTables.size(); t++) {
      ProvenanceTable written = allEventsTables.get(t);
      List<ProvenanceColumn> writtenKey = keyColumns(written);
      StringBuilder keyList = new StringBuilder();
      writtenKey.forEach(c -> keyList.append(", w.").append(quote(c.name())));
      String grouped = "fw." + execution + ", fw." + quote("function_name") + ", fw." + eventTime + ", w."
          + quote(ProvenanceSchema.EVENT_TYPE) + ", w." + txId + keyList;
      Sql sql = new Sql().add("SELECT ").add(grouped).add(", MIN(w.").add(quote(ProvenanceSchema.EVENT_SEQ))
          .add(") FROM ").add(quote(written.name())).add(" w JOIN ").add(INVOCATIONS).add(" fw ON fw.").add(execId)
          .add(" = ").add(writer).add(" JOIN (SELECT fr.").add(execution).add(", fr.").add(execId).add(", fr.")
          .add(eventTime).add(" FROM ").add(quote(readTable.name())).add(" r JOIN ").add(INVOCATIONS).add(" fr ON fr.")
          .add(execId).add(" = r.").add(execId).add(" WHERE r.").add(quote(ProvenanceSchema.EVENT_TYPE)).add(" = ")
          .add(READ_TYPE).add(" AND ").keyMatch("r", key).add(") rd ON rd.").add(execution).add(" = fw.")
          .add(execution).add(" AND (rd.").add(execId).add(" = fw.").add(execId).add(" OR fw.").add(eventTime)
          .add(" >= rd.").add(eventTime).add(") WHERE w.").add(quote(ProvenanceSchema.EVENT_TYPE)).add(" IN ")
          .add(WRITE_TYPES).add(" GROUP BY ").add(grouped);
      int tableIndex = t;
      found.addAll(query(sql, rs -> {
        Map<String, Object> writtenKeyValues = new LinkedHashMap<>();
        for (int i = 0; i < writtenKey.size(); i++) {
          writtenKeyValues.put(writtenKey.get(i).name(), read(rs, 6 + i, writtenKey.get(i).type()));
        }
        WrittenRecord record = new WrittenRecord(written.name(), rs.getString(1), rs.getString(2), rs.getString(4),
            writtenKeyValues, rs.getLong(5));
        return new Found(record, dialect.readTimestamp(rs, 3), tableIndex, rs.getLong(6 + writtenKey.size()));
      }));
    }
    found.sort(Comparator.comparing((Found f) -> f.record().executionId(),
            Comparator.nullsFirst(Comparator.naturalOrder()))
        .thenComparing(Found::functionTime, Comparator.nullsFirst(Comparator.naturalOrder()))
        .thenComparingLong(f -> f.record().txId())
        .thenComparingInt(Found::tableIndex)
        .thenComparingLong(Found::firstSeq));
    return found.stream().map(Found::record).toList();
  }

  /**
   * The records a function read that are not in an allowed set (the paper's auditing query): the distinct keys of
   * the events table's read events by transactions of the function, minus the allowed keys. The allowed keys go
   * into a temporary table (created and dropped by this call), which the read set is anti-joined with.
   *
   * <p>SQL:
   * <pre>
   * CREATE LOCAL TEMPORARY TABLE apiary_allowed_&lt;random&gt; ON COMMIT PRESERVE ROWS AS
   *   SELECT &lt;key&gt; FROM &lt;events&gt; WHERE 1 = 0
   * INSERT INTO apiary_allowed_&lt;random&gt; (&lt;key&gt;) VALUES (?)                  -- batched
   * SELECT DISTINCT e.&lt;key&gt; FROM &lt;events&gt; e JOIN FunctionInvocations f ON f.exec_id = e.exec_id
   * WHERE f.function_name = ? AND e.event_type = 'read'
   *   AND NOT EXISTS (SELECT 1 FROM apiary_allowed_&lt;random&gt; a WHERE a.&lt;key&gt; = e.&lt;key&gt;)
   * ORDER BY e.&lt;key&gt;
   * DROP TABLE apiary_allowed_&lt;random&gt;
   * </pre>
   *
   * @param events the events table; it must have a {@link ProvenanceTable#recordKey() record key}
   * @param functionName the function, as {@code FunctionInvocations.function_name} has it
   * @param allowedKeys the keys the function may read, each naming exactly the record key columns; may be empty
   * @return the keys read outside the allowed set, each in record key column order, ordered by the key columns as
   *     the database orders them; empty if the function read nothing else (or never ran)
   * @throws IllegalArgumentException if the table has no record key, or a key is not valid
   * @throws SQLException if a statement fails or times out
   */
  public List<Map<String, Object>> readsOutside(ProvenanceTable events, String functionName,
                                                Collection<Map<String, Object>> allowedKeys) throws SQLException {
    checkEventsTable(events);
    Objects.requireNonNull(functionName, "functionName");
    if (events.recordKey().isEmpty()) {
      throw new IllegalArgumentException("events table " + events.name() + " has no record key; describe it with "
          + "the key columns of its application table");
    }
    List<ProvenanceColumn> keyColumns = keyColumns(events);
    Set<List<Object>> allowed = new LinkedHashSet<>();
    for (Map<String, Object> allowedKey : allowedKeys) {
      List<Object> values = new ArrayList<>(recordKey(events, allowedKey).values());
      allowed.add(values.stream().map(v -> v instanceof byte[] bytes ? ByteBuffer.wrap(bytes) : v).toList());
    }
    String temp = quote("apiary_allowed_" + Long.toHexString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE));
    StringBuilder columns = new StringBuilder();
    for (ProvenanceColumn c : keyColumns) {
      columns.append(columns.length() == 0 ? "" : ", ").append(quote(c.name()));
    }
    String create = "CREATE LOCAL TEMPORARY TABLE " + temp + " ON COMMIT PRESERVE ROWS AS SELECT " + columns
        + " FROM " + quote(events.name()) + " WHERE 1 = 0";
    update(create);
    SQLException failure = null;
    try {
      insertAllowed(temp, keyColumns, columns.toString(), allowed);
      Sql sql = new Sql().add("SELECT DISTINCT ");
      for (int i = 0; i < keyColumns.size(); i++) {
        sql.add(i == 0 ? "e." : ", e.").add(quote(keyColumns.get(i).name()));
      }
      sql.add(" FROM ").add(quote(events.name())).add(" e JOIN ").add(INVOCATIONS).add(" f ON f.")
          .add(quote(ProvenanceSchema.EXEC_ID)).add(" = e.").add(quote(ProvenanceSchema.EXEC_ID)).add(" WHERE f.")
          .add(quote("function_name")).add(" = ").param(ColumnType.VARCHAR, functionName).add(" AND e.")
          .add(quote(ProvenanceSchema.EVENT_TYPE)).add(" = ").add(READ_TYPE).add(" AND NOT EXISTS (SELECT 1 FROM ")
          .add(temp).add(" a WHERE ");
      for (int i = 0; i < keyColumns.size(); i++) {
        String column = quote(keyColumns.get(i).name());
        sql.add(i == 0 ? "" : " AND ").add("a.").add(column).add(" = e.").add(column);
      }
      sql.add(") ORDER BY ");
      for (int i = 0; i < keyColumns.size(); i++) {
        sql.add(i == 0 ? "e." : ", e.").add(quote(keyColumns.get(i).name()));
      }
      return query(sql, rs -> {
        Map<String, Object> key = new LinkedHashMap<>();
        for (int i = 0; i < keyColumns.size(); i++) {
          key.put(keyColumns.get(i).name(), read(rs, i + 1, keyColumns.get(i).type()));
        }
        return Collections.unmodifiableMap(key);
      });
    } catch (SQLException e) {
      failure = e;
      throw e;
    } finally {
      try {
        update("DROP TABLE " + temp);
      } catch (SQLException e) {
        if (failure == null) {
          throw e;
        }
        failure.addSuppressed(e);
      }
    }
  }

  /**
   * One read of a record by a function execution, with who called the graph and for which purpose (the audit
   * queries {@link #readsOfRecord} and {@link #readsOutsidePurposes}).
   *
   * @param eventTime the reading transaction's time
   * @param executionId the graph execution (invocation ID)
   * @param graph the graph, or {@code null} for a direct function call
   * @param function the function that read
   * @param caller who called: the API key's identity on a frontend that requires credentials, else what the client
   *     said, or {@code null}
   * @param purpose the data-use purpose the call stated, or {@code null} (none, or captured before purposes were)
   * @param callerRoles the caller's roles when it called, sorted and comma-separated, or {@code null} (none)
   * @param key the record read: the events table's record key columns, in column order
   */
  public record RecordRead(Instant eventTime, String executionId, String graph, String function, String caller,
                           String purpose, String callerRoles, Map<String, Object> key) {
    public RecordRead {
      key = Collections.unmodifiableMap(new LinkedHashMap<>(key));
    }
  }

  /**
   * A call a frontend refused by its graph's access policy, as {@code DeniedCalls} holds it: nothing of it ran.
   *
   * @param deniedAt when it was recorded (the database's transaction time, right after the refusal)
   * @param invocationId the invocation ID the client sent
   * @param caller who called (as in {@link RecordRead#caller()}), or {@code null}
   * @param graph the graph called
   * @param purpose the purpose the call stated, or {@code null}
   * @param reason what the client was told: the roles or purposes the policy allows and what the call lacked
   * @param callerRoles the caller's roles, sorted and comma-separated, or {@code null} (none)
   */
  public record DeniedCall(Instant deniedAt, String invocationId, String caller, String graph, String purpose,
                           String reason, String callerRoles) {}

  /** The most callers or purposes one audit query takes (each is a bound parameter). */
  public static final int MAX_AUDIT_NAMES = 1000;

  /**
   * Who read a record, and for which purpose (audit): every read event of the record, with the execution, graph,
   * function, caller and stated purpose of the function execution that read it, in the record's order
   * ({@link ProvenanceSchema#EVENT_ORDER}). One row per read event: an execution that read the record twice appears
   * twice. Only rows a query returned are reads (see docs/provenance.md); reads by functions whose provenance level
   * captures none are not here.
   *
   * <p>SQL:
   * <pre>
   * SELECT e.event_time, f.execution_id, f.graph_id, f.function_name, f.caller, f.purpose, f.caller_roles,
   *        e.&lt;key&gt;
   * FROM &lt;events&gt; e JOIN FunctionInvocations f ON f.exec_id = e.exec_id
   * WHERE e.event_type = 'read' AND e.&lt;key&gt; = ?
   * ORDER BY e.tx_id, e.exec_seq, e.event_seq
   * </pre>
   *
   * @param events the record's events table; it must have a {@link ProvenanceTable#recordKey() record key}
   * @param recordKey the record's key (see the class description)
   * @throws IllegalArgumentException if the table or key is not valid
   * @throws SQLException if the query fails or times out
   */
  public List<RecordRead> readsOfRecord(ProvenanceTable events, Map<String, Object> recordKey) throws SQLException {
    checkEventsTable(events);
    Map<ProvenanceColumn, Object> key = recordKey(events, recordKey);
    Sql sql = readsSelect(events).add(" AND ").keyMatch("e", key).add(" ORDER BY ").add(qualifiedEventOrder());
    return query(sql, rs -> recordRead(rs, events));
  }

  /**
   * The versions of a record: every insert, update and delete of it, in the record's order, each with its writer
   * ({@code execution_id} and {@code function_name} of the function execution that wrote it, null where the sink has
   * no {@code FunctionInvocations} row for it) and the values it wrote.
   *
   * <p>SQL:
   * <pre>
   * SELECT w.event_time, w.event_type, w.tx_id, f.execution_id, f.function_name, w.&lt;application columns&gt;
   * FROM &lt;events&gt; w LEFT JOIN FunctionInvocations f ON f.exec_id = &lt;ProvenanceSchema.writerExecId("w")&gt;
   * WHERE w.event_type IN ('insert', 'update', 'delete') AND w.&lt;key&gt; = ?
   * ORDER BY w.tx_id, w.exec_seq, w.event_seq
   * </pre>
   *
   * @param events the record's events table; it must have a {@link ProvenanceTable#recordKey() record key}
   * @param recordKey the record's key (see the class description)
   * @throws IllegalArgumentException if the table or key is not valid
   * @throws SQLException if the query fails or times out
   */
  public List<Map<String, Object>> versionsOfRecord(ProvenanceTable events, Map<String, Object> recordKey)
      throws SQLException {
    checkEventsTable(events);
    Map<ProvenanceColumn, Object> key = recordKey(events, recordKey);
    List<ProvenanceColumn> columns = applicationColumns(events);
    Sql sql = new Sql().add("SELECT w.").add(quote(ProvenanceSchema.EVENT_TIME)).add(", w.")
        .add(quote(ProvenanceSchema.EVENT_TYPE)).add(", w.").add(quote(ProvenanceSchema.TX_ID)).add(", f.")
        .add(quote("execution_id")).add(", f.").add(quote("function_name"));
    columns.forEach(c -> sql.add(", w.").add(quote(c.name())));
    sql.add(" FROM ").add(quote(events.name())).add(" w LEFT JOIN ").add(INVOCATIONS).add(" f ON f.")
        .add(quote(ProvenanceSchema.EXEC_ID)).add(" = ").add(writerExecId("w")).add(" WHERE ").keyMatch("w", key)
        .add(" AND w.").add(quote(ProvenanceSchema.EVENT_TYPE)).add(" IN ").add(WRITE_TYPES).add(" ORDER BY w.")
        .add(quote(ProvenanceSchema.TX_ID)).add(", w.").add(quote(ProvenanceSchema.EXEC_SEQ)).add(", w.")
        .add(quote(ProvenanceSchema.EVENT_SEQ));
    return query(sql, rs -> {
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("event_time", dialect.readTimestamp(rs, 1));
      row.put("event_type", rs.getString(2));
      row.put("tx_id", rs.getLong(3));
      row.put("execution_id", rs.getString(4));
      row.put("function", rs.getString(5));
      for (int i = 0; i < columns.size(); i++) {
        row.put(columns.get(i).name(), read(rs, i + 6, columns.get(i).type()));
      }
      return Collections.unmodifiableMap(row);
    });
  }

  /**
   * Reads outside allowed purposes (audit): every read event of the table by an execution whose caller is one of
   * {@code callers} and whose stated purpose is not one of {@code allowedPurposes}; a read with no purpose counts
   * as outside. To ask about a role, use {@link #readsByRoleOutsidePurposes}; to ask about a graph's policy, pass its
   * purposes. Ordered by the record key, then the record's order.
   *
   * <p>SQL:
   * <pre>
   * SELECT e.event_time, f.execution_id, f.graph_id, f.function_name, f.caller, f.purpose, f.caller_roles,
   *        e.&lt;key&gt;
   * FROM &lt;events&gt; e JOIN FunctionInvocations f ON f.exec_id = e.exec_id
   * WHERE e.event_type = 'read' [AND f.caller IN (?, ...)]
   *   AND (f.purpose IS NULL OR f.purpose NOT IN (?, ...))
   * ORDER BY e.&lt;key&gt;, e.tx_id, e.exec_seq, e.event_seq
   * </pre>
   *
   * @param events the events table; it must have a {@link ProvenanceTable#recordKey() record key}
   * @param callers the callers to look at; empty for every caller (including anonymous ones)
   * @param allowedPurposes the purposes allowed; empty: every read is outside
   * @throws IllegalArgumentException if the table is not valid, or a list has more than {@link #MAX_AUDIT_NAMES}
   *     names or a null
   * @throws SQLException if the query fails or times out
   */
  public List<RecordRead> readsOutsidePurposes(ProvenanceTable events, Collection<String> callers,
                                               Collection<String> allowedPurposes) throws SQLException {
    checkEventsTable(events);
    if (events.recordKey().isEmpty()) {
      throw new IllegalArgumentException("events table " + events.name() + " has no record key; describe it with "
          + "the key columns of its application table");
    }
    List<String> who = auditNames(callers, "callers");
    Sql sql = readsSelect(events);
    if (!who.isEmpty()) {
      sql.add(" AND f.").add(quote("caller")).add(" IN (");
      for (int i = 0; i < who.size(); i++) {
        sql.add(i == 0 ? "" : ", ").param(ColumnType.VARCHAR, who.get(i));
      }
      sql.add(")");
    }
    return outsidePurposes(events, sql, allowedPurposes);
  }

  /**
   * Reads by a role outside its allowed purposes (audit): every read event of the table by an execution whose caller
   * had {@code role} when it called ({@code FunctionInvocations.caller_roles}, recorded from the API key) and whose
   * stated purpose is not one of {@code allowedPurposes}; a read with no purpose counts as outside. Calls by keys
   * with the {@code admin} role pass every policy, so asking about that role lists what administrators
   * read outside the purposes. Ordered as {@link #readsOutsidePurposes}.
   *
   * <p>SQL: as {@link #readsOutsidePurposes}, with the callers' condition
   * {@code AND (',' || f.caller_roles || ',') LIKE ? ESCAPE '!'} bound to {@code %,<role>,%}.
   *
   * @param events the events table; it must have a {@link ProvenanceTable#recordKey() record key}
   * @param role the role
   * @param allowedPurposes the purposes allowed; empty: every read by the role is outside
   * @throws IllegalArgumentException if the table is not valid, or the list has more than {@link #MAX_AUDIT_NAMES}
   *     names or a null
   * @throws SQLException if the query fails or times out
   */
  public List<RecordRead> readsByRoleOutsidePurposes(ProvenanceTable events, String role,
                                                     Collection<String> allowedPurposes) throws SQLException {
    checkEventsTable(events);
    Objects.requireNonNull(role, "role");
    if (role.isEmpty() || role.contains(",")) {
      throw new IllegalArgumentException("a role is a non-empty name without ',', not '" + role + "'");
    }
    String pattern = "%," + role.replace("!", "!!").replace("%", "!%").replace("_", "!_") + ",%";
    Sql sql = readsSelect(events).add(" AND (',' || f.").add(quote("caller_roles")).add(" || ',') LIKE ")
        .param(ColumnType.VARCHAR, pattern).add(" ESCAPE '!'");
    return outsidePurposes(events, sql, allowedPurposes);
  }

  private List<RecordRead> outsidePurposes(ProvenanceTable events, Sql sql, Collection<String> allowedPurposes)
      throws SQLException {
    if (events.recordKey().isEmpty()) {
      throw new IllegalArgumentException("events table " + events.name() + " has no record key; describe it with "
          + "the key columns of its application table");
    }
    List<String> allowed = auditNames(allowedPurposes, "allowedPurposes");
    if (!allowed.isEmpty()) {
      sql.add(" AND (f.").add(quote("purpose")).add(" IS NULL OR f.").add(quote("purpose")).add(" NOT IN (");
      for (int i = 0; i < allowed.size(); i++) {
        sql.add(i == 0 ? "" : ", ").param(ColumnType.VARCHAR, allowed.get(i));
      }
      sql.add("))");
    }
    sql.add(" ORDER BY ");
    for (ProvenanceColumn c : keyColumns(events)) {
      sql.add("e.").add(quote(c.name())).add(", ");
    }
    sql.add(qualifiedEventOrder());
    return query(sql, rs -> recordRead(rs, events));
  }

  /**
   * Calls refused by access policies in a period (audit): the rows of {@code DeniedCalls} with {@code denied_at} at
   * or after {@code from} and before {@code to}, oldest first. Empty if no call was ever refused (the table is created
   * with the first refusal's row, or when the sink is first opened by this version).
   *
   * <p>SQL:
   * <pre>
   * SELECT denied_at, invocation_id, caller, graph, purpose, reason, caller_roles FROM DeniedCalls
   * WHERE denied_at &gt;= CAST(? AS TIMESTAMP) AND denied_at &lt; CAST(? AS TIMESTAMP)
   * ORDER BY denied_at, denial_id
   * </pre>
   *
   * @param from the period's start (inclusive), truncated to microseconds
   * @param to the period's end (exclusive), truncated to microseconds
   * @throws SQLException if the query fails or times out
   */
  public List<DeniedCall> deniedCalls(Instant from, Instant to) throws SQLException {
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(to, "to");
    if (readColumns(ProvenanceSchema.DENIED_CALLS, currentSchema()).isEmpty()) {
      return List.of();
    }
    Sql sql = new Sql().add("SELECT ").add(quote("denied_at")).add(", ").add(quote("invocation_id")).add(", ")
        .add(quote("caller")).add(", ").add(quote("graph")).add(", ").add(quote("purpose")).add(", ")
        .add(quote("reason")).add(", ").add(quote("caller_roles")).add(" FROM ").add(quote(ProvenanceSchema.DENIED_CALLS)).add(" WHERE ")
        .add(quote("denied_at")).add(" >= ").param(ColumnType.TIMESTAMP, from.truncatedTo(ChronoUnit.MICROS))
        .add(" AND ").add(quote("denied_at")).add(" < ").param(ColumnType.TIMESTAMP, to.truncatedTo(ChronoUnit.MICROS))
        .add(" ORDER BY ").add(quote("denied_at")).add(", ").add(quote("denial_id"));
    return query(sql, rs -> new DeniedCall(dialect.readTimestamp(rs, 1), rs.getString(2), rs.getString(3),
        rs.getString(4), rs.getString(5), rs.getString(6), rs.getString(7)));
  }

  /** The select of read events joined to their executions, up to its WHERE clause's first condition. */
  private static Sql readsSelect(ProvenanceTable events) {
    Sql sql = new Sql().add("SELECT e.").add(quote(ProvenanceSchema.EVENT_TIME));
    for (String column : List.of("execution_id", "graph_id", "function_name", "caller", "purpose", "caller_roles")) {
      sql.add(", f.").add(quote(column));
    }
    for (ProvenanceColumn c : keyColumns(events)) {
      sql.add(", e.").add(quote(c.name()));
    }
    return sql.add(" FROM ").add(quote(events.name())).add(" e JOIN ").add(INVOCATIONS).add(" f ON f.")
        .add(quote(ProvenanceSchema.EXEC_ID)).add(" = e.").add(quote(ProvenanceSchema.EXEC_ID)).add(" WHERE e.")
        .add(quote(ProvenanceSchema.EVENT_TYPE)).add(" = ").add(READ_TYPE);
  }

  /** {@link ProvenanceSchema#EVENT_ORDER} over alias {@code e}, with quoted columns. */
  private static String qualifiedEventOrder() {
    return "e." + quote(ProvenanceSchema.TX_ID) + ", e." + quote(ProvenanceSchema.EXEC_SEQ) + ", CASE WHEN e."
        + quote(ProvenanceSchema.EVENT_TYPE) + " = " + READ_TYPE + " THEN 0 ELSE 1 END, e."
        + quote(ProvenanceSchema.EVENT_SEQ);
  }

  private RecordRead recordRead(ResultSet rs, ProvenanceTable events) throws SQLException {
    Map<String, Object> key = new LinkedHashMap<>();
    List<ProvenanceColumn> keyColumns = keyColumns(events);
    for (int i = 0; i < keyColumns.size(); i++) {
      key.put(keyColumns.get(i).name(), read(rs, 8 + i, keyColumns.get(i).type()));
    }
    return new RecordRead(dialect.readTimestamp(rs, 1), rs.getString(2), rs.getString(3), rs.getString(4),
        rs.getString(5), rs.getString(6), rs.getString(7), key);
  }

  private static List<String> auditNames(Collection<String> names, String what) {
    Objects.requireNonNull(names, what);
    if (names.size() > MAX_AUDIT_NAMES) {
      throw new IllegalArgumentException(what + " has " + names.size() + " names; one query takes at most "
          + MAX_AUDIT_NAMES);
    }
    List<String> list = new ArrayList<>(new TreeSet<>(names)); // TreeSet refuses a null with NullPointerException
    return list;
  }

  /**
   * Runs any query, for what the methods above do not answer.
   *
   * @param query SQL with {@code ?} placeholders; it is sent as given, so it must not contain untrusted text
   * @param params the placeholders' values, bound with {@code setObject}, except {@code null} (SQL NULL) and
   *     {@link Instant} (bound as a UTC TIMESTAMP, the way provenance tables hold times)
   * @return one map per row, column label to value, in column order; TIMESTAMP columns as {@link Instant}s (UTC),
   *     other values as the driver's {@code getObject} gives them
   * @throws SQLException if the query fails or times out
   */
  public List<Map<String, Object>> sql(String query, Object... params) throws SQLException {
    Objects.requireNonNull(query, "query");
    Objects.requireNonNull(params, "params (for one NULL parameter pass new Object[] {null})");
    Object[] values = params.clone();
    try (PreparedStatement statement = prepare(query)) {
      for (int i = 0; i < values.length; i++) {
        Object value = values[i];
        if (value == null) {
          statement.setNull(i + 1, Types.NULL);
        } else if (value instanceof Instant instant) {
          dialect.bindTimestamp(statement, i + 1, instant.truncatedTo(ChronoUnit.MICROS));
        } else {
          statement.setObject(i + 1, value);
        }
      }
      return execute(statement, query, Mode.QUERY, rs -> {
        ResultSetMetaData meta = rs.getMetaData();
        Map<String, Object> row = new LinkedHashMap<>();
        for (int i = 1; i <= meta.getColumnCount(); i++) {
          int type = meta.getColumnType(i);
          row.put(meta.getColumnLabel(i), type == Types.TIMESTAMP ? dialect.readTimestamp(rs, i) : rs.getObject(i));
        }
        return Collections.unmodifiableMap(row);
      });
    }
  }

  /**
   * Describes an application table's events table as it exists in the database, from the connection's metadata
   * (in the connection's current schema, where the driver reports one): its columns in order, their types mapped
   * to {@link ColumnType} (unknown types as VARCHAR).
   *
   * @param applicationTable the application table's name; its events table is
   *     {@link ProvenanceSchema#eventsTableName}
   * @param recordKey the application table's key columns, which metadata cannot tell reliably; may be empty
   * @throws IllegalArgumentException if the name is not a plain identifier
   * @throws SQLException if the table does not exist or is not an events table, or the metadata cannot be read
   */
  public ProvenanceTable describeEventsTable(String applicationTable, List<String> recordKey) throws SQLException {
    Objects.requireNonNull(applicationTable, "applicationTable");
    checkIdentifier(applicationTable, "table name");
    String name = ProvenanceSchema.eventsTableName(applicationTable);
    String schema = currentSchema();
    List<ProvenanceColumn> columns = readColumns(name, schema);
    if (columns.isEmpty()) {
      throw new SQLException("no provenance events table " + name + " in the database"
          + (schema == null ? "" : " (schema " + schema + ")") + "; is " + applicationTable
          + " an application table whose provenance was captured?");
    }
    if (!isEventsTable(columns)) {
      throw new SQLException("table " + name + " is not a provenance events table: it lacks some of the columns "
          + EVENT_COLUMNS);
    }
    return ProvenanceSchema.eventsTable(applicationTable,
        columns.stream().filter(c -> !EVENT_COLUMNS.contains(c.name())).toList(), recordKey);
  }

  /**
   * The application tables whose events tables are in the database (in the connection's current schema, where the
   * driver reports one): for each table named {@code <name>Events} in any case that has the event columns, its
   * {@code <name>} as the database spells it; sorted. The sink's staging tables are left out.
   *
   * @throws SQLException if the metadata cannot be read
   */
  public List<String> applicationTables() throws SQLException {
    String schema = currentSchema();
    DatabaseMetaData meta = connection.getMetaData();
    Set<String> candidates = new TreeSet<>();
    String schemaPattern = schema == null ? null : escapePattern(schema, meta.getSearchStringEscape());
    try (ResultSet rs = meta.getTables(null, schemaPattern, "%", null)) {
      while (rs.next()) {
        String table = rs.getString("TABLE_NAME");
        String lower = table.toLowerCase(Locale.ROOT);
        if ((schema == null || schema.equalsIgnoreCase(rs.getString("TABLE_SCHEM"))) && lower.endsWith(EVENTS_SUFFIX)
            && lower.length() > EVENTS_SUFFIX.length() && !lower.startsWith(STAGING_PREFIX)
            && IDENTIFIER.matcher(table).matches()) {
          candidates.add(table.substring(0, table.length() - EVENTS_SUFFIX.length()));
        }
      }
    }
    List<String> tables = new ArrayList<>();
    for (String candidate : candidates) {
      if (isEventsTable(readColumns(ProvenanceSchema.eventsTableName(candidate), schema))) {
        tables.add(candidate);
      }
    }
    return tables;
  }

  // ---- internals

  private String currentSchema() {
    try {
      return connection.getSchema();
    } catch (SQLException | AbstractMethodError e) {
      return null;
    }
  }

  /** A table's columns in order, from the metadata; empty if there is no such table. */
  private List<ProvenanceColumn> readColumns(String name, String schema) throws SQLException {
    DatabaseMetaData meta = connection.getMetaData();
    String escape = meta.getSearchStringEscape();
    TreeMap<Integer, ProvenanceColumn> columns = new TreeMap<>();
    // Drivers match the pattern case-sensitively (DuckDB) or not; the stored spelling is the sink's, or folded.
    for (String candidate : new LinkedHashSet<>(List.of(name, name.toLowerCase(Locale.ROOT),
        name.toUpperCase(Locale.ROOT)))) {
      try (ResultSet rs = meta.getColumns(null, schema == null ? null : escapePattern(schema, escape),
          escapePattern(candidate, escape), null)) {
        while (rs.next()) {
          if (rs.getString("TABLE_NAME").equalsIgnoreCase(name)
              && (schema == null || schema.equalsIgnoreCase(rs.getString("TABLE_SCHEM")))) {
            columns.put(rs.getInt("ORDINAL_POSITION"), new ProvenanceColumn(
                rs.getString("COLUMN_NAME").toLowerCase(Locale.ROOT), columnType(rs.getInt("DATA_TYPE"))));
          }
        }
      }
      if (!columns.isEmpty()) {
        break;
      }
    }
    return List.copyOf(columns.values());
  }

  private static boolean isEventsTable(List<ProvenanceColumn> columns) {
    Set<String> names = new HashSet<>();
    columns.forEach(c -> names.add(c.name()));
    return names.containsAll(EVENT_COLUMNS) && names.size() > EVENT_COLUMNS.size();
  }

  private Optional<Map<String, Object>> lastState(ProvenanceTable events, Sql sql) throws SQLException {
    List<ProvenanceColumn> columns = applicationColumns(events);
    List<Optional<Map<String, Object>>> rows = query(sql, rs -> {
      if (ProvenanceSchema.DELETE.equals(rs.getString(1))) {
        return Optional.empty();
      }
      Map<String, Object> state = new LinkedHashMap<>();
      for (int i = 0; i < columns.size(); i++) {
        state.put(columns.get(i).name(), read(rs, i + 2, columns.get(i).type()));
      }
      return Optional.of(Collections.unmodifiableMap(state));
    });
    return rows.isEmpty() ? Optional.empty() : rows.get(0);
  }

  private void insertAllowed(String temp, List<ProvenanceColumn> keyColumns, String columns, Set<List<Object>> keys)
      throws SQLException {
    if (keys.isEmpty()) {
      return;
    }
    StringBuilder text = new StringBuilder("INSERT INTO ").append(temp).append(" (").append(columns)
        .append(") VALUES (");
    for (int i = 0; i < keyColumns.size(); i++) {
      text.append(i == 0 ? "" : ", ").append(placeholder(keyColumns.get(i).type()));
    }
    String insert = text.append(')').toString();
    try (PreparedStatement statement = prepare(insert)) {
      int pending = 0;
      for (List<Object> key : keys) {
        for (int i = 0; i < keyColumns.size(); i++) {
          Object value = key.get(i);
          bind(statement, i + 1, value instanceof ByteBuffer buffer ? buffer.array() : value);
        }
        statement.addBatch();
        if (++pending == INSERT_BATCH) {
          execute(statement, insert, Mode.BATCH, null);
          pending = 0;
        }
      }
      if (pending > 0) {
        execute(statement, insert, Mode.BATCH, null);
      }
    }
  }

  private void update(String text) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      execute(statement, text, Mode.PLAIN, null);
    }
  }

  private <T> List<T> query(Sql sql, RowReader<T> reader) throws SQLException {
    String text = sql.text.toString();
    try (PreparedStatement statement = prepare(text)) {
      for (int i = 0; i < sql.params.size(); i++) {
        bind(statement, i + 1, sql.params.get(i));
      }
      return execute(statement, text, Mode.QUERY, reader);
    }
  }

  /** What {@link #execute} runs. */
  private enum Mode {
    /** The PreparedStatement's query, its rows read by the reader. */
    QUERY,
    /** The PreparedStatement's batch. */
    BATCH,
    /** The text, on a plain Statement. */
    PLAIN
  }

  private PreparedStatement prepare(String text) throws SQLException {
    try {
      return connection.prepareStatement(text);
    } catch (SQLException e) {
      throw new SQLException("provenance query failed: " + ProvenanceSink.describe(e) + " (SQL: " + abbreviate(text)
          + ")", e.getSQLState(), e.getErrorCode(), e);
    }
  }

  /** Runs a statement within the timeout; a query fails past {@code maxRows} rows. */
  private <T> List<T> execute(Statement statement, String text, Mode mode, RowReader<T> reader) throws SQLException {
    try {
      statement.setQueryTimeout((int) Math.min(Integer.MAX_VALUE,
          (queryTimeout.toMillis() + 999) / 1000));
    } catch (SQLFeatureNotSupportedException e) {
      // DuckDB is covered by the watchdog below; another driver without timeouts has none.
    }
    if (mode == Mode.QUERY) {
      try {
        statement.setMaxRows(maxRows == Integer.MAX_VALUE ? 0 : maxRows + 1);
      } catch (SQLFeatureNotSupportedException e) {
        // counted below
      }
    }
    Watchdog watchdog = dialect == SinkDialect.DUCKDB ? Watchdog.arm(statement, queryTimeout) : null;
    List<T> rows = new ArrayList<>();
    try {
      if (mode == Mode.BATCH) {
        statement.executeBatch();
      } else if (mode == Mode.PLAIN) {
        statement.execute(text);
      } else {
        try (ResultSet rs = ((PreparedStatement) statement).executeQuery()) {
          while (rs.next()) {
            if (rows.size() == maxRows) {
              throw new TooManyRows("provenance query returned more than " + maxRows + " rows (the limit); narrow "
                  + "it or raise maxRows: " + abbreviate(text));
            }
            rows.add(reader.read(rs));
          }
        }
      }
    } catch (TooManyRows e) {
      throw e;
    } catch (SQLException e) {
      boolean timedOut = (watchdog != null && watchdog.fired()) || e instanceof SQLTimeoutException
          || "57014".equals(e.getSQLState());
      if (timedOut) {
        throw new SQLTimeoutException("provenance query did not finish within its timeout of " + queryTimeout
            + ": " + abbreviate(text), e.getSQLState(), e.getErrorCode(), e);
      }
      throw new SQLException("provenance query failed: " + ProvenanceSink.describe(e) + " (SQL: " + abbreviate(text)
          + ")", e.getSQLState(), e.getErrorCode(), e);
    } finally {
      if (watchdog != null) {
        watchdog.disarm();
      }
    }
    return rows;
  }

  private void bind(PreparedStatement statement, int index, Object value) throws SQLException {
    if (value instanceof Long l) {
      statement.setLong(index, l);
    } else if (value instanceof Double d) {
      statement.setDouble(index, d);
    } else if (value instanceof BigDecimal d) {
      statement.setBigDecimal(index, d);
    } else if (value instanceof String s) {
      statement.setString(index, s);
    } else if (value instanceof byte[] bytes) {
      statement.setBytes(index, bytes);
    } else if (value instanceof Instant instant) {
      statement.setString(index, TIMESTAMP_TEXT.format(LocalDateTime.ofInstant(instant, ZoneOffset.UTC)));
    } else {
      throw new IllegalStateException("unexpected parameter " + value); // values are normalized by normalize()
    }
  }

  private Object read(ResultSet rs, int index, ColumnType type) throws SQLException {
    Object value = switch (type) {
      case BIGINT -> rs.getLong(index);
      case INTEGER -> rs.getInt(index);
      case SMALLINT -> rs.getShort(index);
      case TINYINT -> rs.getByte(index);
      case DOUBLE -> rs.getDouble(index);
      case DECIMAL -> rs.getBigDecimal(index);
      case VARCHAR -> rs.getString(index);
      case VARBINARY -> rs.getBytes(index);
      case TIMESTAMP -> dialect.readTimestamp(rs, index);
    };
    return rs.wasNull() ? null : value;
  }

  /** The record key as columns of the table (in column order) with values of their types. */
  private static Map<ProvenanceColumn, Object> recordKey(ProvenanceTable events, Map<String, Object> recordKey) {
    Objects.requireNonNull(recordKey, "recordKey");
    Map<String, Object> byName = new HashMap<>();
    for (Map.Entry<String, Object> entry : recordKey.entrySet()) {
      String name = Objects.requireNonNull(entry.getKey(), "key column name").toLowerCase(Locale.ROOT);
      if (byName.containsKey(name)) {
        throw new IllegalArgumentException("key column " + name + " is given twice");
      }
      byName.put(name, entry.getValue());
    }
    if (byName.isEmpty()) {
      throw new IllegalArgumentException("the record key names no column");
    }
    List<String> expected = events.recordKey();
    if (!expected.isEmpty() && !byName.keySet().equals(new HashSet<>(expected))) {
      throw new IllegalArgumentException("a key of " + events.name() + " names exactly the columns " + expected
          + ", not " + byName.keySet());
    }
    Map<ProvenanceColumn, Object> key = new LinkedHashMap<>();
    for (ProvenanceColumn column : applicationColumns(events)) {
      if (byName.containsKey(column.name())) {
        Object value = byName.remove(column.name());
        if (value == null) {
          throw new IllegalArgumentException("key column " + column.name() + " has no value (null)");
        }
        key.put(column, normalize(column, value));
      }
    }
    if (!byName.isEmpty()) {
      throw new IllegalArgumentException("table " + events.name() + " has no application column(s) "
          + byName.keySet() + "; its columns are " + applicationColumns(events).stream().map(ProvenanceColumn::name)
          .toList());
    }
    return key;
  }

  /** A value as the bound Java type of its column: Long, Double, BigDecimal, String, byte[] or Instant. */
  private static Object normalize(ProvenanceColumn column, Object value) {
    try {
      if (value instanceof String text && column.type() != ColumnType.VARCHAR) {
        String t = text.trim();
        return switch (column.type()) {
          case BIGINT, INTEGER, SMALLINT, TINYINT -> Long.parseLong(t);
          case DOUBLE -> Double.parseDouble(t);
          case DECIMAL -> new BigDecimal(t);
          case VARBINARY -> HexFormat.of().parseHex(t.startsWith("0x") || t.startsWith("0X") ? t.substring(2) : t);
          case TIMESTAMP -> Instant.parse(t).truncatedTo(ChronoUnit.MICROS);
          case VARCHAR -> throw new AssertionError("handled above");
        };
      }
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("key column " + column.name() + " is " + column.type() + "; cannot read '"
          + value + "' as one (" + e.getMessage() + ")", e);
    }
    Object normalized = switch (column.type()) {
      case BIGINT, INTEGER, SMALLINT, TINYINT -> value instanceof Long || value instanceof Integer
          || value instanceof Short || value instanceof Byte ? (Object) ((Number) value).longValue() : null;
      case DOUBLE -> value instanceof Double || value instanceof Float ? (Object) ((Number) value).doubleValue() : null;
      case DECIMAL -> value instanceof BigDecimal ? value
          : value instanceof Long || value instanceof Integer ? BigDecimal.valueOf(((Number) value).longValue()) : null;
      case VARCHAR -> value instanceof String ? value : null;
      case VARBINARY -> value instanceof byte[] bytes ? bytes.clone() : null;
      case TIMESTAMP -> value instanceof Instant instant ? instant.truncatedTo(ChronoUnit.MICROS) : null;
    };
    if (normalized == null) {
      throw new IllegalArgumentException("key column " + column.name() + " is " + column.type() + " but its value is a "
          + value.getClass().getName() + " (" + value + ")");
    }
    return normalized;
  }

  private static List<ProvenanceColumn> applicationColumns(ProvenanceTable events) {
    return events.columns().stream().filter(c -> !EVENT_COLUMNS.contains(c.name())).toList();
  }

  /** The columns identifying a record of the table: its record key, or every application column. */
  private static List<ProvenanceColumn> keyColumns(ProvenanceTable events) {
    List<ProvenanceColumn> application = applicationColumns(events);
    if (events.recordKey().isEmpty()) {
      return application;
    }
    return application.stream().filter(c -> events.recordKey().contains(c.name())).toList();
  }

  private static void checkEventsTable(ProvenanceTable events) {
    Objects.requireNonNull(events, "events table");
    checkIdentifier(events.name(), "table name");
    Set<String> names = new HashSet<>();
    for (ProvenanceColumn column : events.columns()) {
      checkIdentifier(column.name(), "column name in table " + events.name());
      if (!column.name().equals(column.name().toLowerCase(Locale.ROOT))) {
        throw new IllegalArgumentException("column " + column.name() + " of " + events.name()
            + " is not lower-case, as provenance column names are");
      }
      names.add(column.name());
    }
    if (!names.containsAll(EVENT_COLUMNS)) {
      throw new IllegalArgumentException(events.name() + " is not an events table: it lacks some of the columns "
          + EVENT_COLUMNS);
    }
    if (applicationColumns(events).isEmpty()) {
      throw new IllegalArgumentException("events table " + events.name() + " has no application columns");
    }
    for (String k : events.recordKey()) {
      if (!names.contains(k) || EVENT_COLUMNS.contains(k)) {
        throw new IllegalArgumentException("record key column " + k + " is not an application column of "
            + events.name());
      }
    }
  }

  private static void checkIdentifier(String name, String what) {
    if (!IDENTIFIER.matcher(name).matches()) {
      throw new IllegalArgumentException(what + " '" + name + "' is not a plain SQL identifier "
          + "(letters, digits and underscores, not starting with a digit)");
    }
  }

  /**
   * An identifier in SQL: quoted (so a column may be named like a keyword) and lower-case, which names the same
   * table in all three databases (PostgreSQL folds the sink's names to lower case; DuckDB and Vertica compare
   * identifiers case-insensitively, quoted or not).
   */
  private static String quote(String identifier) {
    return '"' + identifier.toLowerCase(Locale.ROOT) + '"';
  }

  private static String placeholder(ColumnType type) {
    return type == ColumnType.TIMESTAMP ? "CAST(? AS TIMESTAMP)" : "?";
  }

  private static String escapePattern(String name, String escape) {
    if (escape == null || escape.isEmpty()) {
      return name;
    }
    return name.replace(escape, escape + escape).replace("_", escape + "_").replace("%", escape + "%");
  }

  private static ColumnType columnType(int sqlType) {
    return switch (sqlType) {
      case Types.BIGINT -> ColumnType.BIGINT;
      case Types.INTEGER -> ColumnType.INTEGER;
      case Types.SMALLINT -> ColumnType.SMALLINT;
      case Types.TINYINT -> ColumnType.TINYINT;
      case Types.DOUBLE, Types.FLOAT, Types.REAL -> ColumnType.DOUBLE;
      case Types.DECIMAL, Types.NUMERIC -> ColumnType.DECIMAL;
      case Types.VARBINARY, Types.BINARY, Types.LONGVARBINARY, Types.BLOB -> ColumnType.VARBINARY;
      case Types.TIMESTAMP -> ColumnType.TIMESTAMP;
      default -> ColumnType.VARCHAR;
    };
  }

  private static String abbreviate(String sql) {
    return sql.length() <= 400 ? sql : sql.substring(0, 400) + "...";
  }

  /** A statement returned more rows than the limit (SQLSTATE 54000, program limit exceeded). */
  private static final class TooManyRows extends SQLException {
    private static final long serialVersionUID = 1L;

    TooManyRows(String message) {
      super(message, "54000");
    }
  }

  @FunctionalInterface
  private interface RowReader<T> {
    T read(ResultSet rs) throws SQLException;
  }

  /** SQL text with its parameters, built side by side so they cannot drift apart. */
  private static final class Sql {
    final StringBuilder text = new StringBuilder();
    final List<Object> params = new ArrayList<>();

    Sql add(String sql) {
      text.append(sql);
      return this;
    }

    /** A placeholder for a value already of the column type's bound Java type (see normalize). */
    Sql param(ColumnType type, Object value) {
      text.append(placeholder(type));
      params.add(value);
      return this;
    }

    Sql keyMatch(String alias, Map<ProvenanceColumn, Object> key) {
      boolean first = true;
      for (Map.Entry<ProvenanceColumn, Object> entry : key.entrySet()) {
        text.append(first ? "" : " AND ").append(alias).append('.').append(quote(entry.getKey().name())).append(" = ");
        param(entry.getKey().type(), entry.getValue());
        first = false;
      }
      return this;
    }
  }

  /** Cancels a statement that runs past its timeout, for drivers that ignore setQueryTimeout (DuckDB's). */
  private static final class Watchdog {
    private static final ScheduledThreadPoolExecutor TIMER = newTimer();

    private final Statement statement;
    private ScheduledFuture<?> task;
    private boolean done;
    private boolean fired;

    private Watchdog(Statement statement) {
      this.statement = statement;
    }

    static Watchdog arm(Statement statement, Duration timeout) {
      Watchdog watchdog = new Watchdog(statement);
      watchdog.task = TIMER.schedule(watchdog::fire, timeout.toNanos(), TimeUnit.NANOSECONDS);
      return watchdog;
    }

    private synchronized void fire() {
      if (done) {
        return;
      }
      fired = true;
      try {
        statement.cancel();
      } catch (SQLException e) {
        // the statement then runs on; the caller still sees a timeout once it returns
      }
    }

    synchronized boolean fired() {
      return fired;
    }

    synchronized void disarm() {
      done = true;
      task.cancel(false);
    }

    private static ScheduledThreadPoolExecutor newTimer() {
      ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
        Thread t = new Thread(r, "apiary-provenance-query-timeout");
        t.setDaemon(true);
        return t;
      });
      timer.setRemoveOnCancelPolicy(true);
      return timer;
    }
  }

  /**
   * {@link ProvenanceSchema#writerExecId} for events aliased {@code alias}, or their own {@code exec_id} on a sink
   * without {@value ProvenanceSchema#MULTI_PARTITION_POSITIONS} (one no server of this version has written to yet:
   * it holds no global function's writes to attribute).
   */
  private String writerExecId(String alias) throws SQLException {
    try (ResultSet rs = connection.getMetaData().getTables(null, connection.getSchema(), null, null)) {
      while (rs.next()) {
        if (ProvenanceSchema.MULTI_PARTITION_POSITIONS.equalsIgnoreCase(rs.getString("TABLE_NAME"))) {
          return ProvenanceSchema.writerExecId(alias);
        }
      }
    }
    return alias + "." + quote(ProvenanceSchema.EXEC_ID);
  }
}
