package org.apiary.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintStream;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.Json;
import org.apiary.internal.wire.WireReply;
import org.apiary.internal.wire.WireRequest;
import org.apiary.provenance.ProvenanceQueries;
import org.apiary.provenance.ProvenanceSchema;
import org.apiary.provenance.ProvenanceSink;
import org.apiary.runtime.SystemSchema;
import org.voltdb.VoltTable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code apiary executions list|show}: what ran, read from the invocation log. Reads only. */
@Command(name = "executions", mixinStandardHelpOptions = true,
    description = {"What ran: the graph invocations in the invocation log (" + SystemSchema.INVOCATIONS + "), with "
        + "their graph and version, status, frontend, attempts and timing; `show` adds the request and the outcome.",
        ExecutionsCommand.NOT_LOGGED},
    subcommands = {ExecutionsCommand.ListExecutions.class, ExecutionsCommand.Show.class,
        ExecutionsCommand.Cancel.class, ExecutionsCommand.Resume.class})
public final class ExecutionsCommand implements Runnable {
  static final String NOT_LOGGED = "Every invocation a frontend with the invocation log (the default) started is "
      + "here, one-function and read-only graphs included (issue 42; before it, those two kinds were not logged). "
      + "Ended invocations are deleted after the frontends' retention (default 1 hour).";

  private static final String TIMES = "SINCE_EPOCH(MILLISECOND, started_at), SINCE_EPOCH(MILLISECOND, finished_at), "
      + "SINCE_EPOCH(MILLISECOND, NOW)";

  @Spec
  CommandSpec spec;

  @Override
  public void run() {
    throw new ParameterException(spec.commandLine(), "name a subcommand: apiary executions list, apiary "
        + "executions show ID, or apiary executions cancel ID --reason TEXT");
  }

  /** {@code executions list}. */
  @Command(name = "list", mixinStandardHelpOptions = true,
      description = {"List logged invocations, newest first: ID, graph and version, status (RUNNING, DONE, FAILED, "
          + "CANCELED), "
          + "the frontend running or last running it, attempts, start and end time (the database's clock, UTC) and "
          + "duration.", NOT_LOGGED})
  static final class ListExecutions implements Callable<Integer> {
    @Option(names = "--running", description = "Only invocations still running (--status RUNNING).")
    boolean running;

    @Option(names = "--failed", description = "Only invocations that ended failed (--status FAILED).")
    boolean failed;

    @Option(names = "--status", paramLabel = "S", description = "Only invocations with this status: RUNNING, DONE, "
        + "FAILED or CANCELED (any case).")
    String status;

    @Option(names = "--graph", paramLabel = "G", description = "Only invocations of this graph.")
    String graph;

    @Option(names = "--since", paramLabel = "T", description = "Only invocations started at or after T: an "
        + "instant (2026-11-29T10:00:00Z) or a time ago (90s, 15m, 2h, 1d).")
    String since;

    @Option(names = "--json", description = "One JSON object per line (id, graph, version, status, frontend, "
        + "attempts, startedAt, finishedAt, durationMs) instead of a table, and nothing else on stdout.")
    boolean json;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "20",
        description = "Show at most N, the newest (default ${DEFAULT-VALUE}).")
    int limit;

    @ArgGroup(exclusive = false, multiplicity = "0..1") // ServiceTarget.Database checks what goes together
    ServiceTarget.Database target;

    @Spec
    CommandSpec spec;

    private final PrintStream out = System.out;

