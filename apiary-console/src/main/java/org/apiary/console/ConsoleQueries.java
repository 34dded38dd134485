package org.apiary.console;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.Rows;
import org.apiary.runtime.SystemSchema;
import org.apiary.provenance.ProvenanceQueries;
import org.apiary.provenance.ProvenanceReports;
import org.apiary.provenance.ProvenanceSchema;
import org.apiary.provenance.ProvenanceTable;

/**
 * The console's own queries, beside the shared query layer ({@code org.apiary.frontend.query}) and the provenance
 * reports: what only its pages ask (a function execution's reads and writes, a record's lineage, graphs' latencies
 * over the last hour, the application tables' keys).
 */
final class ConsoleQueries {
  private ConsoleQueries() {}

  /** The application tables' primary key columns (lower case, in key order), by table name in lower case. */
  static Map<String, List<String>> primaryKeys(ApiaryDatabase db) {
    Rows t = db.callAdminForRows("reading the tables' keys", "@SystemCatalog", "PRIMARYKEYS");
    Map<String, TreeMap<Integer, String>> byTable = new TreeMap<>();
    for (Rows.Row row : t) {
      byTable.computeIfAbsent(row.getString("TABLE_NAME").toLowerCase(Locale.ROOT), k -> new TreeMap<>())
          .put((int) row.getLong("KEY_SEQ"), row.getString("COLUMN_NAME").toLowerCase(Locale.ROOT));
    }
    Map<String, List<String>> keys = new TreeMap<>();
    byTable.forEach((table, columns) -> keys.put(table, List.copyOf(columns.values())));
    return keys;
  }

  /** A record's key as the record page takes it: {@code col=value[,col=value...]}. */
  static String keyText(Map<String, Object> key) {
    List<String> parts = new ArrayList<>();
    key.forEach((column, value) -> parts.add(column + "=" + ProvenanceReports.text(value)));
    return String.join(",", parts);
  }

  /** Each application table's events table, described with its primary key where the database has one. */
  static Map<String, ProvenanceTable> eventsTables(ProvenanceQueries q, Map<String, List<String>> keys)
      throws SQLException {
    Map<String, ProvenanceTable> tables = new LinkedHashMap<>();
    for (String name : q.applicationTables()) {
      List<String> key = keys.getOrDefault(name.toLowerCase(Locale.ROOT), List.of());
      tables.put(name.toLowerCase(Locale.ROOT), q.describeEventsTable(name, key));
    }
    return tables;
  }

  /**
   * One record touched by a function execution.
   *
   * @param table the application table, lower case
   * @param key its key ({@link #keyText}), or all its values if the table has no key
   * @param keyed whether {@code key} is the table's primary key (so the record page can show it)
   * @param event {@code read}, {@code insert}, {@code update} or {@code delete}
   */
  record Touch(String execId, String table, String key, boolean keyed, String event) {}

  /**
   * What the function executions of graph execution {@code executionId} read and wrote, from each events table
   * joined with {@value ProvenanceSchema#FUNCTION_INVOCATIONS} (a multi-partition write through its position, as
   * {@link ProvenanceSchema#writerExecId} maps it); each record once per function execution and event type.
   */
  static List<Touch> touches(ProvenanceQueries q, Map<String, ProvenanceTable> tables, String executionId)
      throws SQLException {
    List<Touch> touches = new ArrayList<>();
    for (Map.Entry<String, ProvenanceTable> e : tables.entrySet()) {
      ProvenanceTable t = e.getValue();
      List<String> columns = t.recordKey().isEmpty() ? t.columns().stream().map(c -> c.name())
          .filter(c -> !ProvenanceSchema.EVENT_COLUMNS.contains(c)).toList() : t.recordKey();
      StringBuilder sql = new StringBuilder("SELECT f.exec_id, e.event_type");
      columns.forEach(c -> sql.append(", e.\"").append(c).append('"'));
      sql.append(" FROM \"").append(t.name()).append("\" e JOIN ").append(ProvenanceSchema.FUNCTION_INVOCATIONS)
          .append(" f ON f.exec_id = ").append(ProvenanceSchema.writerExecId("e"))
          .append(" WHERE f.execution_id = ? ORDER BY e.tx_id, e.exec_seq, e.event_seq");
      Set<Touch> seen = new LinkedHashSet<>();
      for (Map<String, Object> row : q.sql(sql.toString(), executionId)) {
        Map<String, Object> key = new LinkedHashMap<>();
        columns.forEach(c -> key.put(c, row.get(c)));
        seen.add(new Touch(String.valueOf(row.get("exec_id")), e.getKey(), keyText(key), !t.recordKey().isEmpty(),
            String.valueOf(row.get("event_type"))));
      }
      touches.addAll(seen);
    }
    return touches;
  }

