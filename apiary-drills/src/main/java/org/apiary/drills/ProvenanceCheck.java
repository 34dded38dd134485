package org.apiary.drills;

import java.io.PrintStream;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apiary.drills.ProvenanceWorkload.Invocation;
import org.apiary.drills.ProvenanceWorkload.Outcome;
import org.apiary.drills.ProvenanceWorkload.Step;
import org.apiary.drills.ProvenanceWorkload.Write;
import org.apiary.drills.provenance.ProvDrillApp;

/**
 * The check of {@link ProvenanceDrill}: what the provenance sink holds, read directly with SQL, against what the
 * workload knows it did ({@link ProvenanceWorkload}); see {@link ProvenanceDrill} for the rules. No Apiary code takes
 * part: the sink's tables are read by their documented columns.
 */
final class ProvenanceCheck {
  /**
   * When the drill's faults happened, in ms of its clock; -1 for a fault that did not happen.
   *
   * @param victim the killed node's index; -1 with a {@code killAtMs} for network faults that may lose calls in flight
   *     from {@code killAtMs} to {@code windowEndMs} (the network drill's whole load)
   * @param windowEndMs until when, after {@code killAtMs}, invocations may be attempted again
   */
  record Faults(long cutAtMs, long restoredAtMs, long killAtMs, int victim, long windowEndMs) {
    Faults(long cutAtMs, long restoredAtMs, long killAtMs, int victim) {
      this(cutAtMs, restoredAtMs, killAtMs, victim, killAtMs < 0 ? -1 : killAtMs + FAULT_WINDOW_MS);
    }
  }

  /** After a kill, how long invocations may be attempted again by the frontend (failover, retries, back-off). */
  static final long FAULT_WINDOW_MS = 12_000;
  /** The {@code partition_id} of a global function's own row and reads (docs/provenance.md, "Identity"). */
  private static final int MULTI_PARTITION = 16383;
  private static final int SHOWN = 5;

  private final PrintStream out;
  private final Faults faults;
  private final List<String> crashes;

  /**
   * A check.
   *
   * @param crashes what went wrong in the drill itself; the check fails if there is anything
   */
  ProvenanceCheck(PrintStream out, Faults faults, List<String> crashes) {
    this.out = out;
    this.faults = faults;
    this.crashes = crashes;
  }

  /** Prints a line with one write, so other processes' log lines never land inside it. */
  private void line(String text) {
    out.print(text + System.lineSeparator());
  }

  /** A FunctionInvocations row. */
  record Execution(String execId, long txId, long execSeq, int partitionId, String function, String graph,
                   String invocation, String partitionKey, String caller) {
    String describe() {
      return "exec_id=" + execId + " tx_id=" + txId + " exec_seq=" + execSeq + " partition_id=" + partitionId + " "
          + function + "@" + graph + " execution_id=" + invocation + " partition_key=" + partitionKey + " caller="
          + caller;
    }
  }

  /** An event row of the application table. */
  record Event(String execId, long txId, long execSeq, int partitionId, String type, long seq, long p, long k,
               String tag, Long v) {
    String content() {
      return type + "|" + p + "|" + k + "|" + tag + "|" + v;
    }

    List<Long> key() {
      return List.of(p, k);
    }

    String describe() {
      return type + " (" + p + "," + k + ")" + (tag == null ? "" : " tag=" + tag + " v=" + v) + " exec_id=" + execId
          + " tx_id=" + txId + " exec_seq=" + execSeq + " partition_id=" + partitionId + " event_seq=" + seq;
    }
  }

  /** What the sink holds, read directly (not through the proxy, not through Apiary). */
  record Sink(List<Execution> executions, List<Event> events) {
    static final String EXECUTIONS = "functioninvocations";
    static final String EVENTS = ProvDrillApp.TABLE.toLowerCase(java.util.Locale.ROOT) + "events";
    static final String POSITIONS = "multipartitionpositions";

