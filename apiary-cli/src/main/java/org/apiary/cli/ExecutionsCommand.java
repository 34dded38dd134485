package org.apiary.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.Rows;
import org.apiary.frontend.Invocations;
import org.apiary.frontend.query.ExecutionQueries;
import org.apiary.frontend.query.FilterException;
import org.apiary.internal.Json;
import org.apiary.internal.wire.WireReply;
import org.apiary.internal.wire.WireRequest;
import org.apiary.provenance.ProvenanceSchema;
import org.apiary.provenance.ProvenanceReports;
import org.apiary.runtime.SystemSchema;
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

  @Spec
  CommandSpec spec;

  @Override
  public void run() {
    throw new ParameterException(spec.commandLine(), "name a subcommand: apiary executions list, apiary "
        + "executions show ID, or apiary executions cancel ID --reason TEXT");
  }

  /** {@code executions list}. */
  @Command(name = "list", mixinStandardHelpOptions = true,
      description = {"List invocations, newest first: ID, graph and version, status (QUEUED, RUNNING, DONE, FAILED, "
          + "CANCELED; QUEUED: waiting on a queue or for its delay, not started, shown with the time it was "
          + "enqueued and version 0), "
          + "the frontend running or last running it, attempts, start and end time (the database's clock, UTC) and "
          + "duration.", NOT_LOGGED, "Where the provenance sink is known (--data DIR, or --provenance-sink), "
          + "those past the retention too, from its " + ProvenanceSchema.INVOCATIONS + " (one page merged from both, "
          + "an invocation in both shown once as the log has it; asked of a running `apiary start` through its "
          + "console, read from the file once it stopped). If the sink cannot be read, the log's are listed and a "
          + "warning on stderr says why."})
  static final class ListExecutions implements Callable<Integer> {
    @Option(names = "--running", description = "Only invocations still running (--status RUNNING).")
    boolean running;

    @Option(names = "--failed", description = "Only invocations that ended failed (--status FAILED).")
    boolean failed;

    @Option(names = "--status", paramLabel = "S", description = "Only invocations with this status: QUEUED, RUNNING, "
        + "DONE, FAILED or CANCELED (any case).")
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

    @Option(names = "--provenance-sink", paramLabel = "JDBC_URL",
        description = "Where provenance is loaded, to list the invocations the log no longer holds from its "
            + ProvenanceSchema.INVOCATIONS + " (default with --data: the service's sink).")
    String provenanceSink;

    @ArgGroup(exclusive = false, multiplicity = "0..1") // ServiceTarget.Database checks what goes together
    ServiceTarget.Database target;

    @Spec
    CommandSpec spec;

    private PrintWriter out;
    private PrintWriter err;

    @Override
    public Integer call() {
      out = spec.commandLine().getOut();
      err = spec.commandLine().getErr();
      try {
        return list();
      } finally {
        out.flush();
        err.flush();
      }
    }

    private Integer list() {
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
      // The Java API's query (org.apiary.frontend.Invocations.list): the command line lists what it lists.
      Invocations.Query query = new Invocations.Query(graph, wanted, since == null ? null : since(since,
          Instant.now()), limit);
      ProvenanceSource provenance = null;
      try {
        provenance = provenance(provenanceSink, target);
      } catch (CliException e) {
        err.println("warning: invocations past the log's retention are not listed: " + e.getMessage());
      }
      if (provenance != null && target.data != null && !ClusterDirectory.isCluster(target.data)
          && new ServiceDirectory(target.data).holder().isEmpty()) {
        // Stopped: its database (and log) with it; every invocation that ended is in its sink.
        err.println("note: Apiary in " + target.data + " is stopped: listed from its provenance sink alone (an "
            + "invocation running when it stopped is not there)");
        Invocations.Listing listing;
        try {
          listing = Invocations.list(null, query, provenance::answer);
        } catch (org.apiary.InvalidRequestException e) {
          throw new CliException("the provenance sink of " + target.describe() + " could not be read: "
              + e.getMessage());
        }
        return print(listing, query, "in the log of " + target.describe() + " or its provenance sink");
      }
      try (ApiaryDatabase db = ApiaryDatabase.open(target.config())) {
        if (!ExecutionQueries.hasLog(db)) {
          if (!json) {
            out.println("no invocations: Apiary's system tables are not there (nothing was deployed with "
                + target.describe() + ")");
          }
          return 0;
        }
        Invocations.Listing listing = Invocations.list(db, query, provenance == null ? null : provenance::answer);
        if (listing.sinkProblem() != null) {
          err.println("warning: " + listing.sinkProblem());
        }
        return print(listing, query, provenance == null || listing.sinkProblem() != null ? "in the log of "
            + target.describe() : "in the log of " + target.describe() + " or its provenance sink");
      }
    }

    /** The listing as a table (or JSON lines) and a line saying how many; {@code where} they were looked for. */
    private int print(Invocations.Listing listing, Invocations.Query query, String where) {
      Long count = listing.total();
      List<String[]> rows = new ArrayList<>();
      rows.add(new String[] {"ID", "GRAPH", "VERSION", "STATUS", "FRONTEND", "ATTEMPTS", "STARTED", "FINISHED",
          "DURATION"});
      for (Invocations.Summary e : listing.invocations()) {
        Times times = Times.of(e);
        if (json) {
          com.fasterxml.jackson.databind.node.ObjectNode o = Json.MAPPER.createObjectNode();
          o.put("id", e.id()).put("graph", e.graph()).put("version", e.graphVersion())
              .put("status", e.status()).put("frontend", e.frontend()).put("attempts", e.attempts())
              .put("startedAt", times.started()).put("finishedAt", times.finishedOrNull())
              .put("durationMs", e.duration().toMillis());
          out.println(o.toString());
          continue;
        }
        rows.add(new String[] {e.id(), e.graph(), String.valueOf(e.graphVersion()), e.status(),
            e.frontend() == null ? "-" : e.frontend(),
            String.valueOf(e.attempts()), times.started(), times.finished(), times.duration()});
      }
      if (json) {
        return 0;
      }
      // "no failed invocations" with a status alone (as before --graph and --since), "matching" with others.
      String which = query.graph() == null && query.status() == null && query.since() == null ? ""
          : query.graph() == null && query.since() == null ? query.status().toLowerCase(Locale.ROOT) + " "
          : "matching ";
      if (rows.size() == 1) {
        out.println("no " + which + "invocations " + where);
        return 0;
      }
      print(rows);
      if (count == null) { // the sink was read: Invocations.Listing says why it is not counted
        out.println((rows.size() - 1) + " " + which + "invocation(s) " + where + ", newest first"
            + (listing.more() ? " (more: --limit " + limit + ")" : ""));
      } else {
        out.println((rows.size() - 1) + " of " + count + " " + which + "logged invocation(s), newest first"
            + (count > rows.size() - 1 ? " (--limit " + limit + ")" : ""));
      }
      return 0;
    }

    /** A status as the log stores it, from any case; refused naming the four if it is none of them. */
    static String status(String given) {
      try {
        return ExecutionQueries.status("--status", given);
      } catch (FilterException e) {
        throw new CliException(e.getMessage(), 2, null);
      }
    }

    /** {@code --since}: an ISO-8601 instant, or an amount of seconds, minutes, hours or days before {@code now}. */
    static Instant since(String given, Instant now) {
      try {
        return ExecutionQueries.since("--since", given, now);
      } catch (FilterException e) {
        throw new CliException(e.getMessage(), 2, e);
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
      description = {"Cancel a queued or running invocation: one waiting on a queue or for its delay is ended there "
          + "as cancelled and never starts; a running one's outcome is stored as cancelled, with the reason, in the "
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

    private PrintWriter out;

    @Override
    public Integer call() {
      out = spec.commandLine().getOut();
      try {
        return cancel();
      } finally {
        out.flush();
      }
    }

    private Integer cancel() {
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
        long done = db.callAdminForRows("cancelling invocation " + id, SystemSchema.CANCEL_INVOCATION, id,
            cancelled).scalarLong();
        if (done == 1) {
          out.println("invocation " + id + " cancelled: " + reason);
          return 0;
        }
        if (cancelledWhileQueued(db)) {
          return 0;
        }
        Rows t = db.query("reading invocation " + id, "SELECT status FROM " + SystemSchema.INVOCATIONS
            + " WHERE invocation_id = ?", id);
        throw new CliException(!t.isEmpty() ? "invocation " + id + " had already ended (" + t.rows().get(0)
            .getString(0) + "); its outcome stands" : "invocation " + id + " is not in the log of " + target.describe()
            + ": it is unknown, or ended longer ago than the retention and was deleted");
      }
    }

    /**
     * Cancels the invocation if it still waits on a queue or for its delay (not logged yet, issue 42), as a client's
     * cancel does ({@code CancelQueueItem}, in the queue's partition): true if it did.
     */
    private boolean cancelledWhileQueued(ApiaryDatabase db) {
      if (!SystemSchema.tables(db).contains(SystemSchema.QUEUE_ITEMS)) {
        return false;
      }
      Rows q = db.query("looking for queue item " + id, "SELECT queue_name FROM " + SystemSchema.QUEUE_ITEMS
          + " WHERE invocation_id = ? AND status = 'QUEUED'", id);
      if (q.isEmpty()) {
        return false;
      }
      String queue = q.rows().get(0).getString(0);
      byte[] cancelled = WireReply.error(id, WireReply.CANCELLED, "invocation " + id + " was cancelled while it "
          + "waited on queue " + queue + ": " + reason).toBytes();
      if (db.callAdminForRows("cancelling queue item " + id, SystemSchema.CANCEL_QUEUE_ITEM, queue, id, cancelled)
          .scalarLong() == 0) {
        return false; // a claim took it meanwhile: it is cancelled through the log, or reported as it stands
      }
      out.println("invocation " + id + " cancelled before it started (it waited on queue " + queue + "): " + reason);
      return true;
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
              + "the invocation from " + ProvenanceSchema.FUNCTION_INVOCATIONS + ": asked of a running `apiary "
              + "start` through its console (its process holds its DuckDB file), read from the file once it stopped.",
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

    private PrintWriter out;

    @Override
    public Integer call() {
      out = spec.commandLine().getOut();
      try {
        return show();
      } finally {
        out.flush();
      }
    }

    private Integer show() {
      if (target == null) {
        throw ServiceTarget.missing(spec, "--database HOST:PORT");
      }
      findProvenance();
      try (ApiaryDatabase db = ApiaryDatabase.open(target.config())) {
        if (!ExecutionQueries.hasLog(db)) {
          throw new CliException("invocation " + id + " is not in the log: " + target.describe() + " has no "
              + "invocation log (nothing was deployed with it)");
        }
        ExecutionQueries.Detail d;
        try {
          d = ExecutionQueries.find(db, id).orElse(null);
        } catch (ExecutionQueries.AmbiguousIdException e) {
          throw new CliException(e.getMessage() + "; show one by its full ID");
        }
        if (d == null && fromSink()) {
          return 0;
        }
        if (d == null) {
          throw new CliException("invocation " + id + " is not in the log of " + target.describe()
              + (provenance == null ? "" : " nor in its provenance sink") + ": it is unknown, "
              + "ended longer ago than the retention (default 1 hour) and was deleted, or ran before issue 42 in a "
              + "graph that was not logged then (one recorded function, or recording nothing); list what is there "
              + "with: apiary "
              + "executions list" + (id.contains("/") ? "" : ". Where API keys are required an invocation is logged "
              + "as its caller's identity, '/', and its ID: an invocation of `apiary start`'s admin key is admin/"
              + id));
        }
        ExecutionQueries.Execution e = d.execution();
        Times times = Times.of(e);
        out.println("invocation " + e.id());
        out.println("  graph: " + e.graph() + ", version " + e.version());
        out.println("  status: " + e.status());
        out.println("  frontend: " + e.frontend() + " (the one running it, or that ran its last attempt)");
        out.println("  attempts: " + e.attempts());
        out.println("  started: " + times.started() + ", finished: " + times.finished() + ", duration: "
            + times.duration());
        out.println("  request: " + request(d.request()));
        byte[] result = d.outcome();
        out.println("  " + (result != null ? outcome(result) : ExecutionQueries.STATUS_QUEUED.equals(e.status())
            ? "outcome: none yet (queued: waiting on its queue or for its delay, not started)"
            : "outcome: none yet (still running)"));
        functions(e.id());
      }
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

    /** Where the provenance sink's rows are asked for ({@link #findProvenance}), or {@code null}. */
    private ProvenanceSource provenance;
    /** Why {@link #provenance} is {@code null}, as it follows "functions: not shown". */
    private String noProvenance;

    /**
     * Finds, once, where the provenance sink's rows are asked for: the running service with {@code --data} (its
     * process holds the sink), {@code --provenance-sink} or a stopped service's sink otherwise; none, with why, if
     * none is known or {@code --data} names a service that captures no provenance or serves no console.
     */
    private void findProvenance() {
      try {
        provenance = ExecutionsCommand.provenance(provenanceSink, target);
        noProvenance = provenance != null ? null : " (the provenance sink is not known here: give --provenance-sink "
            + "JDBC_URL, or --data DIR for an `apiary start` that captures provenance)";
      } catch (CliException e) {
        noProvenance = ": " + e.getMessage();
      }
    }

    /**
     * An invocation the log no longer holds (ended longer ago than the retention), shown from the provenance sink's
     * {@code Invocations} (how it ended: each end of it, a resumed one ends again) and its function executions;
     * false if the sink does not know it either (or no sink is known).
     */
    private boolean fromSink() {
      if (provenance == null) {
        return false;
      }
      ProvenanceReports.Report ends;
      try {
        ends = provenance.answer("invocation", Map.of("execution", id));
      } catch (SQLException | RuntimeException e) {
        out.println("invocation " + id + ": not in the log, and its provenance sink could not be read: "
            + e.getMessage());
        return false;
      }
      if (ends.rows().isEmpty()) {
        return false;
      }
      java.util.Set<String> ids = new java.util.TreeSet<>();
      ends.rows().forEach(r -> ids.add(r.get(0)));
      if (ids.size() > 1) {
        throw new CliException("the ID " + id + " names several callers' invocations in the provenance sink: "
            + String.join(", ", ids) + "; show one by its full ID");
      }
      List<String> last = ends.rows().get(ends.rows().size() - 1);
      out.println("invocation " + last.get(0) + " (from the provenance sink: it ended longer ago than the retention, "
          + "so its request and result are no longer kept)");
      out.println("  graph: " + last.get(1) + ", version " + last.get(2));
      out.println("  status: " + last.get(3) + ("NULL".equals(last.get(4)) ? "" : ": " + last.get(4)));
      out.println("  frontend: " + last.get(7) + " (the one that ran its last attempt)");
      out.println("  caller: " + last.get(8) + ", attempts: " + last.get(9));
      out.println("  started: " + last.get(5) + ", finished: " + last.get(6)
          + (ends.rows().size() > 1 ? " (it ended " + ends.rows().size() + " times: resumed)" : ""));
      functions(last.get(0));
      return true;
    }

    /** The invocation's function executions in the provenance sink, or a line saying why they are not shown. */
    private void functions(String executionId) {
      ProvenanceSource source = provenance;
      if (source == null) {
        out.println("  functions: not shown" + noProvenance);
        return;
      }
      try {
        ProvenanceReports.Report report = source.answer("functions", Map.of("execution", executionId));
        out.println("  functions: " + report.rows().size() + " execution(s) in " + source.describe() + " (rows still "
            + "buffered by the capture are not there yet)");
        for (List<String> r : report.rows()) {
          out.println("    " + r.get(0) + ": exec " + r.get(1) + ", partition key " + r.get(2) + ", at " + r.get(3)
              + ", " + r.get(4) + " us");
        }
      } catch (SQLException | RuntimeException e) {
        out.println("  functions: cannot read the provenance of " + source.describe() + ": " + e.getMessage());
      }
    }
  }

  /**
   * Where the provenance sink's rows are asked for: {@code --provenance-sink}, or the service of {@code --data} (its
   * running process, which holds the sink, or the file once it stopped); {@code null} if neither is given.
   *
   * @throws CliException naming why not, where {@code --data} names a service that captures no provenance or serves
   *     no console
   */
  static ProvenanceSource provenance(String provenanceSink, ServiceTarget.Database target) {
    return provenanceSink != null ? ProvenanceSource.sink(provenanceSink, new java.util.Properties())
        : target.data != null ? ProvenanceSource.data(target.data) : null;
  }

  /** An invocation's times in milliseconds by the database's clock (its end 0 while it runs). */
  private record Times(long startedMs, long finishedMs, long nowMs, boolean queued) {
    static Times of(ExecutionQueries.Execution e) {
      return new Times(e.startedMs(), e.finishedMs(), e.nowMs(), ExecutionQueries.STATUS_QUEUED.equals(e.status()));
    }

    static Times of(Invocations.Summary e) {
      long started = e.startedAt().toEpochMilli();
      return new Times(started, e.finishedAt() == null ? 0 : e.finishedAt().toEpochMilli(),
          started + e.duration().toMillis(), ExecutionQueries.STATUS_QUEUED.equals(e.status()));
    }

    String started() {
      return Instant.ofEpochMilli(startedMs).toString();
    }

    String finished() {
      return finishedMs == 0 ? "-" : Instant.ofEpochMilli(finishedMs).toString();
    }

    String duration() {
      return finishedMs == 0 ? (queued ? "queued for " : "running for ") + seconds(nowMs - startedMs)
          : seconds(finishedMs - startedMs);
    }

    String finishedOrNull() {
      return finishedMs == 0 ? null : Instant.ofEpochMilli(finishedMs).toString();
    }

    private static String seconds(long millis) {
      return String.format(Locale.ROOT, "%.3f s", millis / 1000.0);
    }
  }
}
