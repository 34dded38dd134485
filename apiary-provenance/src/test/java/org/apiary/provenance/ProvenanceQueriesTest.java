package org.apiary.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apiary.provenance.ProvenanceQueries.WrittenRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The provenance queries against an in-memory model of a generated history: a deterministic stream of graph
 * executions (interleaved, one to three functions each, every function a transaction on one of four partitions whose
 * transaction IDs are disjoint ranges, so they are not ordered against each other) inserting, updating, deleting and
 * reading accounts and orders; plus hand-made edge cases. The model records what each execution read and wrote as
 * it happens; the queries must find exactly that in the loaded provenance tables.
 */
class ProvenanceQueriesTest {
  static final ProvenanceTable ACCOUNTS = ProvenanceSchema.eventsTable("accounts", List.of(
      new ProvenanceColumn("id", ColumnType.BIGINT),
      new ProvenanceColumn("owner", ColumnType.VARCHAR),
      new ProvenanceColumn("balance", ColumnType.BIGINT)), List.of("id"));
  static final ProvenanceTable ORDERS = ProvenanceSchema.eventsTable("orders", List.of(
      new ProvenanceColumn("order_id", ColumnType.BIGINT),
      new ProvenanceColumn("account_id", ColumnType.BIGINT),
      new ProvenanceColumn("amount", ColumnType.BIGINT)), List.of("order_id"));
  static final List<ProvenanceTable> TABLES = List.of(ACCOUNTS, ORDERS);

  @TempDir
  Path dir;

  @Test
  void queriesMatchTheModelOnDuckDb() throws Exception {
    History history = History.generate(20240501L, 100_000);
    assertTrue(history.events >= 100_000, "events: " + history.events);
    try (ProvenanceSink sink = ProvenanceSink.open("jdbc:duckdb:" + dir.resolve("provenance.duckdb"),
        new Properties())) {
      history.loadInto(sink);
      checkAgainstModel(new ProvenanceQueries(sink.connection()), history, 300, 7);
    }
  }

  @Test
  void queriesMatchTheModelOnPostgres() throws Exception {
    History history = History.generate(977L, 4_000);
    try (PostgresTestSchema schema = new PostgresTestSchema();
         ProvenanceSink sink = ProvenanceSink.open(schema.url(), PostgresTestSchema.props())) {
      history.loadInto(sink);
      ProvenanceQueries queries = new ProvenanceQueries(sink.connection());
      checkAgainstModel(queries, history, 60, 11);

      ProvenanceQueries impatient = new ProvenanceQueries(sink.connection(), Duration.ofSeconds(1), 10);
      long started = System.nanoTime();
      SQLTimeoutException timeout = assertThrows(SQLTimeoutException.class, () -> impatient.sql("SELECT pg_sleep(20)"));
      assertTrue(System.nanoTime() - started < Duration.ofSeconds(10).toNanos(), "the timeout did not cut the query");
      assertTrue(timeout.getMessage().contains("timeout"), timeout.getMessage());
      sink.connection().rollback(); // the cancelled statement aborted the transaction
      assertEquals(List.of(Map.of("n", 1)), queries.sql("SELECT 1 AS n"));
    }
  }