    @Override
    public Integer call() {
      if (target == null) {
        throw ServiceTarget.missing(spec, "--database HOST:PORT");
      }
      if ((running ? 1 : 0) + (failed ? 1 : 0) + (status != null ? 1 : 0) > 1) {
        throw new ParameterException(spec.commandLine(), "give one of --running, --failed and --status");
      }
      if (limit < 1 || limit > 100_000) {
        throw new ParameterException(spec.commandLine(), "--limit must be between 1 and 100000, not " + limit);
      }
      String wanted = running ? SystemSchema.STATUS_RUNNING : failed ? SystemSchema.STATUS_FAILED
          : status == null ? null : status(status);
      List<String> conditions = new ArrayList<>();
      List<Object> parameters = new ArrayList<>();
      if (wanted != null) {
        conditions.add("status = ?");
        parameters.add(wanted);
      }
      if (graph != null) {
        conditions.add("graph = ?");
        parameters.add(graph);
      }
      if (since != null) {
        conditions.add("started_at >= TO_TIMESTAMP(MILLISECOND, ?)");
        parameters.add(since(since, Instant.now()).toEpochMilli());
      }
      String where = conditions.isEmpty() ? "" : " WHERE " + String.join(" AND ", conditions);
      try (ApiaryDatabase db = ApiaryDatabase.open(target.config())) {
        if (!SystemSchema.tables(db).contains(SystemSchema.INVOCATIONS)) {
          if (!json) {
            out.println("no invocations: Apiary's system tables are not there (nothing was deployed with "
                + target.describe() + ")");
          }
          return 0;
        }
        VoltTable total = db.callAdmin("counting invocations", "@AdHoc", adHoc("SELECT COUNT(*) FROM "
            + SystemSchema.INVOCATIONS + where, parameters)).getResults()[0];
        long count = total.advanceRow() ? total.getLong(0) : 0;
        VoltTable t = db.callAdmin("listing invocations", "@AdHoc", adHoc("SELECT invocation_id, graph, "
            + "graph_version, status, frontend, attempts, " + TIMES + " FROM " + SystemSchema.INVOCATIONS + where
            + " ORDER BY started_at DESC, invocation_id LIMIT " + limit, parameters)).getResults()[0];
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"ID", "GRAPH", "VERSION", "STATUS", "FRONTEND", "ATTEMPTS", "STARTED", "FINISHED",
            "DURATION"});
        while (t.advanceRow()) {
          Times times = Times.read(t, 6);
          if (json) {
            com.fasterxml.jackson.databind.node.ObjectNode o = Json.MAPPER.createObjectNode();
            o.put("id", t.getString(0)).put("graph", t.getString(1)).put("version", t.getLong(2))
                .put("status", t.getString(3)).put("frontend", t.getString(4)).put("attempts", t.getLong(5))
                .put("startedAt", times.started()).put("finishedAt", times.finishedOrNull())
                .put("durationMs", times.durationMs());
            out.println(o.toString());
            continue;
          }
          rows.add(new String[] {t.getString(0), t.getString(1), String.valueOf(t.getLong(2)), t.getString(3),
              t.getString(4), String.valueOf(t.getLong(5)), times.started(), times.finished(), times.duration()});
        }
        if (json) {
          return 0;
        }
        String which = conditions.isEmpty() ? "" : "matching ";
        if (rows.size() == 1) {
          out.println("no " + which + "invocations in the log of " + target.describe());
          return 0;
        }
        print(rows);
        out.println((rows.size() - 1) + " of " + count + " " + which + "logged invocation(s), newest first"
            + (count > rows.size() - 1 ? " (--limit " + limit + ")" : ""));
      }
      return 0;
    }

    /** {@code @AdHoc}'s parameters: the statement, then the values of its {@code ?}s. */
    private static Object[] adHoc(String sql, List<Object> parameters) {
      List<Object> all = new ArrayList<>(parameters.size() + 1);
      all.add(sql);
      all.addAll(parameters);
      return all.toArray();
    }

    /** A status as the log stores it, from any case; refused naming the four if it is none of them. */
    static String status(String given) {
      String upper = given.strip().toUpperCase(Locale.ROOT);
      List<String> known = List.of(SystemSchema.STATUS_RUNNING, SystemSchema.STATUS_DONE, SystemSchema.STATUS_FAILED,
          SystemSchema.STATUS_CANCELLED);
      if (upper.equals("CANCELLED")) {
        return SystemSchema.STATUS_CANCELLED;
      }
      if (!known.contains(upper)) {
        throw new CliException("--status takes one of " + String.join(", ", known) + ", not '" + given + "'", 2,
            null);
      }
      return upper;
    }

    /** {@code --since}: an ISO-8601 instant, or an amount of seconds, minutes, hours or days before {@code now}. */
    static Instant since(String given, Instant now) {
      java.util.regex.Matcher ago = java.util.regex.Pattern.compile("(\\d{1,9})([smhd])").matcher(given.strip());
      if (ago.matches()) {
        long amount = Long.parseLong(ago.group(1));
        Duration unit = switch (ago.group(2)) {
          case "s" -> Duration.ofSeconds(1);
          case "m" -> Duration.ofMinutes(1);
          case "h" -> Duration.ofHours(1);
          default -> Duration.ofDays(1);
        };
        return now.minus(unit.multipliedBy(amount));
      }
      try {
        return Instant.parse(given.strip());
      } catch (java.time.format.DateTimeParseException e) {
        throw new CliException("--since takes an instant (2026-11-29T10:00:00Z) or a time ago (90s, 15m, 2h, 1d), "
            + "not '" + given + "'", 2, e);
      }
    }

    private void print(List<String[]> rows) {
      int[] widths = new int[rows.get(0).length];
      for (String[] row : rows) {
        for (int i = 0; i < row.length; i++) {
          widths[i] = Math.max(widths[i], row[i].length());
        }
      }
      for (String[] row : rows) {
        StringBuilder line = new StringBuilder();
        for (int i = 0; i < row.length; i++) {
          line.append(i == 0 ? "" : "  ").append(i == row.length - 1 ? row[i] : pad(row[i], widths[i]));
        }
        out.println(line.toString().stripTrailing());
      }
    }

    private static String pad(String s, int width) {
      return s + " ".repeat(width - s.length());
    }
  }

  /** {@code executions cancel ID --reason R} (issue 42). */
  @Command(name = "cancel", mixinStandardHelpOptions = true,
      description = {"Cancel a running invocation: its outcome is stored as cancelled, with the reason, in the "
          + "invocation log; no function of it starts after that, and one running then commits or rolls back as it "
          + "would. Its waiting clients and later result(id) calls are told it was cancelled. An invocation that had "
          + "ended keeps its outcome.",
          "Exit code 0 if this cancelled it, 1 if it is not in the log or had already ended."})
  static final class Cancel implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "ID", description = "The invocation ID as logged: where API keys are "
        + "required, the caller's identity, '/', and the ID the client sent (IDENTITY/ID).")
    String id;

    @Option(names = "--reason", required = true, paramLabel = "TEXT",
        description = "Why it is cancelled (1 to " + WireRequest.MAX_REASON_LENGTH + " characters), stored with it.")
    String reason;

    @ArgGroup(exclusive = false, multiplicity = "0..1") // ServiceTarget.Database checks what goes together
    ServiceTarget.Database target;

    @Spec
    CommandSpec spec;

    private final PrintStream out = System.out;

    @Override
    public Integer call() {
      if (target == null) {
        throw ServiceTarget.missing(spec, "--database HOST:PORT");
      }
      if (reason.isBlank() || reason.length() > WireRequest.MAX_REASON_LENGTH) {
        throw new ParameterException(spec.commandLine(), "--reason must have 1 to " + WireRequest.MAX_REASON_LENGTH
            + " characters and not be blank, not " + reason.length());
      }
      try (ApiaryDatabase db = ApiaryDatabase.open(target.config())) {
        SystemSchema.ensure(db);
        byte[] cancelled = WireReply.error(id, WireReply.CANCELLED, "invocation " + id + " was cancelled: "
            + reason).toBytes();
        long done = db.callAdmin("cancelling invocation " + id, SystemSchema.CANCEL_INVOCATION, id, cancelled)
            .getResults()[0].asScalarLong();
        if (done == 1) {
          out.println("invocation " + id + " cancelled: " + reason);
          return 0;
        }
        VoltTable t = db.callAdmin("reading invocation " + id, "@AdHoc", "SELECT status FROM "
            + SystemSchema.INVOCATIONS + " WHERE invocation_id = ?", id).getResults()[0];
        throw new CliException(t.advanceRow() ? "invocation " + id + " had already ended (" + t.getString(0)
            + "); its outcome stands" : "invocation " + id + " is not in the log of " + target.describe()
            + ": it is unknown, or ended longer ago than the retention and was deleted");
      }
    }
  }

  /** {@code executions resume ID [--latest]} (issue 42). */
  @Command(name = "resume", mixinStandardHelpOptions = true,
      description = {"Resume a failed or cancelled invocation from its first unfinished function: the functions "
          + "that committed are replayed from their records, not run again; recorded failures are deleted so those "
          + "functions run again. It runs under its graph version (or the graph's latest with --latest), on the live "
          + "frontend named with --frontend-id or else the one whose lease runs longest, within about ten of its "
          + "heartbeats; follow it with `apiary executions show ID`.",
          "Exit code 1 if the ID is not in the log, the invocation is running or ended with a result, or no frontend "
              + "is live."})
  static final class Resume implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "ID", description = "The invocation ID as logged: where API keys are "
        + "required, the caller's identity, '/', and the ID the client sent (IDENTITY/ID).")
    String id;

    @Option(names = "--latest", description = "Run under the graph's latest registered version instead of its own.")
    boolean latest;

    @Option(names = "--frontend-id", paramLabel = "FRONTEND", description = "The live frontend to run it (its ID, as "
        + "`apiary status` lists it); default: the one whose lease runs longest.")
    String frontendId;

    @ArgGroup(exclusive = false, multiplicity = "0..1") // ServiceTarget.Database checks what goes together
    ServiceTarget.Database target;

    @Spec
    CommandSpec spec;

    private final PrintStream out = System.out;

    @Override
    public Integer call() {
      if (target == null) {
        throw ServiceTarget.missing(spec, "--database HOST:PORT");
      }
      try (ApiaryDatabase db = ApiaryDatabase.open(target.config())) {
        org.apiary.frontend.Invocations.Resumed r;
        try {
          r = org.apiary.frontend.Invocations.resume(db, id, latest, frontendId);
        } catch (org.apiary.InvalidRequestException e) {
          throw new CliException(e.getMessage());
        }
        out.println("invocation " + id + " (" + r.was() + ") resumed under graph version " + r.graphVersion()
            + " on frontend " + r.frontend());
        return 0;
      }
    }
  }

  /** {@code executions show ID}. */
  @Command(name = "show", mixinStandardHelpOptions = true,
      description = {"Show one logged invocation: its graph and version, status, frontend, attempts and timing, the "
          + "request (partition key and arguments, as JSON) and the outcome (the result as JSON, or the error).",
          "Where the provenance sink is known (--data DIR, or --provenance-sink), also the function executions of "
              + "the invocation from " + ProvenanceSchema.FUNCTION_INVOCATIONS + ". A running `apiary start` holds "
              + "its DuckDB file open, and DuckDB lets one process open it: its functions are listed after "
              + "`apiary stop`.",
          NOT_LOGGED,
          "Exit code 1 if the ID is not in the log."})
  static final class Show implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "ID", description = "The invocation ID as logged: where API keys are "
        + "required, the caller's identity, '/', and the ID the client sent (IDENTITY/ID).")
    String id;

    @ArgGroup(exclusive = false, multiplicity = "0..1") // ServiceTarget.Database checks what goes together
    ServiceTarget.Database target;

    @Option(names = "--provenance-sink", paramLabel = "JDBC_URL",
        description = "Where provenance is loaded, to list the invocation's function executions (default with --data: "
            + "the service's sink).")
    String provenanceSink;

    @Spec
    CommandSpec spec;

    private final PrintStream out = System.out;

    @Override
    public Integer call() {
      if (target == null) {
        throw ServiceTarget.missing(spec, "--database HOST:PORT");
      }
      String sink = provenanceSink;
      if (sink == null) {
        sink = target.provenanceSink();
      }
      try (ApiaryDatabase db = ApiaryDatabase.open(target.config())) {
        if (!SystemSchema.tables(db).contains(SystemSchema.INVOCATIONS)) {
          throw new CliException("invocation " + id + " is not in the log: " + target.describe() + " has no "
              + "invocation log (nothing was deployed with it)");
        }
        String columns = "SELECT invocation_id, graph, graph_version, status, frontend, attempts, " + TIMES
            + ", request, result FROM " + SystemSchema.INVOCATIONS;
        VoltTable t = db.callAdmin("reading invocation " + id, "@AdHoc", columns + " WHERE invocation_id = ?", id)
            .getResults()[0];
        if (t.getRowCount() == 0 && !id.contains("/")) {
          // Where API keys are required the log holds IDENTITY/ID; a client (invoke --no-wait) knows only its ID.
          t = db.callAdmin("reading invocation */" + id, "@AdHoc", columns + " WHERE RIGHT(invocation_id, ?) = ? "
              + "ORDER BY invocation_id LIMIT 10", id.length() + 1, "/" + id).getResults()[0];
          if (t.getRowCount() > 1) {
            List<String> ids = new ArrayList<>();
            while (t.advanceRow()) {
              ids.add(t.getString(0));
            }
            throw new CliException("invocation " + id + " was started by several callers: " + String.join(", ", ids)
                + "; show one by its full ID");
          }
        }
        if (!t.advanceRow()) {
          throw new CliException("invocation " + id + " is not in the log of " + target.describe() + ": it is unknown, "
              + "ended longer ago than the retention (default 1 hour) and was deleted, or ran before issue 42 in a "
              + "graph that was not logged then (one recorded function, or recording nothing); list what is there "
              + "with: apiary "
              + "executions list" + (id.contains("/") ? "" : ". Where API keys are required an invocation is logged "
              + "as its caller's identity, '/', and its ID: an invocation of `apiary start`'s admin key is admin/"
              + id));
        }
        Times times = Times.read(t, 6);
        out.println("invocation " + t.getString(0));
        out.println("  graph: " + t.getString(1) + ", version " + t.getLong(2));
        out.println("  status: " + t.getString(3));
        out.println("  frontend: " + t.getString(4) + " (the one running it, or that ran its last attempt)");
        out.println("  attempts: " + t.getLong(5));
        out.println("  started: " + times.started() + ", finished: " + times.finished() + ", duration: "
            + times.duration());
        out.println("  request: " + request(t.getVarbinary(9)));
        byte[] result = t.getVarbinary(10);
        out.println("  " + (t.wasNull() || result == null ? "outcome: none yet (still running)" : outcome(result)));
      }
      functions(sink);
      return 0;
    }

    private static String request(byte[] frame) {
      WireRequest r;
      try {
        r = WireRequest.fromBytes(frame);
      } catch (IllegalArgumentException e) {
        return "(cannot be decoded: " + e.getMessage() + ")";
      }
      StringBuilder s = new StringBuilder();
      s.append("key ").append(r.key() == null ? "(none)" : json(r.key()));
      s.append(", arguments ").append(r.args() == null ? "[]" : json(Json.MAPPER.valueToTree(r.args())));
      if (r.caller() != null) {
        s.append(", caller ").append(r.caller());
      }
      return s.toString();
    }

    private static String outcome(byte[] frame) {
      WireReply r;
      try {
        r = WireReply.fromBytes(frame);
      } catch (IllegalArgumentException e) {
        return "outcome: (cannot be decoded: " + e.getMessage() + ")";
      }
      if (WireReply.OK.equals(r.status())) {
        return "result: " + InvokeCommand.toJson(r.outputs() == null ? List.of() : r.outputs());
      }
      StringBuilder s = new StringBuilder("error: ").append(r.error());
      if (r.function() != null) {
        s.append(" in function '").append(r.function()).append('\'');
      }
      if (r.functionError() != null) {
        s.append(" (").append(r.functionError()).append(')');
      }
      return s.append(": ").append(r.message()).toString();
    }

    private static String json(JsonNode node) {
      try {
        return Json.MAPPER.writeValueAsString(node);
      } catch (JsonProcessingException e) {
        return "(cannot be printed as JSON: " + e.getMessage() + ")";
      }
    }

    /** The invocation's function executions from the provenance sink, or a line saying why they are not shown. */
    private void functions(String sink) {
      if (sink == null) {
        out.println("  functions: not shown (the provenance sink is not known here: give --provenance-sink "
            + "JDBC_URL, or --data DIR for an `apiary start` that captures provenance)");
        return;
      }
      Properties props = new Properties();
      boolean duckdb = sink.regionMatches(true, 0, "jdbc:duckdb:", 0, "jdbc:duckdb:".length());
      if (duckdb) {
        props.setProperty("duckdb.read_only", "true");
      }
      try (ProvenanceSink opened = ProvenanceSink.open(sink, props, Duration.ofSeconds(10))) {
        List<Map<String, Object>> rows = new ProvenanceQueries(opened.connection()).sql("SELECT function_name, "
            + "exec_id, partition_key, event_time, latency_us FROM " + ProvenanceSchema.FUNCTION_INVOCATIONS
            + " WHERE execution_id = ? ORDER BY event_time, exec_id", id);
        out.println("  functions: " + rows.size() + " execution(s) in " + sink + " (rows still buffered by the "
            + "capture are not there yet)");
        for (Map<String, Object> r : rows) {
          out.println("    " + r.get("function_name") + ": exec " + r.get("exec_id") + ", partition key "
              + r.get("partition_key") + ", at " + r.get("event_time") + ", " + r.get("latency_us") + " us");
        }
      } catch (SQLException e) {
        String message = String.valueOf(e.getMessage());
        if (duckdb && message.toLowerCase(Locale.ROOT).contains("lock")) {
          out.println("  functions: not readable now: " + sink.substring("jdbc:duckdb:".length()) + " is locked by "
              + "the process that loads provenance into it (the running `apiary start`; DuckDB lets one process open "
              + "a file). After `apiary stop` they can be queried with: apiary provenance sql --sink " + sink
              + " \"SELECT * FROM " + ProvenanceSchema.FUNCTION_INVOCATIONS + " WHERE execution_id = '" + id + "'\"");
        } else {
          out.println("  functions: cannot read the provenance sink " + sink + ": " + message);
        }
      }
    }
  }

  /** An invocation's times in milliseconds by the database's clock (its end 0 while it runs). */
  private record Times(long startedMs, long finishedMs, long nowMs) {
    static Times read(VoltTable t, int first) {
      long started = t.getLong(first);
      long finished = t.getLong(first + 1);
      boolean running = t.wasNull();
      return new Times(started, running ? 0 : finished, t.getLong(first + 2));
    }

    String started() {
      return Instant.ofEpochMilli(startedMs).toString();
    }

    String finished() {
      return finishedMs == 0 ? "-" : Instant.ofEpochMilli(finishedMs).toString();
    }

    String duration() {
      return finishedMs == 0 ? "running for " + seconds(nowMs - startedMs) : seconds(finishedMs - startedMs);
    }

    String finishedOrNull() {
      return finishedMs == 0 ? null : Instant.ofEpochMilli(finishedMs).toString();
    }

    /** Milliseconds it took, or has taken so far if it runs. */
    long durationMs() {
      return (finishedMs == 0 ? nowMs : finishedMs) - startedMs;
    }

    private static String seconds(long millis) {
      return String.format(Locale.ROOT, "%.3f s", millis / 1000.0);
    }
  }
}