    static Sink read(String url, Properties props) throws SQLException {
      List<Execution> executions = new ArrayList<>();
      List<Event> events = new ArrayList<>();
      try (Connection c = DriverManager.getConnection(url, props); Statement s = c.createStatement()) {
        if (exists(c, EXECUTIONS)) {
          // Executions that ran: a retry answered from a function's recorded outputs has a row of its own (mode
          // 'recorded', issue 43) but ran nothing, so it is neither a duplicate nor a re-execution.
          try (ResultSet rs = s.executeQuery("SELECT exec_id, tx_id, exec_seq, partition_id, function_name, graph_id, "
              + "execution_id, partition_key, caller FROM " + EXECUTIONS + " WHERE mode IS NULL OR mode <> 'recorded'")) {
            while (rs.next()) {
              executions.add(new Execution(rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getInt(4),
                  rs.getString(5), rs.getString(6), rs.getString(7), rs.getString(8), rs.getString(9)));
            }
          }
        }
        if (exists(c, EVENTS)) {
          // A multi-partition execution's writes carry its position on their partition; the sink's
          // MultiPartitionPositions names the execution (docs/provenance.md, "Identity").
          String writer = exists(c, POSITIONS)
              ? "COALESCE((SELECT m.exec_id FROM " + POSITIONS + " m WHERE m.partition_id = e.partition_id "
                  + "AND m.tx_id = e.tx_id AND e.event_type <> 'read'), e.exec_id)" : "e.exec_id";
          try (ResultSet rs = s.executeQuery("SELECT " + writer + ", tx_id, exec_seq, partition_id, event_type, "
              + "event_seq, p, k, tag, v FROM " + EVENTS + " e")) {
            while (rs.next()) {
              long v = rs.getLong(10);
              events.add(new Event(rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getInt(4), rs.getString(5),
                  rs.getLong(6), rs.getLong(7), rs.getLong(8), rs.getString(9), rs.wasNull() ? null : v));
            }
          }
        }
      }
      return new Sink(executions, events);
    }

    /** This sink's executions of {@code graphs} only, and the reads joined to them. */
    Sink only(Set<String> graphs) {
      List<Execution> kept = executions.stream().filter(e -> graphs.contains(e.graph())).toList();
      Set<String> ids = kept.stream().map(Execution::execId).collect(Collectors.toSet());
      return new Sink(kept, events.stream().filter(e -> !e.type().equals("read") || ids.contains(e.execId()))
          .toList());
    }

    /** Rows in FunctionInvocations and in the events table; 0 for a table not created yet. */
    static long[] counts(String url, Properties props) {
      return counts(url, props, null);
    }