  @Test
  void boundsAndValidation() throws Exception {
    History history = History.generate(5L, 2_000);
    try (ProvenanceSink sink = ProvenanceSink.open("jdbc:duckdb:" + dir.resolve("small.duckdb"), new Properties())) {
      history.loadInto(sink);
      ProvenanceQueries impatient = new ProvenanceQueries(sink.connection(), Duration.ofMillis(500), 10);
      long started = System.nanoTime();
      SQLTimeoutException timeout = assertThrows(SQLTimeoutException.class,
          () -> impatient.sql("SELECT COUNT(*) FROM range(1000000000000) t(i) WHERE i % 7 = 3"));
      assertTrue(System.nanoTime() - started < Duration.ofSeconds(10).toNanos(), "the timeout did not cut the query");
      assertTrue(timeout.getMessage().contains("timeout of PT0.5S"), timeout.getMessage());
      sink.connection().rollback(); // the cancelled statement aborted the transaction

      assertEquals(10, impatient.sql("SELECT * FROM FunctionInvocations LIMIT 10").size());
      SQLException tooMany = assertThrows(SQLException.class,
          () -> impatient.sql("SELECT * FROM FunctionInvocations LIMIT 11"));
      assertTrue(tooMany.getMessage().contains("more than 10 rows"), tooMany.getMessage());

      ProvenanceQueries queries = new ProvenanceQueries(sink.connection());
      Map<String, Object> hostile = Map.of("id", "1 OR 1=1");
      assertThrows(IllegalArgumentException.class, () -> queries.stateAt(ACCOUNTS, hostile, Instant.now()),
          "a key value that is no number must be rejected, not pasted into SQL");
      assertEquals(List.of(Map.of("n", 0L)), queries.sql(
          "SELECT COUNT(*) AS n FROM FunctionInvocations WHERE function_name = ?", "x' OR '1'='1"));
      assertThrows(IllegalArgumentException.class,
          () -> queries.stateAt(ACCOUNTS, Map.of("owner", "x"), Instant.now()), "not the record key");
      assertThrows(IllegalArgumentException.class,
          () -> queries.stateAt(ACCOUNTS, Map.of("id", 1L, "balance", 2L), Instant.now()), "more than the key");
      ProvenanceTable evil = new ProvenanceTable("accountsEvents\"; DROP TABLE accountsEvents; --",
          ACCOUNTS.columns(), ACCOUNTS.key(), ACCOUNTS.recordKey());
      assertThrows(IllegalArgumentException.class, () -> queries.stateAt(evil, Map.of("id", 1L), Instant.now()));
      assertThrows(IllegalArgumentException.class,
          () -> queries.readsOutside(ProvenanceSchema.eventsTable("accounts", ACCOUNTS.columns().subList(7, 10),
              List.of()), "debit", List.of()), "no record key");
      assertThrows(IllegalArgumentException.class, () -> new ProvenanceQueries(sink.connection(), Duration.ZERO, 1));

      // keys given as text, as the command line gives them, mean the same as typed values
      History.Rec some = history.writes.keySet().stream().filter(r -> r.table() == 0).findFirst().orElseThrow();
      Instant end = history.time().plusSeconds(1);
      assertEquals(queries.stateAt(ACCOUNTS, Map.of("id", some.key()), end),
          queries.stateAt(ACCOUNTS, Map.of("ID", Long.toString(some.key())), end));
      assertEquals(history.expectedStateAt(some, end), queries.stateAt(ACCOUNTS, Map.of("id", some.key()), end));
      assertThrows(SQLException.class, () -> queries.describeEventsTable("nothing", List.of("id")));
    }
  }