  /**
   * A record's lineage: the record, the executions that read it, the records they wrote after reading it, the
   * executions that read those, and so on for {@code depth} steps of record -> execution -> record, breadth first;
   * at most {@code maxNodes} nodes, then {@code more}.
   *
   * @param nodes each {@code {id, kind (record or execution), level (0 the record, 1 its readers, ...), table, key,
   *     execution}}
   * @param edges each {@code {from, to, kind}}: {@code read} (record to execution) or the write's event type
   *     (execution to record)
   */
  record Lineage(List<Map<String, Object>> nodes, List<Map<String, Object>> edges, boolean more) {}

  static Lineage lineage(ProvenanceQueries q, Map<String, ProvenanceTable> tables, String table,
                         Map<String, Object> key, int depth, int maxNodes) throws SQLException {
    ProvenanceTable start = tables.get(table.toLowerCase(Locale.ROOT));
    if (start == null) {
      throw new IllegalArgumentException("no provenance events table for table '" + table + "': the captured tables "
          + "are " + String.join(", ", tables.keySet()));
    }
    if (start.recordKey().isEmpty()) {
      throw new IllegalArgumentException("table '" + table + "' has no primary key, so its records have no lineage");
    }
    Map<String, Map<String, Object>> nodes = new LinkedHashMap<>();
    Set<List<String>> edgeSet = new LinkedHashSet<>();
    boolean[] more = {false};
    record Frontier(String table, Map<String, Object> key) {}
    List<Frontier> frontier = new ArrayList<>();
    String first = recordNode(nodes, table.toLowerCase(Locale.ROOT), keyText(key), 0, maxNodes, more);
    frontier.add(new Frontier(table.toLowerCase(Locale.ROOT), key));
    List<ProvenanceTable> all = List.copyOf(tables.values());
    for (int step = 0; step < depth && !frontier.isEmpty() && !more[0]; step++) {
      List<Frontier> next = new ArrayList<>();
      for (Frontier f : frontier) {
        ProvenanceTable events = tables.get(f.table());
        String from = "record:" + f.table() + " " + keyText(f.key());
        if (first == null || !nodes.containsKey(from)) {
          continue;
        }
        for (ProvenanceQueries.RecordRead r : q.readsOfRecord(events, f.key())) {
          String exec = executionNode(nodes, r.executionId(), 2 * step + 1, maxNodes, more);
          if (exec != null) {
            edgeSet.add(List.of(from, exec, ProvenanceSchema.READ));
          }
        }
        for (ProvenanceQueries.WrittenRecord w : q.writtenByExecutionsThatRead(all, events, f.key())) {
          String exec = executionNode(nodes, w.executionId(), 2 * step + 1, maxNodes, more);
          String writtenTable = w.table().substring(0, w.table().length() - "Events".length())
              .toLowerCase(Locale.ROOT);
          boolean isNew = !nodes.containsKey("record:" + writtenTable + " " + keyText(w.key()));
          String rec = recordNode(nodes, writtenTable, keyText(w.key()), 2 * step + 2, maxNodes, more);
          if (exec != null && rec != null) {
            edgeSet.add(List.of(exec, rec, w.eventType()));
            if (isNew && tables.get(writtenTable) != null && !tables.get(writtenTable).recordKey().isEmpty()) {
              next.add(new Frontier(writtenTable, w.key()));
            }
          }
        }
      }
      frontier = next;
    }
    List<Map<String, Object>> edges = new ArrayList<>();
    for (List<String> e : edgeSet) {
      Map<String, Object> edge = new LinkedHashMap<>();
      edge.put("from", e.get(0));
      edge.put("to", e.get(1));
      edge.put("kind", e.get(2));
      edges.add(edge);
    }
    return new Lineage(List.copyOf(nodes.values()), edges, more[0]);
  }

