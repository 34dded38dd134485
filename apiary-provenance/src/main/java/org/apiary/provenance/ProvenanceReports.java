package org.apiary.provenance;

import java.sql.SQLException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The provenance queries by name, with text parameters, answered as a table of text: the one layer behind
 * {@code ./apiary provenance ...} (on a sink it opens itself) and the service's {@code /api/provenance/{query}} (on
 * the sink the service loads), so both print the same rows the same way whichever answers.
 *
 * <p>Queries and their parameters (a key is {@code col=value[,col=value...]}; instants are ISO-8601):
 * <ul>
 *   <li>{@code state}: {@code table}, {@code key}, and {@code execution} or {@code at};</li>
 *   <li>{@code downstream}: {@code table}, {@code key};</li>
 *   <li>{@code outside}: {@code function}, {@code table}, {@code allowed} (keys separated by {@code ;}), and
 *   {@code key-columns} (comma-separated) where the allowed set is empty;</li>
 *   <li>{@code reads}: {@code table}, {@code key};</li>
 *   <li>{@code denied}: optional {@code from} and {@code to};</li>
 *   <li>{@code outside-purpose}: {@code table}, {@code key-columns}, {@code allowed-purposes}, and optionally
 *   {@code caller} (comma-separated) or {@code role};</li>
 *   <li>{@code functions}: {@code execution}: the function executions of one graph execution;</li>
 *   <li>{@code invocation}: {@code execution}: how a graph execution ended, from {@code Invocations} (one row per
 *   end: a resumed invocation ends again), by its logged ID ({@code IDENTITY/ID} where keys are required) or by the
 *   client's ID alone;</li>
 *   <li>{@code invocations}: ended graph executions from {@code Invocations}, each once (its last end), newest
 *   first by (start, ID), with optional filters {@code graph}, {@code status}, {@code since} (started at or after),
 *   {@code caller} (logged as {@code caller/ID}), {@code frontend}, {@code prefix} (of the ID), keyset paging after
 *   {@code after-started} (an instant) and {@code after-id}, and {@code limit} (default 100, at most
 *   {@value #MOST_INVOCATIONS}): the sink's half of {@code apiary executions list} and {@code /api/executions};</li>
 *   <li>{@code sql}: {@code query}, which must begin with {@code SELECT} or {@code WITH}.</li>
 * </ul>
 * A missing, unknown or malformed parameter is an {@link IllegalArgumentException} naming it.
 */
public final class ProvenanceReports {
  /** The queries, by name. */
  public static final Set<String> QUERIES = Set.of("state", "downstream", "outside", "reads", "versions", "denied",
      "outside-purpose", "functions", "invocation", "invocations", "sql");

  private static final Map<String, Set<String>> PARAMETERS = Map.ofEntries(
      Map.entry("state", Set.of("table", "key", "execution", "at")),
      Map.entry("downstream", Set.of("table", "key")),
      Map.entry("outside", Set.of("function", "table", "allowed", "key-columns")),
      Map.entry("reads", Set.of("table", "key")),
      Map.entry("versions", Set.of("table", "key")),
      Map.entry("denied", Set.of("from", "to")),
      Map.entry("outside-purpose", Set.of("table", "key-columns", "allowed-purposes", "caller", "role")),
      Map.entry("functions", Set.of("execution")),
      Map.entry("invocation", Set.of("execution")),
      Map.entry("invocations", Set.of("graph", "status", "since", "caller", "frontend", "prefix", "after-started",
          "after-id", "limit")),
      Map.entry("sql", Set.of("query")));

  /** A graph execution's function executions, by {@code execution_id} (its one parameter), in order. */
  public static final String FUNCTIONS_SQL = "SELECT function_name, exec_id, partition_key, event_time, latency_us "
      + "FROM " + ProvenanceSchema.FUNCTION_INVOCATIONS + " WHERE execution_id = ? ORDER BY event_time, exec_id";

  /**
   * How a graph execution ended, from {@code Invocations}: by its logged ID, or ({@code LIKE}, with {@code \\} as
   * the escape) as {@code IDENTITY/ID}; oldest end first.
   */
  public static final String INVOCATION_SQL = "SELECT invocation_id, graph, graph_version, status, error, started_at, "
      + "finished_at, frontend, caller, attempts FROM " + ProvenanceSchema.INVOCATIONS + " WHERE invocation_id = ? OR "
      + "invocation_id LIKE ? ESCAPE '\\' ORDER BY finished_at, invocation_id";

  /** The most rows the query {@code invocations} answers at once. */
  public static final int MOST_INVOCATIONS = 1001;

  /**
   * The query {@code invocations}: each ended invocation once (its latest end, as a resumed one ends again), with
   * the conditions {@link #invocations} adds, newest first by (start, ID).
   */
  private static final String INVOCATIONS_SQL = "SELECT invocation_id, graph, graph_version, status, error, "
      + "started_at, finished_at, frontend, caller, attempts FROM (SELECT invocation_id, graph, graph_version, status, "
      + "error, started_at, finished_at, frontend, caller, attempts, ROW_NUMBER() OVER (PARTITION BY invocation_id "
      + "ORDER BY finished_at DESC) AS end_number FROM " + ProvenanceSchema.INVOCATIONS + ") ends WHERE end_number = 1";

  /**
   * {@link #INVOCATION_SQL}'s parameters for {@code id}: itself, and the pattern that finds it logged as
   * {@code IDENTITY/ID} (LIKE's wildcards in it escaped).
   */
  public static Object[] invocationSqlParameters(String id) {
    return new Object[] {id, "%/" + likeEscaped(id)};
  }

  private ProvenanceReports() {}

  /**
   * A query's answer as text.
   *
   * @param columns the column names, in order
   * @param rows each row's cells, as {@link #text} renders them
   * @param message what to say instead of an empty table (e.g. why a record has no state), or {@code null}
   */
  public record Report(List<String> columns, List<List<String>> rows, String message) {
    public Report {
      columns = List.copyOf(columns);
      rows = rows.stream().map(List::copyOf).toList();
    }

    /** Rows as maps from column to value, as {@link ProvenanceQueries} answers them; {@code message} or null. */
    public static Report of(List<Map<String, Object>> rows, String message) {
      List<String> columns = rows.isEmpty() ? List.of() : List.copyOf(rows.get(0).keySet());
      List<List<String>> cells = new ArrayList<>();
      for (Map<String, Object> row : rows) {
        List<String> line = new ArrayList<>();
        for (String column : columns) {
          line.add(text(row.get(column)));
        }
        cells.add(line);
      }
      return new Report(columns, cells, message);
    }

    /**
     * The table as the command line prints it: a header, a line per row with columns left-aligned two spaces apart,
     * then the row count; {@code (no rows)} or the message when there are none.
     */
    public List<String> lines() {
      if (rows.isEmpty()) {
        return List.of(message != null ? message : "(no rows)");
      }
      int[] widths = columns.stream().mapToInt(String::length).toArray();
      for (List<String> row : rows) {
        for (int i = 0; i < widths.length; i++) {
          widths[i] = Math.max(widths[i], row.get(i).length());
        }
      }
      List<String> lines = new ArrayList<>();
      lines.add(line(columns, widths));
      for (List<String> row : rows) {
        lines.add(line(row, widths));
      }
      lines.add("(" + rows.size() + (rows.size() == 1 ? " row)" : " rows)"));
      return lines;
    }

    private static String line(List<String> cells, int[] widths) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < cells.size(); i++) {
        line.append(i == 0 ? "" : "  ").append(cells.get(i));
        if (i < cells.size() - 1) {
          line.append(" ".repeat(widths[i] - cells.get(i).length()));
        }
      }
      return line.toString();
    }
  }

  /**
   * Runs the query {@code name} with {@code parameters} (a parameter given empty counts as absent).
   *
   * @throws IllegalArgumentException if the query is unknown, or a parameter is unknown, missing or malformed, or
   *     names a table or column the sink does not have
   * @throws SQLException if the sink fails or the query times out
   */
  public static Report run(ProvenanceQueries queries, String name, Map<String, String> parameters)
      throws SQLException {
    Set<String> known = PARAMETERS.get(name);
    if (known == null) {
      throw new IllegalArgumentException("unknown provenance query '" + name + "'; the queries are " + String.join(
          ", ", new java.util.TreeSet<>(QUERIES)));
    }
    Map<String, String> p = new LinkedHashMap<>();
    parameters.forEach((k, v) -> {
      if (!known.contains(k)) {
        throw new IllegalArgumentException("query '" + name + "' takes no parameter '" + k + "'; it takes "
            + String.join(", ", new java.util.TreeSet<>(known)));
      }
      if (v != null && !v.isEmpty()) {
        p.put(k, v);
      }
    });
    return switch (name) {
      case "state" -> state(queries, p);
      case "downstream" -> downstream(queries, p);
      case "outside" -> outside(queries, p);
      case "reads" -> reads(queries, p);
      case "versions" -> versions(queries, p);
      case "denied" -> denied(queries, p);
      case "outside-purpose" -> outsidePurpose(queries, p);
      case "functions" -> Report.of(queries.sql(FUNCTIONS_SQL, required(p, "execution")), null);
      case "invocation" -> {
        yield Report.of(queries.sql(INVOCATION_SQL, invocationSqlParameters(required(p, "execution"))), null);
      }
      case "invocations" -> invocations(queries, p);
      case "sql" -> Report.of(queries.sql(readOnly(required(p, "query"))), null);
      default -> throw new IllegalStateException(name);
    };
  }

  /**
   * {@link #run} on {@code connection} inside a transaction that is always rolled back, so nothing a query path is
   * given can change the audit trail, even on a connection that may write (the service's, which shares its loader's
   * DuckDB database). The connection's auto-commit is restored.
   */
  public static Report runRolledBack(java.sql.Connection connection, String name, Map<String, String> parameters)
      throws SQLException {
    boolean autoCommit = connection.getAutoCommit();
    connection.setAutoCommit(false);
    try {
      return run(new ProvenanceQueries(connection), name, parameters);
    } finally {
      try {
        connection.rollback();
      } finally {
        connection.setAutoCommit(autoCommit);
      }
    }
  }

  private static Report invocations(ProvenanceQueries queries, Map<String, String> p) throws SQLException {
    StringBuilder sql = new StringBuilder(INVOCATIONS_SQL);
    List<Object> values = new ArrayList<>();
    for (String column : List.of("graph", "status", "frontend")) {
      if (p.containsKey(column)) {
        sql.append(" AND ").append(column).append(" = ?");
        values.add(p.get(column));
      }
    }
    if (p.containsKey("since")) {
      sql.append(" AND started_at >= ?");
      values.add(instant(p.get("since"), "since"));
    }
    for (String prefix : new String[] {p.containsKey("caller") ? p.get("caller") + "/" : null, p.get("prefix")}) {
      if (prefix != null) {
        sql.append(" AND invocation_id LIKE ? ESCAPE '\\'");
        values.add(likeEscaped(prefix) + "%");
      }
    }
    if (p.containsKey("after-started") != p.containsKey("after-id")) {
      throw new IllegalArgumentException("query 'invocations' takes 'after-started' and 'after-id' together");
    }
    if (p.containsKey("after-started")) {
      Instant after = instant(p.get("after-started"), "after-started");
      sql.append(" AND (started_at < ? OR (started_at = ? AND invocation_id > ?))");
      values.add(after);
      values.add(after);
      values.add(p.get("after-id"));
    }
    int limit;
    try {
      limit = Integer.parseInt(p.getOrDefault("limit", "100"));
    } catch (NumberFormatException e) {
      limit = 0;
    }
    if (limit < 1 || limit > MOST_INVOCATIONS) {
      throw new IllegalArgumentException("'limit' takes 1 to " + MOST_INVOCATIONS + ", not '" + p.get("limit") + "'");
    }
    sql.append(" ORDER BY started_at DESC, invocation_id LIMIT ").append(limit);
    return Report.of(queries.sql(sql.toString(), values.toArray()), null);
  }

  /** {@code s} with LIKE's wildcards and its escape ({@code \\}) escaped. */
  private static String likeEscaped(String s) {
    return s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_");
  }

  private static Report state(ProvenanceQueries queries, Map<String, String> p) throws SQLException {
    Map<String, Object> recordKey = key(required(p, "key"), "key");
    String execution = p.get("execution");
    String atText = p.get("at");
    if ((execution == null) == (atText == null)) {
      throw new IllegalArgumentException("query 'state' takes one of 'execution' (a graph execution) and 'at' (an "
          + "instant)");
    }
    Instant at = atText == null ? null : instant(atText, "at");
    ProvenanceTable events = queries.describeEventsTable(required(p, "table"), List.copyOf(recordKey.keySet()));
    Optional<Map<String, Object>> state = at == null ? queries.stateWhenRead(events, recordKey, execution)
        : queries.stateAt(events, recordKey, at);
    return Report.of(state.map(List::of).orElse(List.of()), at == null ? "(no state: execution " + execution
        + " never read this record, or it did not exist when read)"
        : "(no state: the record did not exist at " + at + ")");
  }

  private static Report downstream(ProvenanceQueries queries, Map<String, String> p) throws SQLException {
    String table = required(p, "table");
    Map<String, Object> recordKey = key(required(p, "key"), "key");
    ProvenanceTable read = queries.describeEventsTable(table, List.copyOf(recordKey.keySet()));
    // Other tables' keys are unknown here: their written records are identified by all their columns.
    List<ProvenanceTable> all = new ArrayList<>();
    for (String name : queries.applicationTables()) {
      all.add(name.equalsIgnoreCase(table) ? read : queries.describeEventsTable(name, List.of()));
    }
    List<Map<String, Object>> rows = new ArrayList<>();
    for (ProvenanceQueries.WrittenRecord w : queries.writtenByExecutionsThatRead(all, read, recordKey)) {
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("table", w.table());
      row.put("execution_id", w.executionId());
      row.put("function_name", w.functionName());
      row.put("event_type", w.eventType());
      row.put("tx_id", w.txId());
      row.put("key", keyText(w.key()));
      rows.add(row);
    }
    return Report.of(rows, null);
  }

  private static Report outside(ProvenanceQueries queries, Map<String, String> p) throws SQLException {
    String function = required(p, "function");
    List<Map<String, Object>> keys = new ArrayList<>();
    for (String entry : p.getOrDefault("allowed", "").split(";")) {
      if (!entry.isBlank()) {
        keys.add(key(entry.strip(), "allowed"));
      }
    }
    List<String> columns = p.containsKey("key-columns") ? columns(p.get("key-columns"))
        : keys.isEmpty() ? List.of() : List.copyOf(keys.get(0).keySet());
    if (columns.isEmpty()) {
      throw new IllegalArgumentException("the allowed set is empty: name the key columns with 'key-columns'");
    }
    ProvenanceTable events = queries.describeEventsTable(required(p, "table"), columns);
    return Report.of(queries.readsOutside(events, function, keys), null);
  }

  private static Report reads(ProvenanceQueries queries, Map<String, String> p) throws SQLException {
    Map<String, Object> recordKey = key(required(p, "key"), "key");
    ProvenanceTable events = queries.describeEventsTable(required(p, "table"), List.copyOf(recordKey.keySet()));
    return readsReport(queries.readsOfRecord(events, recordKey));
  }

  private static Report versions(ProvenanceQueries queries, Map<String, String> p) throws SQLException {
    Map<String, Object> recordKey = key(required(p, "key"), "key");
    ProvenanceTable events = queries.describeEventsTable(required(p, "table"), List.copyOf(recordKey.keySet()));
    return Report.of(queries.versionsOfRecord(events, recordKey), "(no versions: nothing wrote this record, or its "
        + "writes were not captured)");
  }

  private static Report denied(ProvenanceQueries queries, Map<String, String> p) throws SQLException {
    Instant start = p.containsKey("from") ? instant(p.get("from"), "from") : Instant.EPOCH;
    Instant end = p.containsKey("to") ? instant(p.get("to"), "to") : Instant.now();
    List<Map<String, Object>> rows = new ArrayList<>();
    for (ProvenanceQueries.DeniedCall d : queries.deniedCalls(start, end)) {
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("denied_at", d.deniedAt());
      row.put("invocation_id", d.invocationId());
      row.put("caller", d.caller());
      row.put("graph", d.graph());
      row.put("purpose", d.purpose());
      row.put("caller_roles", d.callerRoles());
      row.put("reason", d.reason());
      rows.add(row);
    }
    return Report.of(rows, null);
  }

  private static Report outsidePurpose(ProvenanceQueries queries, Map<String, String> p) throws SQLException {
    if (p.containsKey("caller") && p.containsKey("role")) {
      throw new IllegalArgumentException("query 'outside-purpose' takes 'caller' or 'role', not both");
    }
    ProvenanceTable events = queries.describeEventsTable(required(p, "table"), columns(required(p, "key-columns")));
    List<String> purposes = List.of(required(p, "allowed-purposes").split(","));
    return readsReport(p.containsKey("role") ? queries.readsByRoleOutsidePurposes(events, p.get("role"), purposes)
        : queries.readsOutsidePurposes(events, p.containsKey("caller") ? List.of(p.get("caller").split(","))
        : List.of(), purposes));
  }

  private static Report readsReport(List<ProvenanceQueries.RecordRead> reads) {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (ProvenanceQueries.RecordRead r : reads) {
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("event_time", r.eventTime());
      row.put("key", keyText(r.key()));
      row.put("execution_id", r.executionId());
      row.put("graph", r.graph());
      row.put("function", r.function());
      row.put("caller", r.caller());
      row.put("purpose", r.purpose());
      row.put("caller_roles", r.callerRoles());
      rows.add(row);
    }
    return Report.of(rows, null);
  }

  /** The statements {@code sql} runs: those that read (a write hidden in one is undone: see {@link #run}). */
  private static final Set<String> READING = Set.of("SELECT", "WITH", "VALUES", "TABLE", "FROM", "DESCRIBE", "SHOW",
      "EXPLAIN");

  /**
   * {@code query} if it begins, after comments and blanks, with a statement that reads ({@link #READING}); refused,
   * naming what it begins with, otherwise. The audit trail must not be changed through its own query path.
   */
  public static String readOnly(String query) {
    String s = query.strip();
    while (s.startsWith("--") || s.startsWith("/*")) {
      int end = s.startsWith("--") ? s.indexOf('\n') : s.indexOf("*/");
      s = end < 0 ? "" : s.substring(end + (s.startsWith("--") ? 1 : 2)).strip();
    }
    String first = s.split("[\\s(;]", 2)[0].toUpperCase(Locale.ROOT);
    if (!READING.contains(first)) {
      throw new IllegalArgumentException("provenance sql runs queries only (" + String.join(", ",
          new java.util.TreeSet<>(READING)) + " first), not '" + (first.isEmpty() ? query.strip() : first) + "'");
    }
    return query;
  }

  private static String required(Map<String, String> p, String name) {
    String value = p.get(name);
    if (value == null) {
      throw new IllegalArgumentException("parameter '" + name + "' is required");
    }
    return value;
  }

  private static List<String> columns(String text) {
    return java.util.Arrays.stream(text.split(",")).map(c -> c.strip().toLowerCase(Locale.ROOT))
        .filter(c -> !c.isEmpty()).toList();
  }

  /** {@code col=value[,col=value...]} as a key; values stay text, parsed for the column types by the queries. */
  public static Map<String, Object> key(String text, String parameter) {
    Map<String, Object> key = new LinkedHashMap<>();
    for (String part : text.split(",")) {
      int eq = part.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("'" + parameter + "' takes col=value[,col=value...], not '" + text + "'");
      }
      String column = part.substring(0, eq).trim().toLowerCase(Locale.ROOT);
      if (key.put(column, part.substring(eq + 1)) != null) {
        throw new IllegalArgumentException("'" + parameter + "' names column " + column + " twice");
      }
    }
    return key;
  }

  private static Instant instant(String text, String parameter) {
    try {
      return Instant.parse(text);
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException("'" + parameter + "' takes an ISO-8601 instant such as 2024-03-01T12:00:00Z, "
          + "not '" + text + "'");
    }
  }

  /** A cell as text: {@code NULL}, bytes in hex, anything else as itself on one line. */
  public static String text(Object value) {
    if (value == null) {
      return "NULL";
    }
    if (value instanceof byte[] bytes) {
      return "0x" + HexFormat.of().formatHex(bytes);
    }
    return String.valueOf(value).replace('\n', ' ');
  }

  private static String keyText(Map<String, Object> key) {
    Collection<String> parts = new ArrayList<>();
    key.forEach((column, value) -> parts.add(column + "=" + text(value)));
    return String.join(",", parts);
  }
}