  /** Every query against the model, on sampled records, executions and functions, and on the edge cases. */
  private static void checkAgainstModel(ProvenanceQueries queries, History h, int samples, long seed)
      throws SQLException {
    SplittableRandom random = new SplittableRandom(seed);
    assertEquals(ACCOUNTS, queries.describeEventsTable("accounts", List.of("id")));
    assertEquals(ORDERS, queries.describeEventsTable("ORDERS", List.of("order_id")));
    // the sink's staging tables (DuckDB keeps apiary_stage_<table>events) and other tables are not listed
    assertEquals(List.of("accounts", "orders"), queries.applicationTables().stream()
        .map(t -> t.toLowerCase(java.util.Locale.ROOT)).toList());

    // stateAt: at, just before and after writes, before the record existed, and at the end
    List<History.Rec> records = new ArrayList<>(new TreeSet<>(h.writes.keySet()));
    int present = 0;
    int absent = 0;
    for (int i = 0; i < samples; i++) {
      History.Rec rec = records.get(random.nextInt(records.size()));
      List<History.Write> writes = h.writes.get(rec);
      History.Write w = writes.get(random.nextInt(writes.size()));
      Instant t = switch (random.nextInt(5)) {
        case 0 -> w.time();
        case 1 -> w.time().minus(1, ChronoUnit.MICROS);
        case 2 -> w.time().plusNanos(999); // truncated to the write's microsecond
        case 3 -> writes.get(0).time().minusSeconds(1);
        default -> h.time().plusSeconds(1);
      };
      Optional<Map<String, Object>> expected = h.expectedStateAt(rec, t);
      assertEquals(expected, queries.stateAt(h.table(rec), h.keyOf(rec), t), "state of " + rec + " at " + t);
      if (expected.isPresent()) {
        present++;
      } else {
        absent++;
      }
    }
    assertTrue(present > samples / 4 && absent > samples / 20, "present " + present + ", absent " + absent);

    // stateWhenRead: executions that read the record, and executions that did not
    List<Map.Entry<String, History.Rec>> reads = new ArrayList<>();
    h.stateAtFirstRead.forEach((exec, recs) -> recs.keySet().forEach(rec -> reads.add(Map.entry(exec, rec))));
    int seen = 0;
    for (int i = 0; i < samples; i++) {
      Map.Entry<String, History.Rec> read = reads.get(random.nextInt(reads.size()));
      Optional<Map<String, Object>> expected = h.stateAtFirstRead.get(read.getKey()).get(read.getValue());
      assertEquals(expected, queries.stateWhenRead(h.table(read.getValue()), h.keyOf(read.getValue()), read.getKey()),
          "state of " + read.getValue() + " as " + read.getKey() + " read it");
      seen += expected.isPresent() ? 1 : 0;
      String other = h.executionIds.get(random.nextInt(h.executionIds.size()));
      History.Rec rec = records.get(random.nextInt(records.size()));
      Optional<Map<String, Object>> none = h.stateAtFirstRead.getOrDefault(other, Map.of())
          .getOrDefault(rec, Optional.empty());
      assertEquals(none, queries.stateWhenRead(h.table(rec), h.keyOf(rec), other), rec + " as " + other + " read it");
    }
    assertTrue(seen > samples / 2, "reads with a state: " + seen);

    // writtenByExecutionsThatRead: records read by several executions, and records never read
    List<History.Rec> readRecords = new ArrayList<>(new TreeSet<>(h.firstReadIndex.keySet()));
    int nonEmpty = 0;
    int crossPartition = 0;
    for (int i = 0; i < samples; i++) {
      History.Rec rec = random.nextInt(10) == 0 ? records.get(random.nextInt(records.size()))
          : readRecords.get(random.nextInt(readRecords.size()));
      List<WrittenRecord> expected = h.expectedDownstream(rec);
      List<WrittenRecord> actual = queries.writtenByExecutionsThatRead(TABLES, h.table(rec), h.keyOf(rec));
      assertEquals(expected, actual, "records written by executions that read " + rec);
      nonEmpty += expected.isEmpty() ? 0 : 1;
      crossPartition += h.downstreamAcrossPartitions(rec) ? 1 : 0;
    }
    assertTrue(nonEmpty > samples / 3, "non-empty downstream sets: " + nonEmpty);
    assertTrue(crossPartition > samples / 10, "downstream sets whose tx ids disagree with time: " + crossPartition);

    // readsOutside: every function, allowed sets of about half its reads plus keys it never read; all and nothing
    for (String function : h.readsByFunction.keySet()) {
      for (int table = 0; table < TABLES.size(); table++) {
        int t = table;
        TreeSet<Long> read = h.readsByFunction.get(function).getOrDefault(t, new TreeSet<>());
        List<Map<String, Object>> allowed = new ArrayList<>();
        List<Map<String, Object>> outside = new ArrayList<>();
        for (long key : read) {
          if (random.nextBoolean()) {
            allowed.add(h.keyOf(new History.Rec(t, key)));
          } else {
            outside.add(h.keyOf(new History.Rec(t, key)));
          }
        }
        for (int i = 0; i < 20; i++) {
          allowed.add(h.keyOf(new History.Rec(t, 50_000_000L + i)));
        }
        assertEquals(outside, queries.readsOutside(TABLES.get(t), function, allowed), function + " on " + t);
        List<Map<String, Object>> all = read.stream().map(k -> h.keyOf(new History.Rec(t, k))).toList();
        assertEquals(List.of(), queries.readsOutside(TABLES.get(t), function, all), function + " reads all allowed");
        assertEquals(all, queries.readsOutside(TABLES.get(t), function, List.of()), function + " with nothing allowed");
      }
    }
    assertEquals(List.of(), queries.readsOutside(ACCOUNTS, "neverRan", List.of()));

    checkEdgeCases(queries, h);

    // raw SQL, with bound parameters
    Map<String, Long> byType = new TreeMap<>();
    for (ProvenanceRow row : h.rows.get(ACCOUNTS.name())) {
      byType.merge((String) row.values().get(5), 1L, Long::sum);
    }
    List<Map<String, Object>> counted = queries.sql("SELECT event_type AS t, COUNT(*) AS n FROM accountsEvents "
        + "GROUP BY event_type ORDER BY event_type");
    Map<String, Long> actual = new TreeMap<>();
    counted.forEach(row -> actual.put((String) row.get("t"), ((Number) row.get("n")).longValue()));
    assertEquals(byType, actual);
    Instant middle = h.invocationTimes.get(h.invocationTimes.size() / 2);
    long before = h.invocationTimes.stream().filter(t -> !t.isAfter(middle)).count();
    assertEquals(before, ((Number) queries.sql("SELECT COUNT(*) AS n FROM FunctionInvocations WHERE event_time <= ?",
        middle).get(0).get("n")).longValue());
    assertEquals(middle, queries.sql("SELECT MAX(event_time) AS m FROM FunctionInvocations WHERE event_time <= ?",
        middle).get(0).get("m"));
  }