    /**
     * Rows in FunctionInvocations ({@code executionsWhere} of them, if not {@code null}) and in the events table; 0
     * for a table not created yet.
     */
    static long[] counts(String url, Properties props, String executionsWhere) {
      long[] counts = new long[2];
      try (Connection c = DriverManager.getConnection(url, props); Statement s = c.createStatement()) {
        String[] tables = {EXECUTIONS, EVENTS};
        for (int i = 0; i < 2; i++) {
          if (exists(c, tables[i])) {
            try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM " + tables[i]
                + (i == 0 && executionsWhere != null ? " WHERE " + executionsWhere : ""))) {
              rs.next();
              counts[i] = rs.getLong(1);
            }
          }
        }
      } catch (SQLException e) {
        counts[0] = -1; // unreadable just now: counts as a change
      }
      return counts;
    }

    /**
     * Whether the sink's schema has the table, whatever the case of its name there (the sink creates PostgreSQL's in
     * lower case, DuckDB's as ProvenanceSchema spells them).
     */
    private static boolean exists(Connection c, String table) throws SQLException {
      try (ResultSet rs = c.getMetaData().getTables(null, c.getSchema(), null, null)) {
        while (rs.next()) {
          if (table.equalsIgnoreCase(rs.getString("TABLE_NAME"))) {
            return true;
          }
        }
        return false;
      }
    }
  }

  /** Counts and the first few examples of each. */
  private static final class Tally {
    final Map<String, Long> counts = new LinkedHashMap<>();
    final Map<String, List<String>> examples = new LinkedHashMap<>();

    void add(String category, long n, String example) {
      if (n <= 0) {
        return;
      }
      counts.merge(category, n, Long::sum);
      List<String> list = examples.computeIfAbsent(category, c -> new ArrayList<>());
      if (list.size() < SHOWN) {
        list.add(example);
      }
    }

    long get(String category) {
      return counts.getOrDefault(category, 0L);
    }
  }

  private static String execKey(String invocation, String function) {
    return invocation + "\u0000" + function;
  }

  /**
   * Compares the sink with what the workload knows, prints the report, ending with the line of counts.
   *
   * @return 0 if they agree, 1 if not
   */
  int check(List<Invocation> all, Sink sink) {
    Tally bad = new Tally();
    Tally info = new Tally();
    Map<String, List<Execution>> byExecution = new HashMap<>();
    for (Execution e : sink.executions()) {
      byExecution.computeIfAbsent(execKey(e.invocation(), e.function()), x -> new ArrayList<>()).add(e);
    }
    Map<String, List<Event>> readsByExecId = new HashMap<>();
    Map<String, List<Event>> writesByContent = new HashMap<>();
    for (Event e : sink.events()) {
      if (e.type().equals("read")) {
        readsByExecId.computeIfAbsent(e.execId(), x -> new ArrayList<>()).add(e);
      } else {
        writesByContent.computeIfAbsent(e.content(), x -> new ArrayList<>()).add(e);
      }
    }
    // Where every write the workload attempted would come from, for events nobody expects.
    Map<String, String> origins = new HashMap<>();
    Set<String> rolledBack = new HashSet<>();
    Set<String> unknown = new HashSet<>();
    for (Invocation inv : all) {
      if (inv.outcome == Outcome.UNKNOWN) {
        unknown.add(inv.id);
      }
      for (Step s : inv.rolledBackSteps()) {
        rolledBack.add(execKey(inv.id, s.function));
        s.writes.forEach(w -> origins.put(w.content(), "rolled back: " + inv.id + " " + s.function));
      }
      if (inv.outcome == Outcome.UNKNOWN) {
        for (Step s : inv.steps) {
          s.writes.forEach(w -> origins.put(w.content(), "unknown: " + inv.id + " " + s.function));
        }
      }
    }

    long executions = 0;
    long events = 0;
    long globalWrites = 0;
    long globalExecutions = 0;
    long reexecutions = 0;
    long inWindow = 0;
    long killWindowEnd = faults.windowEndMs();
    Map<String, Step> stepByExecId = new HashMap<>();
    Set<Step> modelledSteps = new HashSet<>();
    // Read-only steps that ran more than once: an attempt lost to a fault may run after the record's next write, so
    // where their reads fall in commit order is not known (each read is still checked above).
    Set<Step> repeated = new HashSet<>();
    for (Invocation inv : all) {
      boolean window = inv.overlaps(faults.killAtMs(), killWindowEnd);
      if (window) {
        inWindow++;
      }
      for (Step s : inv.committedSteps()) {
        if (inv.modelled) {
          modelledSteps.add(s);
        }
        executions++;
        events += s.reads.size() + s.writes.size();
        String where = inv.id + " " + s.function + " (" + inv.shape.graph() + ", " + inv.outcome + ")";
        List<Execution> rows = byExecution.remove(execKey(inv.id, s.function));
        rows = rows == null ? List.of() : rows;
        boolean mayRepeat = s.readOnly() && window;
        if (rows.isEmpty()) {
          bad.add("missing", 1 + s.reads.size(), where + ": no FunctionInvocations row (and so none of its "
              + s.reads.size() + " read(s))");
        } else if (rows.size() > 1) {
          if (mayRepeat) {
            reexecutions += rows.size() - 1;
            repeated.add(s);
            info.add("re-executed", rows.size() - 1, where + ": " + rows.size() + " executions");
          } else {
            bad.add("duplicates", rows.size() - 1, where + ": " + rows.size() + " FunctionInvocations rows: "
                + rows.stream().map(Execution::describe).toList());
          }
        }
        for (Execution row : rows) {
          stepByExecId.put(row.execId(), s);
          String key = s.segment.key() == null ? null : String.valueOf(s.segment.key());
          boolean fieldsRight = row.graph().equals(inv.shape.graph()) && java.util.Objects.equals(row.partitionKey(),
              key) && inv.caller.equals(row.caller())
              && (row.partitionId() == MULTI_PARTITION) == s.global();
          if (!fieldsRight) {
            bad.add("misattributed", 1, where + ": its row says " + row.describe() + "; expected graph "
                + inv.shape.graph() + ", partition key " + key + ", caller " + inv.caller);
          }
        }
        // Reads: joined by exec_id to the execution row(s).
        List<List<Event>> perRow = new ArrayList<>();
        for (Execution row : rows) {
          perRow.add(readsByExecId.getOrDefault(row.execId(), List.of()));
          readsByExecId.remove(row.execId());
        }
        List<List<Event>> judged = mayRepeat || rows.size() <= 1 ? perRow
            : List.of(perRow.stream().flatMap(List::stream).toList());
        for (int i = 0; i < judged.size(); i++) {
          Execution row = rows.get(mayRepeat ? i : 0);
          Map<List<Long>, List<Event>> got = new HashMap<>();
          for (Event e : judged.get(i)) {
            got.computeIfAbsent(e.key(), x -> new ArrayList<>()).add(e);
          }
          for (List<Long> k : s.reads) {
            List<Event> found = got.remove(k);
            if (found == null) {
              bad.add("missing", 1, where + ": read of " + k + " absent (execution " + row.execId() + ")");
              continue;
            }
            if (found.size() > 1) {
              bad.add("duplicates", found.size() - 1, where + ": read of " + k + " " + found.size() + " times: "
                  + found.stream().map(Event::describe).toList());
            }
            for (Event e : found) {
              // A global function's read carries the record's partition and its transaction's position there.
              if (s.global() ? e.partitionId() == MULTI_PARTITION
                  : e.partitionId() != row.partitionId() || e.txId() != row.txId() || e.execSeq() != row.execSeq()) {
                bad.add("misattributed", 1, where + ": read " + e.describe() + " does not match its execution "
                    + row.describe());
              }
            }
          }
          got.values().forEach(extra -> bad.add("misattributed", extra.size(), where + ": read(s) it did not make "
              + "joined to it: " + extra.stream().map(Event::describe).toList()));
        }
        // Writes: found by content; a single-partition writer's joined by exec_id to its row.
        for (Write w : s.writes) {
          List<Event> found = writesByContent.remove(w.content());
          if (found == null) {
            bad.add("missing", 1, where + ": " + w + " absent");
            continue;
          }
          if (found.size() > 1) {
            bad.add("duplicates", found.size() - 1, where + ": " + w + " " + found.size() + " times: "
                + found.stream().map(Event::describe).toList());
          }
          if (s.global()) {
            globalWrites += found.size();
          }
          for (Event e : found) {
            boolean joins = rows.stream().anyMatch(r -> r.execId().equals(e.execId()) && (s.global()
                ? e.partitionId() != MULTI_PARTITION : r.partitionId() == e.partitionId() && r.txId() == e.txId()));
            if (!joins) {
              bad.add("misattributed", 1, where + ": " + e.describe() + " joins to "
                  + sink.executions().stream().filter(r -> r.execId().equals(e.execId())).map(Execution::describe)
                  .findFirst().orElse("no execution") + ", not to "
                  + rows.stream().map(Execution::describe).toList());
            }
          }
        }
        if (s.global() && !s.writes.isEmpty()) {
          globalExecutions++;
        }
      }
    }
    // Rows nobody expected.
    long unchecked = 0;
    for (List<Execution> rows : byExecution.values()) {
      for (Execution row : rows) {
        List<Event> reads = readsByExecId.remove(row.execId());
        int n = reads == null ? 0 : reads.size();
        if (rolledBack.contains(execKey(row.invocation(), row.function()))) {
          bad.add("aborted_captured", 1 + n, "a FunctionInvocations row (and " + n + " read(s)) of a function that "
              + "did not commit: " + row.describe());
        } else if (unknown.contains(row.invocation())) {
          unchecked += 1 + n;
        } else {
          bad.add("misattributed", 1 + n, "a FunctionInvocations row (and " + n + " read(s)) of no execution the "
              + "workload made: " + row.describe());
        }
      }
    }
    for (List<Event> orphans : readsByExecId.values()) {
      bad.add("misattributed", orphans.size(), "read(s) whose exec_id joins to no FunctionInvocations row: "
          + orphans.stream().map(Event::describe).toList());
    }
    for (List<Event> extra : writesByContent.values()) {
      String origin = origins.get(extra.get(0).content());
      if (origin != null && origin.startsWith("rolled back")) {
        bad.add("aborted_captured", extra.size(), "write event(s) of a function that did not commit (" + origin
            + "): " + extra.stream().map(Event::describe).toList());
      } else if (origin != null) {
        unchecked += extra.size();
      } else {
        bad.add("misattributed", extra.size(), "write event(s) no execution of the workload made: "
            + extra.stream().map(Event::describe).toList());
      }
    }
    stepByExecId.values().removeIf(s -> !modelledSteps.contains(s) || repeated.contains(s));
    long misordered = checkOrder(all, sink, stepByExecId, bad);

    // The report.
    Map<String, Long> byOutcome = all.stream().collect(Collectors.groupingBy(
        i -> i.outcome.name().toLowerCase(java.util.Locale.ROOT) + (i.resolvedLater ? " (resolved by result(id))" : ""),
        TreeMap::new, Collectors.counting()));
    Map<String, Long> byGraph = all.stream().collect(Collectors.groupingBy(i -> i.shape.graph(), TreeMap::new,
        Collectors.counting()));
    line("-> invocations: " + all.size() + " by outcome " + byOutcome + "; by graph " + byGraph);
    long failed = all.stream().filter(i -> i.outcome == Outcome.FAILED).count();
    long modelWrong = 0;
    for (Invocation inv : all) {
      if (inv.outcome == Outcome.OK && inv.modelled) {
        List<String> expected = new ArrayList<>();
        List<String> fns = inv.shape.functions();
        for (Step s : inv.steps) {
          boolean last = s == inv.steps.get(inv.steps.size() - 1);
          if (s.readOnly() || last) {
            expected.addAll(s.tokens);
          }
        }
        List<String> got = inv.outputs.stream().flatMap(o -> o.isEmpty() ? java.util.stream.Stream.<String>empty()
            : java.util.Arrays.stream(o.split(","))).sorted().toList();
        if (!got.equals(expected.stream().sorted().toList())) {
          modelWrong++;
          info.add("model", 1, inv.id + " (" + inv.shape.graph() + ", " + fns + ") returned " + got + ", the model "
              + "expected " + expected.stream().sorted().toList());
        }
      }
    }
    String cut = faults.cutAtMs() < 0 ? "no sink cut" : String.format("sink cut off at +%.1f s, back at +%.1f s",
        faults.cutAtMs() / 1e3, faults.restoredAtMs() / 1e3);
    String kill = faults.killAtMs() < 0 ? "no server killed" : faults.victim() < 0 ? String.format("network faults "
        + "from +%.1f s to +%.1f s; %d invocation(s) in flight then", faults.killAtMs() / 1e3,
        faults.windowEndMs() / 1e3, inWindow) : String.format("node %d killed at +%.1f s; %d "
        + "invocation(s) in flight within %d s of it", faults.victim(), faults.killAtMs() / 1e3, inWindow,
        FAULT_WINDOW_MS / 1000);
    line("-> faults: " + (faults.victim() < 0 && faults.killAtMs() >= 0 ? "" : cut + "; ") + kill);
    line("-> excluded from the strict checks: " + unknown.size() + " invocation(s) whose outcome no client "
        + "learned (" + unchecked + " sink row(s) of theirs not checked)");
    if (reexecutions > 0) {
      line("-> " + reexecutions + " extra execution(s) of unrecorded read-only functions in invocations "
          + "attempted again after the kill (each checked like the first)");
    }
    for (Map.Entry<String, List<String>> e : info.examples.entrySet()) {
      if (e.getKey().equals("model")) {
        line("== the drill's model disagreed with what functions returned: " + info.get("model")
            + " invocation(s)");
        e.getValue().forEach(x -> line("   " + x));
      }
    }
    for (Map.Entry<String, List<String>> e : bad.examples.entrySet()) {
      line("== " + e.getKey() + ": " + bad.get(e.getKey()));
      e.getValue().forEach(x -> line("   " + x));
    }
    if (failed > 0) {
      line("== " + failed + " invocation(s) failed in a function that was not meant to fail:");
      all.stream().filter(i -> i.outcome == Outcome.FAILED).limit(SHOWN)
          .forEach(i -> line("   " + i.id + " (" + i.shape.graph() + "): " + i.detail));
    }
    line("-> global functions: " + globalWrites + " write event(s) of " + globalExecutions
        + " committed global execution(s), attributed through MultiPartitionPositions as local ones are");
    line("-> order: write events and reads (global functions' included) of every record in commit order; misordered="
        + misordered);
    if (!crashes.isEmpty()) {
      line("-> the drill itself failed, so this run proves nothing: " + crashes);
    }
    long missing = bad.get("missing");
    long duplicates = bad.get("duplicates");
    long misattributed = bad.get("misattributed");
    long abortedCaptured = bad.get("aborted_captured");
    line(String.format("drill provenance: executions=%d events=%d missing=%d duplicates=%d misattributed=%d "
        + "aborted_captured=%d", executions, events, missing, duplicates, misattributed, abortedCaptured));
    boolean ok = missing == 0 && duplicates == 0 && misattributed == 0 && abortedCaptured == 0 && misordered == 0
        && executions > 0 && events > 0 && modelWrong == 0 && failed == 0 && crashes.isEmpty();
    return ok ? 0 : 1;
  }

  /**
   * The documented order of a record's events ({@code ORDER BY tx_id, exec_seq, reads first, event_seq}) against
   * the commit order the workload knows: each client is the only writer of its keys and waits for each answer, so a
   * key's committed writes happened in the order it made them, and a read saw the writes made before it. Keys an
   * invocation with an unknown outcome wrote are left out; so are reads by invocations whose outcome a client learned only at the end (they may have run
   * after later writes).
   *
   * @return how many records' events are out of order
   */
  private long checkOrder(List<Invocation> all, Sink sink, Map<String, Step> stepByExecId, Tally bad) {
    Map<List<Long>, List<Write>> history = new HashMap<>();
    Set<List<Long>> skipped = new HashSet<>();
    for (Invocation inv : all) {
      if (!inv.modelled) {
        for (Step s : inv.steps) {
          s.writes.forEach(w -> skipped.add(List.of(w.p(), w.k())));
        }
        continue;
      }
      for (Step s : inv.committedSteps()) {
        s.writes.forEach(w -> history.computeIfAbsent(List.of(w.p(), w.k()), x -> new ArrayList<>()).add(w));
      }
    }
    Map<List<Long>, List<Event>> byKey = new HashMap<>();
    for (Event e : sink.events()) {
      Step reader = e.type().equals("read") ? stepByExecId.get(e.execId()) : null;
      if (e.type().equals("read") && reader == null) {
        continue;
      }
      byKey.computeIfAbsent(e.key(), x -> new ArrayList<>()).add(e);
    }
    long misordered = 0;
    for (Map.Entry<List<Long>, List<Write>> h : history.entrySet()) {
      if (skipped.contains(h.getKey())) {
        continue;
      }
      List<Event> events = new ArrayList<>(byKey.getOrDefault(h.getKey(), List.of()));
      events.sort(java.util.Comparator.comparingLong(Event::txId).thenComparingLong(Event::execSeq)
          .thenComparingInt(e -> e.type().equals("read") ? 0 : 1).thenComparingLong(Event::seq));
      List<Write> expected = h.getValue();
      int seen = 0;
      String problem = null;
      for (Event e : events) {
        if (e.type().equals("read")) {
          Integer slot = stepByExecId.get(e.execId()).slots.get(h.getKey());
          if (slot != null && slot != seen) {
            problem = "a read " + e.describe() + " after " + seen + " write(s) in the sink's order, after " + slot
                + " in commit order";
            break;
          }
        } else if (seen < expected.size() && expected.get(seen).content().equals(e.content())) {
          seen++;
        } else if (expected.stream().anyMatch(w -> w.content().equals(e.content()))) {
          problem = e.describe() + " at position " + seen + " in the sink's order; commit order " + expected;
          break;
        }
      }
      if (problem != null) {
        misordered++;
        bad.add("misordered", 1, "record " + h.getKey() + ": " + problem);
      }
    }
    return misordered;
  }
}