  private static String recordNode(Map<String, Map<String, Object>> nodes, String table, String key, int level,
                                   int maxNodes, boolean[] more) {
    String id = "record:" + table + " " + key;
    return node(nodes, id, maxNodes, more, () -> {
      Map<String, Object> n = new LinkedHashMap<>();
      n.put("id", id);
      n.put("kind", "record");
      n.put("level", level);
      n.put("table", table);
      n.put("key", key);
      return n;
    });
  }

  private static String executionNode(Map<String, Map<String, Object>> nodes, String execution, int level,
                                      int maxNodes, boolean[] more) {
    String id = "execution:" + execution;
    return node(nodes, id, maxNodes, more, () -> {
      Map<String, Object> n = new LinkedHashMap<>();
      n.put("id", id);
      n.put("kind", "execution");
      n.put("level", level);
      n.put("execution", execution);
      return n;
    });
  }

  /** The node's ID, added if new and there is room; {@code null} (and {@code more} set) if there is none. */
  private static String node(Map<String, Map<String, Object>> nodes, String id, int maxNodes, boolean[] more,
                             java.util.function.Supplier<Map<String, Object>> make) {
    if (nodes.containsKey(id)) {
      return id;
    }
    if (nodes.size() >= maxNodes) {
      more[0] = true;
      return null;
    }
    nodes.put(id, make.get());
    return id;
  }

  /**
   * A graph's logged executions that started within the window: how many, how many failed, and the nearest-rank
   * 50th and 99th percentiles of the ended ones' durations (ms; {@code null} if none ended).
   */
  record GraphStats(String graph, long calls, long failures, long ended, Double p50Ms, Double p99Ms) {}

  /** {@link GraphStats} per graph name, for executions started at or after {@code sinceMs} (epoch ms). */
  static Map<String, GraphStats> graphStats(ApiaryDatabase db, long sinceMs) {
    Map<String, GraphStats> stats = new TreeMap<>();
    if (!SystemSchema.tables(db).contains(SystemSchema.INVOCATIONS)) {
      return stats;
    }
    String window = " FROM " + SystemSchema.INVOCATIONS + " WHERE started_at >= TO_TIMESTAMP(MILLISECOND, ?)";
    Rows t = db.query("counting executions per graph", "SELECT graph, COUNT(*), "
        + "SUM(CASE WHEN status = '" + SystemSchema.STATUS_FAILED + "' THEN 1 ELSE 0 END), "
        + "SUM(CASE WHEN finished_at IS NULL THEN 0 ELSE 1 END)" + window + " GROUP BY graph", sinceMs);
    for (Rows.Row row : t) {
      String graph = row.getString(0);
      long calls = row.getLong(1);
      long failures = row.getLong(2);
      long ended = row.getLong(3);
      Double p50 = ended == 0 ? null : percentile(db, window, sinceMs, graph, ended, 0.50);
      Double p99 = ended == 0 ? null : percentile(db, window, sinceMs, graph, ended, 0.99);
      stats.put(graph, new GraphStats(graph, calls, failures, ended, p50, p99));
    }
    return stats;
  }

  /** The nearest-rank percentile: the ceil(p * n)-th shortest duration, in ms (microsecond precision). */
  private static Double percentile(ApiaryDatabase db, String window, long sinceMs, String graph, long n, double p) {
    long rank = Math.max(1, (long) Math.ceil(p * n));
    Rows t = db.query("a graph's latency percentile", "SELECT SINCE_EPOCH(MICROSECOND, "
        + "finished_at) - SINCE_EPOCH(MICROSECOND, started_at) AS d" + window + " AND graph = ? AND finished_at IS "
        + "NOT NULL ORDER BY d LIMIT 1 OFFSET " + (rank - 1), sinceMs, graph);
    return t.first().map(row -> row.getLong(0) / 1000.0).orElse(null);
  }
}