  /** The hand-made cases History.generate appends, each asserted by name. */
  private static void checkEdgeCases(ProvenanceQueries queries, History h) throws SQLException {
    History.Edge e = h.edge;
    Instant end = h.time().plusSeconds(1);
    // read after the record was deleted (a read the capture should never see): no state
    assertEquals(Optional.empty(), queries.stateWhenRead(ACCOUNTS, Map.of("id", e.deleted), e.deletedReader));
    assertEquals(Optional.empty(), queries.stateAt(ACCOUNTS, Map.of("id", e.deleted), end));
    assertEquals(Optional.of(e.deletedLastState), queries.stateAt(ACCOUNTS, Map.of("id", e.deleted), e.beforeDelete));
    // deleted and inserted again before the read: the new row
    assertEquals(Optional.of(e.reinsertedState), queries.stateWhenRead(ACCOUNTS, Map.of("id", e.reinserted),
        e.reinsertedReader));
    // never read: no state as any execution read it, nothing downstream
    assertEquals(Optional.empty(), queries.stateWhenRead(ACCOUNTS, Map.of("id", e.neverRead), e.multiReader));
    assertEquals(List.of(), queries.writtenByExecutionsThatRead(TABLES, ACCOUNTS, Map.of("id", e.neverRead)));
    assertTrue(queries.stateAt(ACCOUNTS, Map.of("id", e.neverRead), end).isPresent());
    // an execution that read two records in two functions on two partitions, and wrote before, between and after
    assertEquals(Optional.of(e.firstReadState), queries.stateWhenRead(ACCOUNTS, Map.of("id", e.firstRead),
        e.multiReader), "the state before the reading transaction's own update");
    assertEquals(Optional.of(e.secondReadState), queries.stateWhenRead(ACCOUNTS, Map.of("id", e.secondRead),
        e.multiReader));
    assertEquals(Optional.of(e.secondReadState), queries.stateAt(ACCOUNTS, Map.of("id", e.secondRead),
        e.secondWritten));
    assertEquals(e.downstreamOfFirst, queries.writtenByExecutionsThatRead(TABLES, ACCOUNTS,
        Map.of("id", e.firstRead)));
    assertEquals(e.downstreamOfSecond, queries.writtenByExecutionsThatRead(TABLES, ACCOUNTS,
        Map.of("id", e.secondRead)));
    // a function that read only what it may
    List<Map<String, Object>> allowed = List.of(Map.of("id", e.audited.get(0)), Map.of("id", e.audited.get(1)),
        Map.of("id", 77_777_777L));
    assertEquals(List.of(), queries.readsOutside(ACCOUNTS, History.AUDITED_FUNCTION, allowed));
    assertEquals(List.of(Map.of("id", e.audited.get(1))), queries.readsOutside(ACCOUNTS, History.AUDITED_FUNCTION,
        List.of(Map.of("id", e.audited.get(0)))));
  }

  /**
   * A generated history: the provenance rows, and the truth about it recorded while generating. Transaction IDs of
   * partition p are {@code (p + 1) * 10^12 + n}: increasing in commit order on a partition, unordered against time
   * across partitions. Every transaction's time is later than the one before it.
   */
  static final class History {
    static final int PARTITIONS = 4;
    static final Instant START = Instant.parse("2024-05-01T08:00:00Z");
    static final String AUDITED_FUNCTION = "auditedLookup";
    /** Graphs and their functions (an execution runs the first one to three), and each function's reads and writes. */
    static final Map<String, List<String>> GRAPHS = new LinkedHashMap<>();
    static final Map<String, int[]> PROFILE = new HashMap<>();

    static {
      GRAPHS.put("transfer", List.of("checkBalance", "debit", "credit"));
      GRAPHS.put("shop", List.of("browse", "placeOrder", "confirm"));
      GRAPHS.put("audit", List.of("scanAccounts", "scanOrders", "report"));
      int[][] profiles = {{3, 1}, {1, 2}, {1, 2}, {4, 0}, {1, 3}, {2, 2}, {3, 0}, {3, 1}, {0, 2}};
      int i = 0;
      for (List<String> functions : GRAPHS.values()) {
        for (String function : functions) {
          PROFILE.put(function, profiles[i++]);
        }
      }
    }

    record Rec(int table, long key) implements Comparable<Rec> {
      @Override
      public int compareTo(Rec o) {
        return table != o.table ? Integer.compare(table, o.table) : Long.compare(key, o.key);
      }
    }

    /** A write to a record; {@code values} null for a delete. */
    record Write(Instant time, long txId, List<Object> values) {}

    /** A write by an execution, with what orders it among the execution's writes. */
    record ExecWrite(int functionIndex, Instant time, long txId, int table, long seq, WrittenRecord record) {}

    /** Keys and expectations of the hand-made cases. */
    static final class Edge {
      long deleted;
      String deletedReader;
      Instant beforeDelete;
      Map<String, Object> deletedLastState;
      long reinserted;
      String reinsertedReader;
      Map<String, Object> reinsertedState;
      long neverRead;
      long firstRead;
      long secondRead;
      String multiReader;
      Map<String, Object> firstReadState;
      Map<String, Object> secondReadState;
      Instant secondWritten;
      List<WrittenRecord> downstreamOfFirst;
      List<WrittenRecord> downstreamOfSecond;
      List<Long> audited;
    }

    final SplittableRandom random;
    final Map<String, List<ProvenanceRow>> rows = new HashMap<>();
    final List<ProvenanceRow> invocations = new ArrayList<>();
    final List<Instant> invocationTimes = new ArrayList<>();
    final List<String> executionIds = new ArrayList<>();
    int events;
    private long clockMicros;
    private final long[] txCounter = new long[PARTITIONS];
    private final long[][] exportSeq = new long[2][PARTITIONS];
    private final long[] nextId = new long[2];
    private int nextExecution;
    /** Live keys per table and partition, for picking records to read, update and delete. */
    private final List<List<List<Long>>> live = new ArrayList<>();

    final Map<Rec, List<Object>> current = new HashMap<>();
    final Map<Rec, List<Write>> writes = new HashMap<>();
    final Map<String, Map<Rec, Optional<Map<String, Object>>>> stateAtFirstRead = new HashMap<>();
    final Map<Rec, Map<String, Integer>> firstReadIndex = new HashMap<>();
    final Map<String, List<ExecWrite>> execWrites = new HashMap<>();
    final Map<String, Map<Integer, TreeSet<Long>>> readsByFunction = new TreeMap<>();
    /** Each execution's transactions, by function index. */
    final Map<String, List<Long>> execTxIds = new HashMap<>();
    Edge edge;

    private History(long seed) {
      random = new SplittableRandom(seed);
      rows.put(ACCOUNTS.name(), new ArrayList<>());
      rows.put(ORDERS.name(), new ArrayList<>());
      for (int t = 0; t < 2; t++) {
        List<List<Long>> perPartition = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
          perPartition.add(new ArrayList<>());
        }
        live.add(perPartition);
      }
    }

    static History generate(long seed, int minEvents) {
      History h = new History(seed);
      List<Execution> active = new ArrayList<>();
      while (h.events < minEvents || !active.isEmpty()) {
        while (h.events < minEvents && active.size() < 6) {
          active.add(h.newExecution());
        }
        Execution e = active.get(h.random.nextInt(active.size()));
        h.runRandomFunction(e);
        if (e.nextFunction == e.functions.size()) {
          active.remove(e);
        }
      }
      h.addEdgeCases();
      return h;
    }

    void loadInto(ProvenanceSink sink) throws SQLException {
      ProvenanceTable invocationsTable = ProvenanceSchema.functionInvocations();
      sink.ensureTable(invocationsTable);
      load(sink, invocationsTable, invocations);
      for (ProvenanceTable table : TABLES) {
        sink.ensureTable(table);
        load(sink, table, rows.get(table.name()));
      }
    }

    private static void load(ProvenanceSink sink, ProvenanceTable table, List<ProvenanceRow> rows)
        throws SQLException {
      for (int from = 0; from < rows.size(); from += 20_000) {
        sink.load(table, rows.subList(from, Math.min(rows.size(), from + 20_000)));
      }
    }

    Instant time() {
      return START.plus(clockMicros, ChronoUnit.MICROS);
    }

    ProvenanceTable table(Rec rec) {
      return TABLES.get(rec.table());
    }

    Map<String, Object> keyOf(Rec rec) {
      return Map.of(rec.table() == 0 ? "id" : "order_id", rec.key());
    }

    // ---- generating

    final class Execution {
      final String id;
      final String graph;
      final List<String> functions;
      int nextFunction;

      Execution(String id, String graph, List<String> functions) {
        this.id = id;
        this.graph = graph;
        this.functions = functions;
        executionIds.add(id);
      }
    }

    Execution newExecution() {
      List<String> graphs = new ArrayList<>(GRAPHS.keySet());
      String graph = graphs.get(random.nextInt(graphs.size()));
      int length = 1 + random.nextInt(3);
      return new Execution(String.format("exec-%06d", nextExecution++), graph, GRAPHS.get(graph).subList(0, length));
    }

    final class Tx {
      final Execution execution;
      final int functionIndex;
      final String function;
      final int partition;
      final long txId;
      final Instant time;
      long readSeq;

      Tx(Execution execution, String function, int partition) {
        this.execution = execution;
        this.functionIndex = execution.nextFunction++;
        this.function = function;
        this.partition = partition;
        clockMicros += 1 + random.nextInt(2000);
        this.time = time();
        this.txId = (partition + 1) * 1_000_000_000_000L + ++txCounter[partition];
        execTxIds.computeIfAbsent(execution.id, k -> new ArrayList<>()).add(txId);
        invocations.add(new ProvenanceRow(ProvenanceSchema.FUNCTION_INVOCATIONS, Arrays.asList(time, Long.toString(txId),
            txId, 0L, partition, function, execution.graph, execution.id, "p" + partition, null, 1L, null, null, "ran")));
        invocationTimes.add(time);
      }

      /** A read event; the model notes the record's committed state (this transaction writes after reading). */
      void read(int table, long key) {
        Rec rec = new Rec(table, key);
        List<Object> values = Arrays.asList(time, Long.toString(txId), txId, 0L, partition,
            ProvenanceSchema.READ, readSeq++, key, null, null);
        rows.get(TABLES.get(table).name()).add(new ProvenanceRow(TABLES.get(table).name(), values));
        events++;
        List<Object> state = current.get(rec);
        stateAtFirstRead.computeIfAbsent(execution.id, k -> new HashMap<>())
            .putIfAbsent(rec, Optional.ofNullable(state).map(s -> asMap(table, s)));
        firstReadIndex.computeIfAbsent(rec, k -> new LinkedHashMap<>()).putIfAbsent(execution.id, functionIndex);
        readsByFunction.computeIfAbsent(function, k -> new TreeMap<>()).computeIfAbsent(table, k -> new TreeSet<>())
            .add(key);
      }

      long insert(int table, List<Object> values) {
        long key = (Long) values.get(0);
        assertEquals(partition, (int) (key % PARTITIONS), "a record lives on its partition");
        live.get(table).get(partition).add(key);
        write(table, ProvenanceSchema.INSERT, values, values);
        return key;
      }

      void update(int table, List<Object> values) {
        write(table, ProvenanceSchema.UPDATE, values, values);
      }

      void delete(int table, long key) {
        Rec rec = new Rec(table, key);
        live.get(table).get(partition).remove(Long.valueOf(key));
        write(table, ProvenanceSchema.DELETE, current.get(rec), null);
      }

      private void write(int table, String type, List<Object> eventValues, List<Object> newState) {
        long key = (Long) eventValues.get(0);
        Rec rec = new Rec(table, key);
        long seq = ++exportSeq[table][partition];
        List<Object> values = new ArrayList<>(List.of(time, Long.toString(txId), txId, 0L, partition, type, seq));
        values.addAll(eventValues);
        rows.get(TABLES.get(table).name()).add(new ProvenanceRow(TABLES.get(table).name(), values));
        events++;
        if (newState == null) {
          current.remove(rec);
        } else {
          current.put(rec, newState);
        }
        writes.computeIfAbsent(rec, k -> new ArrayList<>()).add(new Write(time, txId, newState));
        WrittenRecord record = new WrittenRecord(TABLES.get(table).name(), execution.id, function, type, keyOf(rec),
            txId);
        execWrites.computeIfAbsent(execution.id, k -> new ArrayList<>())
            .add(new ExecWrite(functionIndex, time, txId, table, seq, record));
      }
    }

    private void runRandomFunction(Execution e) {
      String function = e.functions.get(e.nextFunction);
      int partition = random.nextInt(PARTITIONS);
      Tx tx = new Tx(e, function, partition);
      int[] profile = PROFILE.get(function);
      List<Rec> readHere = new ArrayList<>();
      for (int i = random.nextInt(profile[0] + 1); i > 0; i--) {
        int table = random.nextInt(2);
        List<Long> keys = live.get(table).get(partition);
        if (!keys.isEmpty()) {
          // half the reads go to a few hot records, so that records are read by many executions
          long key = keys.get(random.nextBoolean() ? random.nextInt(Math.min(keys.size(), 25))
              : random.nextInt(keys.size()));
          tx.read(table, key);
          readHere.add(new Rec(table, key));
        }
      }
      for (int i = random.nextInt(profile[1] + 1); i > 0; i--) {
        int table = random.nextInt(2);
        List<Long> keys = live.get(table).get(partition);
        int op = keys.isEmpty() ? 0 : random.nextInt(20);
        if (op < 9) {
          tx.insert(table, newValues(table, (nextId[table]++) * PARTITIONS + partition + 1_000 * PARTITIONS));
        } else if (op < 18) {
          long key = keys.get(random.nextInt(keys.size()));
          if (!readHere.isEmpty() && random.nextInt(3) == 0 && readHere.get(0).table() == table
              && current.containsKey(readHere.get(0))) {
            key = readHere.get(0).key(); // read, then update the same record in one transaction
          }
          tx.update(table, newValues(table, key));
        } else {
          tx.delete(table, keys.get(random.nextInt(keys.size())));
        }
      }
    }

    private List<Object> newValues(int table, long key) {
      if (table == 0) {
        String owner = random.nextInt(20) == 0 ? null : "owner-" + random.nextInt(500) + (random.nextInt(10) == 0
            ? " o'brien \"ünïcødé\"" : "");
        return Arrays.asList(key, owner, random.nextLong(-1_000_000, 1_000_000_000L));
      }
      return Arrays.asList(key, random.nextLong(1, 100_000), random.nextLong(1, 1_000_000));
    }

    Map<String, Object> asMap(int table, List<Object> values) {
      List<ProvenanceColumn> columns = TABLES.get(table).columns();
      Map<String, Object> map = new LinkedHashMap<>();
      for (int i = 0; i < values.size(); i++) {
        map.put(columns.get(ProvenanceSchema.EVENT_COLUMNS.size() + i).name(), values.get(i));
      }
      return map;
    }

    /** Hand-made executions on dedicated keys (far above the generated ones), after the generated history. */
    private void addEdgeCases() {
      Edge e = new Edge();
      long base = 90_000_000L; // divisible by PARTITIONS: base + p lives on partition p
      // deleted before an (anomalous) read
      Execution writer = new Execution("edge-writer", "edge", List.of("w1", "w2", "w3", "w4", "w5", "w6"));
      e.deleted = base;
      new Tx(writer, "w1", 0).insert(0, Arrays.asList(e.deleted, "gone", 10L));
      new Tx(writer, "w2", 0).update(0, Arrays.asList(e.deleted, "gone", 20L));
      e.beforeDelete = time();
      e.deletedLastState = asMap(0, Arrays.asList(e.deleted, "gone", 20L));
      new Tx(writer, "w3", 0).delete(0, e.deleted);
      Execution deletedReader = new Execution("edge-deleted-reader", "edge", List.of("peek"));
      e.deletedReader = deletedReader.id;
      new Tx(deletedReader, "peek", 0).read(0, e.deleted);
      // deleted, then inserted again before the read
      e.reinserted = base + 4;
      new Tx(writer, "w4", 0).insert(0, Arrays.asList(e.reinserted, "first life", 1L));
      new Tx(writer, "w5", 0).delete(0, e.reinserted);
      new Tx(writer, "w6", 0).insert(0, Arrays.asList(e.reinserted, "second life", 2L));
      e.reinsertedState = asMap(0, Arrays.asList(e.reinserted, "second life", 2L));
      Execution reinsertedReader = new Execution("edge-reinserted-reader", "edge", List.of("peek"));
      e.reinsertedReader = reinsertedReader.id;
      new Tx(reinsertedReader, "peek", 0).read(0, e.reinserted);
      // never read
      Execution quiet = new Execution("edge-quiet", "edge", List.of("w1", "w2"));
      e.neverRead = base + 8;
      new Tx(quiet, "w1", 0).insert(0, Arrays.asList(e.neverRead, "unread", 5L));
      new Tx(quiet, "w2", 0).update(0, Arrays.asList(e.neverRead, "unread", 6L));
      // one execution: writes on partition 3 (largest tx ids) before any read; reads X on partition 2 and updates
      // it in the same transaction; reads Y on partition 0 (smallest tx ids) and writes an order after both reads
      e.firstRead = base + 2;
      e.secondRead = base + 12;
      Execution setup = new Execution("edge-setup", "edge", List.of("s1", "s2"));
      Tx s1 = new Tx(setup, "s1", 2);
      s1.insert(0, Arrays.asList(e.firstRead, "x", 100L));
      s1.insert(0, Arrays.asList(base + 6, "z", 1L));
      Tx s2 = new Tx(setup, "s2", 0);
      s2.insert(0, Arrays.asList(e.secondRead, "y", 150L)); // two writes in one transaction: the later one counts
      s2.update(0, Arrays.asList(e.secondRead, "y", 200L));
      e.secondWritten = s2.time;
      e.firstReadState = asMap(0, Arrays.asList(e.firstRead, "x", 100L));
      e.secondReadState = asMap(0, Arrays.asList(e.secondRead, "y", 200L));
      Execution multi = new Execution("edge-multi", "edge", List.of("before", "readX", "readY"));
      e.multiReader = multi.id;
      Tx before = new Tx(multi, "before", 3);
      before.insert(1, Arrays.asList(base + 3, 1L, 1L));
      Tx readX = new Tx(multi, "readX", 2);
      readX.read(0, e.firstRead);
      readX.update(0, Arrays.asList(e.firstRead, "x", 99L));
      readX.insert(1, Arrays.asList(base + 6, 2L, 2L));
      Tx readY = new Tx(multi, "readY", 0);
      readY.read(0, e.secondRead);
      readY.insert(1, Arrays.asList(base + 16, 3L, 3L));
      readY.update(1, Arrays.asList(base + 16, 3L, 4L));
      String accounts = ACCOUNTS.name();
      String orders = ORDERS.name();
      e.downstreamOfFirst = List.of(
          new WrittenRecord(accounts, multi.id, "readX", "update", Map.of("id", e.firstRead), readX.txId),
          new WrittenRecord(orders, multi.id, "readX", "insert", Map.of("order_id", base + 6), readX.txId),
          new WrittenRecord(orders, multi.id, "readY", "insert", Map.of("order_id", base + 16), readY.txId),
          new WrittenRecord(orders, multi.id, "readY", "update", Map.of("order_id", base + 16), readY.txId));
      e.downstreamOfSecond = e.downstreamOfFirst.subList(2, 4);
      assertTrue(before.txId > readX.txId && readY.txId < readX.txId, "the tx ids disagree with time here");
      // a function that reads only two records
      Execution auditor = new Execution("edge-auditor", "edge", List.of(AUDITED_FUNCTION));
      Tx audit = new Tx(auditor, AUDITED_FUNCTION, 2);
      e.audited = List.of(e.firstRead, base + 6);
      audit.read(0, e.firstRead);
      audit.read(0, base + 6);
      audit.read(0, e.firstRead);
      edge = e;
    }

    // ---- the truth

    Optional<Map<String, Object>> expectedStateAt(Rec rec, Instant t) {
      Instant at = t.truncatedTo(ChronoUnit.MICROS);
      List<Object> state = null;
      for (Write w : writes.getOrDefault(rec, List.of())) {
        if (!w.time().isAfter(at)) {
          state = w.values();
        }
      }
      return Optional.ofNullable(state).map(s -> asMap(rec.table(), s));
    }

    /**
     * The writes of every execution that read the record, by its functions from the first one that read it on:
     * functions of an execution run one after another, so these are the writes that came later.
     */
    List<WrittenRecord> expectedDownstream(Rec rec) {
      List<ExecWrite> found = new ArrayList<>();
      firstReadIndex.getOrDefault(rec, Map.of()).forEach((exec, first) -> {
        for (ExecWrite w : execWrites.getOrDefault(exec, List.of())) {
          if (w.functionIndex() >= first) {
            found.add(w);
          }
        }
      });
      found.sort(Comparator.comparing((ExecWrite w) -> w.record().executionId()).thenComparing(ExecWrite::time)
          .thenComparingLong(ExecWrite::txId).thenComparingInt(ExecWrite::table).thenComparingLong(ExecWrite::seq));
      Set<WrittenRecord> distinct = new LinkedHashSet<>();
      found.forEach(w -> distinct.add(w.record()));
      return List.copyOf(distinct);
    }

    /** Whether comparing tx ids instead of times would get this record's downstream set wrong. */
    boolean downstreamAcrossPartitions(Rec rec) {
      for (Map.Entry<String, Integer> reader : firstReadIndex.getOrDefault(rec, Map.of()).entrySet()) {
        long readTx = execTxIds.get(reader.getKey()).get(reader.getValue());
        for (ExecWrite w : execWrites.getOrDefault(reader.getKey(), List.of())) {
          if ((w.functionIndex() >= reader.getValue()) != (w.txId() >= readTx)) {
            return true;
          }
        }
      }
      return false;
    }
  }
}
