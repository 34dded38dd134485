package org.apiary.console;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.CredentialCheck;
import org.apiary.frontend.RegisteredGraph;
import org.apiary.frontend.query.ExecutionQueries;
import org.apiary.frontend.query.FilterException;
import org.apiary.internal.Json;
import org.apiary.internal.http.HttpEndpoint.Request;
import org.apiary.internal.http.HttpEndpoint.Response;
import org.apiary.internal.wire.WireReply;
import org.apiary.internal.wire.WireRequest;
import org.apiary.provenance.ProvenanceReports;
import org.apiary.provenance.ProvenanceSchema;
import org.apiary.provenance.ProvenanceSink;

/**
 * The console's JSON API: {@code /api/executions}, {@code /api/executions/{id}}, {@code /api/graphs},
 * {@code /api/cluster} and {@code /api/provenance/{query}} (the {@link ProvenanceReports} queries, with their
 * parameters in the query string), each for a caller whose API key ({@code Authorization: Bearer KEY}) carries the configured
 * role ({@code 401} without a valid key, {@code 403} without the role). Every database or sink read runs on the
 * query pool within the timeout. What the database or the sink cannot answer is named in a {@code problems} array
 * ({@code source} database or sink, and why) beside what could be answered.
 */
final class ConsoleApi {
  private static final Logger LOG = System.getLogger(ConsoleApi.class.getName());

  /** The filters of {@code /api/executions}, and {@code after}, its page cursor. */
  static final Set<String> EXECUTION_PARAMETERS = Set.of("graph", "status", "since", "caller", "frontend", "prefix",
      "after");

  /** Arguments and results longer than this (as JSON text) are cut, their text kept up to here. */
  static final int CUT = 4096;

  /** How often the keys are read again at most (a frontend reads them every second). */
  private static final long KEYS_MAX_AGE_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final ApiaryDatabase db;
  private final ConsoleConfig config;
  private final ExecutorService queries;
  private final Object keysLock = new Object();
  private CredentialCheck keys; // guarded by keysLock
  private long keysReadAt; // guarded by keysLock

  private final java.time.Duration sqlTimeout;
  private final ConsoleMetrics metrics;

  ConsoleApi(ApiaryDatabase db, ConsoleConfig config, ExecutorService queries, java.time.Duration sqlTimeout,
             ConsoleMetrics metrics) {
    this.db = db;
    this.config = config;
    this.queries = queries;
    this.sqlTimeout = sqlTimeout;
    this.metrics = metrics;
  }

  /** A JSON answer with a message and the field or ID it names. */
  private static final class Refusal extends Exception {
    private static final long serialVersionUID = 1L;
    final int status;
    final transient ObjectNode body;

    Refusal(int status, String message) {
      super(message);
      this.status = status;
      this.body = Json.MAPPER.createObjectNode().put("error", message);
    }

    Refusal with(String name, String value) {
      body.put(name, value);
      return this;
    }
  }

  /** Answers a request, counting it by page and status ({@link ConsoleMetrics}). */
  Response handle(Request request) {
    long started = System.nanoTime();
    Response response = route(request);
    metrics.served(ConsoleMetrics.page(request.path()), response.status(), System.nanoTime() - started);
    return response;
  }

  private Response route(Request request) {
    try {
      String path = request.path();
      if (path.equals("/health")) {
        return Response.text(200, "up\n");
      } else if (path.equals("/ready")) {
        return ready();
      } else if (!path.startsWith("/api/") && !path.equals("/metrics")) {
        return ConsolePages.page(path);
      }
      if (config.credentialsRequired()) {
        authorize(request.header("authorization"));
      }
      if (path.equals("/metrics")) {
        return new Response(200, "text/plain; version=0.0.4; charset=utf-8",
            metrics.scrape().getBytes(StandardCharsets.UTF_8));
      }
      Map<String, String> parameters = parameters(request.rawQuery());
      ObjectNode body;
      if (path.equals("/api/executions")) {
        body = executions(parameters);
      } else if (path.startsWith("/api/executions/") && path.length() > "/api/executions/".length()) {
        noParameters(parameters);
        body = execution(decode("id", path.substring("/api/executions/".length())));
      } else if (path.equals("/api/graphs")) {
        noParameters(parameters);
        body = graphs();
      } else if (path.equals("/api/cluster")) {
        noParameters(parameters);
        body = cluster();
      } else if (path.equals("/api/lineage")) {
        body = lineage(parameters);
      } else if (path.equals("/api/sql")) { // the SQL page's; /api/provenance/sql stays the command line's
        body = sql(parameters);
      } else if (path.startsWith("/api/provenance/")) {
        body = provenance(decode("query", path.substring("/api/provenance/".length())), parameters);
      } else {
        throw new Refusal(404, NO_SUCH_PATH).with("path", path);
      }
      return json(200, body);
    } catch (Refusal r) {
      Response response = json(r.status, r.body);
      return r.status == 401 ? response.withHeader("WWW-Authenticate", "Bearer realm=\"apiary console\"") : response;
    }
  }

  /** {@code /ready}: 200 once the database answers within the query timeout, else 503 saying why. */
  private Response ready() {
    try {
      query("asking the database", () -> db.callAdmin("asking the database", "@Ping"));
      return Response.text(200, "ready\n");
    } catch (Refusal r) {
      return Response.text(503, "not ready: " + r.body.path("error").asText(r.getMessage()) + "\n");
    }
  }

  private static final String NO_SUCH_PATH = "no such path: the console answers /api/executions, "
      + "/api/executions/{id}, /api/graphs, /api/cluster, /api/lineage, /api/sql and /api/provenance/{query}, "
      + "/metrics, /health and /ready, and its pages under /";

  // --- /api/provenance/{query} ---

  /**
   * A provenance query's answer: {@code columns}, {@code rows} (each a list of cells as text, as the command line
   * prints them) and {@code message} (what to say when there are no rows, or null). {@code 400} names a bad
   * parameter, {@code 404} an unknown query or a console without a sink.
   */
  private ObjectNode provenance(String name, Map<String, String> parameters) throws Refusal {
    if (!ProvenanceReports.QUERIES.contains(name)) {
      throw new Refusal(404, "no provenance query '" + name + "': the queries are " + String.join(", ",
          new java.util.TreeSet<>(ProvenanceReports.QUERIES))).with("query", name);
    }
    if (config.sinkUrl() == null) {
      throw new Refusal(404, "this console has no provenance sink (the service captures no provenance)");
    }
    Object answer = query("the provenance query '" + name + "'", () -> {
      try (ProvenanceSink opened = openSink()) {
        return ProvenanceReports.runRolledBack(opened.connection(), name, parameters);
      } catch (IllegalArgumentException | SQLException e) {
        return e; // the query's own refusal, answered with its words alone (the command line prints them as its own)
      }
    });
    if (answer instanceof IllegalArgumentException e) {
      throw new Refusal(400, e.getMessage()).with("query", name);
    }
    if (answer instanceof SQLException e) {
      throw new Refusal(500, ProvenanceSink.redact(String.valueOf(e.getMessage()))).with("query", name)
          .with("source", "sink");
    }
    ProvenanceReports.Report report = (ProvenanceReports.Report) answer;
    ObjectNode body = Json.MAPPER.createObjectNode().put("query", name);
    ArrayNode columns = body.putArray("columns");
    report.columns().forEach(columns::add);
    ArrayNode rows = body.putArray("rows");
    for (List<String> row : report.rows()) {
      ArrayNode cells = rows.addArray();
      row.forEach(cells::add);
    }
    body.put("message", report.message());
    return body;
  }

  // --- /api/lineage ---

  /** How many record -> execution -> record steps a lineage follows. */
  static final int LINEAGE_DEPTH = 3;
  /** The most nodes a lineage holds; beyond them it says {@code more}. */
  static final int LINEAGE_NODES = 200;

  /**
   * A record's lineage ({@link ConsoleQueries#lineage}): {@code table} and {@code key} name the record;
   * {@code depth} (1 to {@value #LINEAGE_DEPTH}, default {@value #LINEAGE_DEPTH}) and {@code limit} (1 to
   * {@value #LINEAGE_NODES}, default {@value #LINEAGE_NODES}) bound it.
   */
  private ObjectNode lineage(Map<String, String> p) throws Refusal {
    for (String name : p.keySet()) {
      if (!Set.of("table", "key", "depth", "limit").contains(name)) {
        throw new Refusal(400, "unknown parameter '" + name + "': /api/lineage takes table, key, depth and limit")
            .with("field", name);
      }
    }
    for (String required : List.of("table", "key")) {
      if (!p.containsKey(required)) {
        throw new Refusal(400, "/api/lineage needs '" + required + "'").with("field", required);
      }
    }
    int depth = bound(p, "depth", LINEAGE_DEPTH);
    int limit = bound(p, "limit", LINEAGE_NODES);
    if (config.sinkUrl() == null) {
      throw new Refusal(404, "this console has no provenance sink (the service captures no provenance)");
    }
    Map<String, Object> key;
    try {
      key = ProvenanceReports.key(p.get("key"), "key");
    } catch (IllegalArgumentException e) {
      throw new Refusal(400, e.getMessage()).with("field", "key");
    }
    Object answer = query("the lineage of " + p.get("table") + " " + p.get("key"), () -> {
      try {
        return readingSink(q -> ConsoleQueries.lineage(q, ConsoleQueries.eventsTables(q,
            ConsoleQueries.primaryKeys(db)), p.get("table"), key, depth, limit));
      } catch (IllegalArgumentException | SQLException e) {
        return e;
      }
    });
    if (answer instanceof IllegalArgumentException e) {
      throw new Refusal(400, e.getMessage()).with("field", "table");
    }
    if (answer instanceof SQLException e) {
      throw new Refusal(500, ProvenanceSink.redact(String.valueOf(e.getMessage()))).with("source", "sink");
    }
    ConsoleQueries.Lineage lineage = (ConsoleQueries.Lineage) answer;
    ObjectNode body = Json.MAPPER.createObjectNode();
    body.put("table", p.get("table").toLowerCase(java.util.Locale.ROOT)).put("key", ConsoleQueries.keyText(key))
        .put("depth", depth).put("limit", limit).put("more", lineage.more());
    body.set("nodes", Json.MAPPER.valueToTree(lineage.nodes()));
    body.set("edges", Json.MAPPER.valueToTree(lineage.edges()));
    return body;
  }

  private static int bound(Map<String, String> p, String name, int most) throws Refusal {
    if (!p.containsKey(name)) {
      return most;
    }
    try {
      int v = Integer.parseInt(p.get(name));
      if (v >= 1 && v <= most) {
        return v;
      }
    } catch (NumberFormatException e) {
      // refused below
    }
    throw new Refusal(400, "'" + name + "' takes 1 to " + most + ", not '" + p.get(name) + "'").with("field", name);
  }

  // --- /api/sql: the SQL page ---

  /** The most rows the SQL page shows; {@code truncated} says there were more. */
  static final int SQL_ROWS = 1_000;
  /** How long the SQL page's query may run before it is stopped. */
  static final java.time.Duration SQL_TIMEOUT = java.time.Duration.ofSeconds(10);
  /** What a SQL page's query may begin with (after comments). */
  static final Set<String> SQL_STATEMENTS = Set.of("SELECT", "WITH");

  /**
   * The SQL page's query on the sink (the command line's {@code provenance sql} keeps {@code /api/provenance/sql},
   * whose answers equal those it prints without a service): {@code SELECT} or {@code WITH} only ({@code 400} otherwise, naming what it begins
   * with), at most {@value #SQL_ROWS} rows ({@code truncated} if it had more), stopped after {@link #sqlTimeout}
   * ({@code 504} saying so), inside a transaction that is rolled back.
   */
  private ObjectNode sql(Map<String, String> p) throws Refusal {
    for (String name : p.keySet()) {
      if (!name.equals("query")) {
        throw new Refusal(400, "query 'sql' takes no parameter '" + name + "'; it takes query").with("field", name)
            .with("query", "sql");
      }
    }
    String text = p.get("query");
    if (text == null) {
      throw new Refusal(400, "parameter 'query' is required").with("field", "query").with("query", "sql");
    }
    String first = firstWord(text);
    if (!SQL_STATEMENTS.contains(first)) {
      throw new Refusal(400, "the SQL page runs SELECT and WITH queries only, not '" + (first.isEmpty() ? text.strip()
          : first) + "'").with("field", "query").with("query", "sql");
    }
    if (config.sinkUrl() == null) {
      throw new Refusal(404, "this console has no provenance sink (the service captures no provenance)");
    }
    java.util.concurrent.atomic.AtomicReference<java.sql.Statement> running =
        new java.util.concurrent.atomic.AtomicReference<>();
    Future<Object> f;
    try {
      f = queries.submit(() -> {
        try (ProvenanceSink opened = openSink()) {
          java.sql.Connection c = opened.connection();
          boolean autoCommit = c.getAutoCommit();
          c.setAutoCommit(false);
          try (java.sql.Statement st = c.createStatement()) {
            running.set(st);
            st.setMaxRows(SQL_ROWS + 1);
            List<String> columns = new ArrayList<>();
            List<List<String>> rows = new ArrayList<>();
            try (java.sql.ResultSet rs = st.executeQuery(text)) {
              java.sql.ResultSetMetaData meta = rs.getMetaData();
              for (int i = 1; i <= meta.getColumnCount(); i++) {
                columns.add(meta.getColumnLabel(i));
              }
              while (rs.next() && rows.size() <= SQL_ROWS) {
                List<String> row = new ArrayList<>();
                for (int i = 1; i <= columns.size(); i++) {
                  row.add(ProvenanceReports.text(rs.getObject(i)));
                }
                rows.add(row);
              }
            }
            return new Object[] {columns, rows};
          } finally {
            running.set(null);
            c.rollback();
            c.setAutoCommit(autoCommit);
          }
        } catch (SQLException e) {
          return e;
        }
      });
    } catch (RejectedExecutionException e) {
      throw new Refusal(503, "the query: the console's queries are all busy; try again");
    }
    Object answer;
    try {
      answer = f.get(sqlTimeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      java.sql.Statement st = running.get();
      if (st != null) {
        try {
          st.cancel();
        } catch (SQLException c) {
          LOG.log(Level.WARNING, "console: a SQL page query could not be cancelled: " + c.getMessage());
        }
      }
      f.cancel(true);
      throw new Refusal(504, "the query ran longer than " + sqlTimeout.toSeconds() + " s and was stopped; narrow it "
          + "(a WHERE, a LIMIT) or run it with `apiary provenance sql`").with("query", "sql");
    } catch (InterruptedException e) {
      f.cancel(true);
      Thread.currentThread().interrupt();
      throw new Refusal(503, "the query: interrupted");
    } catch (ExecutionException e) {
      throw new Refusal(500, "the query failed: " + e.getCause()).with("query", "sql");
    }
    if (answer instanceof SQLException e) {
      throw new Refusal(400, "the sink refused the query: " + ProvenanceSink.redact(String.valueOf(e.getMessage())))
          .with("query", "sql").with("source", "sink");
    }
    Object[] result = (Object[]) answer;
    @SuppressWarnings("unchecked")
    List<String> columns = (List<String>) result[0];
    @SuppressWarnings("unchecked")
    List<List<String>> rows = (List<List<String>>) result[1];
    boolean truncated = rows.size() > SQL_ROWS;
    ObjectNode body = Json.MAPPER.createObjectNode().put("query", "sql");
    columns.forEach(body.putArray("columns")::add);
    ArrayNode out = body.putArray("rows");
    for (List<String> row : truncated ? rows.subList(0, SQL_ROWS) : rows) {
      row.forEach(out.addArray()::add);
    }
    body.put("truncated", truncated).put("maxRows", SQL_ROWS);
    body.put("message", truncated ? "the first " + SQL_ROWS + " rows; the query has more (add a LIMIT or a WHERE)"
        : null);
    return body;
  }

  /** The first word of a query after comments and blanks, upper case. */
  static String firstWord(String query) {
    String s = query.strip();
    while (s.startsWith("--") || s.startsWith("/*")) {
      int end = s.startsWith("--") ? s.indexOf('\n') : s.indexOf("*/");
      s = end < 0 ? "" : s.substring(end + (s.startsWith("--") ? 1 : 2)).strip();
    }
    return s.split("[\\s(;]", 2)[0].toUpperCase(java.util.Locale.ROOT);
  }

  /**
   * The sink: read-only where this process opens it alone; shared (and read in rolled-back transactions by
   * {@link ProvenanceReports#runRolledBack}) where the service's capture holds it open in this process.
   */
  private ProvenanceSink openSink() throws SQLException {
    java.util.Properties props = new java.util.Properties();
    if (!config.sinkInProcess() && ProvenanceSink.isDuckDb(config.sinkUrl())) {
      props.setProperty("duckdb.read_only", "true");
    }
    return ProvenanceSink.open(config.sinkUrl(), props, config.queryTimeout());
  }

  // --- authentication ---

  private void authorize(String authorization) throws Refusal {
    if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
      throw new Refusal(401, "the console requires an API key with the role '" + config.role() + "': send "
          + "Authorization: Bearer KEY");
    }
    CredentialCheck.Verdict verdict = keys().verify(authorization.substring(7).strip());
    if (!verdict.accepted()) {
      throw new Refusal(401, verdict.refusal());
    }
    if (!verdict.roles().contains(config.role())) {
      throw new Refusal(403, "the API key of '" + verdict.identity() + "' does not carry the role '" + config.role()
          + "' the console requires");
    }
  }

  /** The keys, read again if older than a second; the last ones read if the database cannot be read now. */
  private CredentialCheck keys() throws Refusal {
    synchronized (keysLock) {
      long now = System.nanoTime();
      if (keys != null && now - keysReadAt < KEYS_MAX_AGE_NANOS) {
        return keys;
      }
      try {
        if (keys == null) {
          keys = query("reading the API keys", () -> new CredentialCheck(db));
        } else {
          CredentialCheck k = keys;
          query("reading the API keys", () -> {
            k.reload();
            return null;
          });
        }
        keysReadAt = now;
      } catch (Refusal r) {
        if (keys == null) {
          throw new Refusal(503, "the API keys cannot be read from the database: " + r.getMessage())
              .with("source", "database");
        }
        LOG.log(Level.WARNING, "console: the API keys could not be read again, the last ones read are used: "
            + r.getMessage());
      }
      return keys;
    }
  }

  // --- /api/executions ---

  private ObjectNode executions(Map<String, String> p) throws Refusal {
    for (String name : p.keySet()) {
      if (!EXECUTION_PARAMETERS.contains(name)) {
        throw new Refusal(400, "unknown filter '" + name + "': /api/executions takes " + String.join(", ",
            new java.util.TreeSet<>(EXECUTION_PARAMETERS))).with("field", name);
      }
    }
    ExecutionQueries.Filter filter;
    ExecutionQueries.Cursor after;
    try {
      filter = new ExecutionQueries.Filter(
          bounded(p, "graph", 64),
          p.containsKey("status") ? ExecutionQueries.status("status", p.get("status")) : null,
          p.containsKey("since") ? ExecutionQueries.since("since", p.get("since"), Instant.now()) : null,
          bounded(p, "caller", WireRequest.MAX_CALLER_LENGTH),
          bounded(p, "frontend", 64),
          bounded(p, "prefix", WireRequest.MAX_QUALIFIED_ID_LENGTH));
      after = p.containsKey("after") ? ExecutionQueries.Cursor.parse("after", p.get("after")) : null;
    } catch (FilterException e) {
      throw new Refusal(400, e.getMessage()).with("field", e.field());
    }
    ObjectNode body = Json.MAPPER.createObjectNode();
    ObjectNode f = body.putObject("filter");
    p.forEach((k, v) -> {
      if (!k.equals("after")) {
        f.put(k, v);
      }
    });
    ArrayNode problems = body.putArray("problems");
    ArrayNode list = body.putArray("executions");
    boolean sinkDown = false; // the listing could not read the sink: said once, not asked again
    try {
      ExecutionQueries.Sink sink = config.sinkUrl() == null ? null : (name, parameters) -> {
        try (ProvenanceSink opened = openSink()) {
          return ProvenanceReports.runRolledBack(opened.connection(), name, parameters);
        }
      };
      ExecutionQueries.Page page = query("listing executions", () -> ExecutionQueries.hasLog(db)
          ? ExecutionQueries.list(db, filter, after, ExecutionQueries.PAGE, sink)
          : new ExecutionQueries.Page(List.of(), 0, null));
      page.executions().forEach(e -> list.add(execution(e)));
      if (page.sinkProblem() != null) {
        sinkDown = true;
        problem(problems, "sink", ProvenanceSink.redact(page.sinkProblem()));
      }
      body.put("total", page.total()); // null where the sink was read: see ExecutionQueries.Page
      body.put("pageSize", ExecutionQueries.PAGE);
      if (page.next() == null) {
        body.putNull("next");
        body.putNull("nextUrl");
      } else {
        String token = page.next().token();
        body.put("next", token);
        Map<String, String> next = new LinkedHashMap<>(p);
        next.put("after", token);
        body.put("nextUrl", "/api/executions?" + query(next));
      }
    } catch (Refusal r) {
      problem(problems, "database", r.getMessage());
      body.putNull("total");
      body.putNull("next");
      body.putNull("nextUrl");
    }
    if (config.sinkUrl() != null) {
      ObjectNode sink = body.putObject("sink");
      sink.put("url", ProvenanceSink.redact(config.sinkUrl()));
      sink.putNull("executionsWithFunctions");
      if (!sinkDown) {
        try {
          long known = query("reading the provenance sink", () -> {
            List<Map<String, Object>> rows = sinkSql("SELECT COUNT(DISTINCT execution_id) AS n FROM "
                + ProvenanceSchema.FUNCTION_INVOCATIONS);
            return ((Number) rows.get(0).get("n")).longValue();
          });
          sink.put("executionsWithFunctions", known);
        } catch (Refusal r) {
          problem(problems, "sink", r.getMessage());
        }
      }
    }
    return body;
  }

  private static String bounded(Map<String, String> p, String name, int most) {
    String v = p.get(name);
    if (v != null && v.length() > most) {
      throw new FilterException(name, name + " has at most " + most + " characters, not " + v.length());
    }
    return v;
  }

  private static ObjectNode execution(ExecutionQueries.Execution e) {
    ObjectNode o = Json.MAPPER.createObjectNode();
    o.put("id", e.id()).put("graph", e.graph()).put("version", e.version()).put("status", e.status())
        .put("frontend", e.frontend()).put("caller", e.caller()).put("attempts", e.attempts())
        .put("startedAt", Instant.ofEpochMilli(e.startedMs()).toString())
        .put("finishedAt", e.running() ? null : Instant.ofEpochMilli(e.finishedMs()).toString())
        .put("durationMs", e.durationMs());
    return o;
  }

  // --- /api/executions/{id} ---

  private ObjectNode execution(String id) throws Refusal {
    ObjectNode body = Json.MAPPER.createObjectNode();
    ArrayNode problems = body.putArray("problems");
    Optional<ExecutionQueries.Detail> found;
    try {
      found = query("reading execution " + id, () -> ExecutionQueries.hasLog(db) ? ExecutionQueries.find(db, id)
          : Optional.<ExecutionQueries.Detail>empty());
    } catch (Refusal r) {
      if (r.getCause() instanceof ExecutionQueries.AmbiguousIdException a) {
        Refusal ambiguous = new Refusal(409, a.getMessage() + "; ask for one by its full ID").with("id", id);
        a.ids().forEach(ambiguous.body.withArray("ids")::add);
        throw ambiguous;
      }
      throw new Refusal(503, "execution " + id + " cannot be read: " + r.getMessage()).with("id", id)
          .with("source", "database");
    }
    String functionsOf = found.map(d -> d.execution().id()).orElse(id);
    JsonNode functions = functions(functionsOf, problems);
    if (found.isEmpty()) {
      Map<String, Object> ended = ended(id, problems);
      if (ended == null && (functions == null || functions.isEmpty())) {
        throw new Refusal(404, "no execution '" + id + "' in the invocation log" + (config.sinkUrl() == null ? ""
            : " or the provenance sink") + ": it is unknown, or ended longer ago than the retention (default 1 hour)"
            + (config.sinkUrl() == null ? "" : " and the sink does not know it")).with("id", id);
      }
      ObjectNode e = body.putObject("execution");
      if (ended == null) {
        e.put("id", id).putNull("status");
        body.put("known", "only from the provenance sink's " + ProvenanceSchema.FUNCTION_INVOCATIONS + ": it ended "
            + "longer ago than the retention, so its status, request and outcome are no longer kept");
      } else {
        e.put("id", String.valueOf(ended.get("invocation_id"))).put("graph", (String) ended.get("graph"))
            .set("version", Json.MAPPER.valueToTree(ended.get("graph_version")));
        e.put("status", (String) ended.get("status")).put("error", (String) ended.get("error"))
            .put("frontend", (String) ended.get("frontend")).put("caller", (String) ended.get("caller"))
            .set("attempts", Json.MAPPER.valueToTree(ended.get("attempts")));
        Object started = ended.get("started_at");
        Object finished = ended.get("finished_at");
        e.put("startedAt", started == null ? null : String.valueOf(started))
            .put("finishedAt", finished == null ? null : String.valueOf(finished));
        if (started instanceof Instant s && finished instanceof Instant f) {
          e.put("durationMs", java.time.Duration.between(s, f).toMillis());
        }
        body.put("known", "from the provenance sink's " + ProvenanceSchema.INVOCATIONS + ": it ended longer ago than "
            + "the retention, so its request and result are no longer kept");
      }
      body.putNull("request");
      body.putNull("outcome");
      body.set("functions", functions);
      graphOf(body, problems);
      timeline(body);
      return body;
    }
    ExecutionQueries.Detail d = found.get();
    body.set("execution", execution(d.execution()));
    body.set("request", request(d.request()));
    body.set("outcome", d.outcome() == null ? null : outcome(d.outcome()));
    body.set("functions", functions);
    graphOf(body, problems);
    timeline(body);
    return body;
  }

  /** Outcomes of a function node on the execution page. */
  static final String OK = "ok";
  static final String FAILED = "failed";
  static final String NOT_REACHED = "not reached";
  static final String RECORDED = "answered from record";
  static final String UNKNOWN = "unknown";

  /**
   * Adds {@code graph}: the DAG of the execution's graph version, laid out, each function node with its
   * {@code outcome} ({@link #OK}, {@link #FAILED}, {@link #NOT_REACHED}, {@link #RECORDED}, or {@link #UNKNOWN}: no
   * sink and not done, or done but not in the sink), {@code runs} (its function executions that ran, in any attempt), {@code answeredFromRecord} (those
   * answered from their record: an earlier attempt ran them) and {@code keys} (the distinct keys it ran on: a
   * fan-out's key count). Null if the graph or version is not known.
   */
  private void graphOf(ObjectNode body, ArrayNode problems) {
    JsonNode e = body.get("execution");
    if (e == null || !e.hasNonNull("graph") || !e.hasNonNull("version")) {
      body.putNull("graph");
      return;
    }
    String name = e.get("graph").asText();
    long version = e.get("version").asLong();
    List<ExecutionQueries.GraphVersion> all;
    try {
      all = query("reading the graphs", () -> ExecutionQueries.graphs(db));
    } catch (Refusal r) {
      problem(problems, "database", r.getMessage());
      body.putNull("graph");
      return;
    }
    ExecutionQueries.GraphVersion g = all.stream().filter(v -> v.name().equals(name) && v.version() == version)
        .findFirst().orElse(null);
    if (g == null) {
      body.putNull("graph");
      return;
    }
    ObjectNode dag = body.putObject("graph").put("name", name).put("version", version);
    dag(g.graph(), dag);
    String status = e.path("status").asText("");
    JsonNode functions = body.get("functions");
    String failedFunction = body.path("outcome").path("function").asText(null);
    for (JsonNode n : dag.get("nodes")) {
      String kind = n.get("kind").asText();
      if (kind.equals("source") || kind.equals("sink")) {
        continue;
      }
      String id = n.get("id").asText();
      int ran = 0;
      int recorded = 0;
      java.util.Set<String> keys = new java.util.HashSet<>();
      if (functions != null && functions.isArray()) {
        for (JsonNode f : functions) {
          if (f.get("function").asText().equals(id)) {
            keys.add(f.path("partitionKey").asText(""));
            if (ProvenanceSchema.MODE_RECORDED.equals(f.path("mode").asText())) {
              recorded++;
            } else {
              ran++;
            }
          }
        }
      }
      String outcome;
      if (id.equals(failedFunction) && "FAILED".equals(status)) {
        outcome = FAILED;
      } else if (recorded > 0) {
        outcome = RECORDED;
      } else if (ran > 0) {
        outcome = OK;
      } else if (functions == null || !functions.isArray()) {
        outcome = "DONE".equals(status) ? OK : UNKNOWN; // no sink: a DONE graph ran every function
      } else if ("DONE".equals(status)) {
        outcome = UNKNOWN; // done, yet not in the sink: not loaded yet, or its capture was lost
      } else {
        outcome = NOT_REACHED;
      }
      ((ObjectNode) n).put("outcome", outcome).put("runs", ran).put("answeredFromRecord", recorded)
          .put("keys", keys.size());
    }
  }

  /**
   * How an execution the log no longer holds ended, from the sink's {@code Invocations} (its last end), or
   * {@code null}: the sink does not know it, there is none, or it cannot be read (a problem then says why).
   */
  private Map<String, Object> ended(String id, ArrayNode problems) throws Refusal {
    if (config.sinkUrl() == null) {
      return null;
    }
    List<Map<String, Object>> rows;
    try {
      rows = query("reading the provenance sink", () -> sinkSql(ProvenanceReports.INVOCATION_SQL,
          ProvenanceReports.invocationSqlParameters(id)));
    } catch (Refusal r) {
      problem(problems, "sink", r.getMessage());
      return null;
    }
    if (rows.stream().map(r -> r.get("invocation_id")).distinct().count() > 1) {
      Refusal ambiguous = new Refusal(409, "the ID " + id + " names several callers' invocations in the provenance "
          + "sink; ask for one by its full ID").with("id", id);
      rows.stream().map(r -> String.valueOf(r.get("invocation_id"))).distinct()
          .forEach(ambiguous.body.withArray("ids")::add);
      throw ambiguous;
    }
    return rows.isEmpty() ? null : rows.get(rows.size() - 1);
  }

  /** {@link ProvenanceReports#FUNCTIONS_SQL} with each row's mode: ran, or answered from its record. */
  static final String FUNCTIONS_SQL = "SELECT function_name, exec_id, partition_key, event_time, latency_us, mode "
      + "FROM " + ProvenanceSchema.FUNCTION_INVOCATIONS + " WHERE execution_id = ? ORDER BY event_time, exec_id";

  /** The execution's function executions in the sink, or {@code null} with a problem (or no sink) saying why. */
  private JsonNode functions(String id, ArrayNode problems) {
    if (config.sinkUrl() == null) {
      return null;
    }
    try {
      List<Map<String, Object>> rows = query("reading the provenance sink", () -> sinkSql(FUNCTIONS_SQL, id));
      ArrayNode a = Json.MAPPER.createArrayNode();
      for (Map<String, Object> r : rows) {
        ObjectNode o = a.addObject();
        o.put("function", String.valueOf(r.get("function_name")));
        o.set("execId", Json.MAPPER.valueToTree(r.get("exec_id")));
        o.put("partitionKey", r.get("partition_key") == null ? null : String.valueOf(r.get("partition_key")));
        o.put("at", r.get("event_time") == null ? null : String.valueOf(r.get("event_time")));
        o.set("latencyUs", Json.MAPPER.valueToTree(r.get("latency_us")));
        o.put("mode", r.get("mode") == null ? ProvenanceSchema.MODE_RAN : String.valueOf(r.get("mode")));
        if (r.get("event_time") instanceof Instant at) { // a real sink's TIMESTAMP: the transaction's start
          o.put("startUs", at.getEpochSecond() * 1_000_000L + at.getNano() / 1_000);
        }
        o.putArray("reads");
        o.putArray("writes");
      }
      touches(id, a, problems);
      return a;
    } catch (Refusal r) {
      problem(problems, "sink", r.getMessage());
      return null;
    }
  }

  /**
   * Adds to each function execution in {@code functions} the records it read ({@code reads}: table, key, keyed) and
   * wrote ({@code writes}: with the event type), from the sink's events tables; a problem says why if they cannot be
   * read.
   */
  private void touches(String executionId, ArrayNode functions, ArrayNode problems) {
    if (functions.isEmpty()) {
      return;
    }
    try {
      List<ConsoleQueries.Touch> touches = query("reading the records the functions read and wrote",
          () -> readingSink(q -> ConsoleQueries.touches(q, q.applicationTables().isEmpty() ? Map.of()
              : ConsoleQueries.eventsTables(q, ConsoleQueries.primaryKeys(db)), executionId)));
      for (JsonNode f : functions) {
        String exec = f.path("execId").asText();
        for (ConsoleQueries.Touch t : touches) {
          if (t.execId().equals(exec)) {
            ObjectNode o = ((ObjectNode) f).withArray(ProvenanceSchema.READ.equals(t.event()) ? "reads" : "writes")
                .addObject().put("table", t.table()).put("key", t.key()).put("keyed", t.keyed());
            if (!ProvenanceSchema.READ.equals(t.event())) {
              o.put("event", t.event());
            }
          }
        }
      }
    } catch (Refusal r) {
      problem(problems, "sink", r.getMessage());
    }
  }

  /**
   * Adds {@code timeline}: one bar per function execution (its transaction's start and its latency), coloured by
   * outcome, on an axis from the earliest start (the execution's or a function's) to the latest end; the failed
   * function, which captured nothing (its transaction rolled back), spans from the last captured end to the
   * execution's end. {@code null} where the function executions or their times are not known.
   */
  private static void timeline(ObjectNode body) {
    JsonNode functions = body.get("functions");
    JsonNode e = body.get("execution");
    Long started = micros(e.path("startedAt").asText(null));
    Long finished = micros(e.path("finishedAt").asText(null));
    if (functions == null || !functions.isArray() || started == null) {
      body.putNull("timeline");
      return;
    }
    long origin = started;
    long end = finished == null ? started : finished;
    for (JsonNode f : functions) {
      if (!f.has("startUs")) {
        body.putNull("timeline");
        return;
      }
      origin = Math.min(origin, f.get("startUs").asLong());
      end = Math.max(end, f.get("startUs").asLong() + f.path("latencyUs").asLong(0));
    }
    ObjectNode t = body.putObject("timeline");
    ArrayNode bars = t.putArray("bars");
    long lastEnd = origin;
    for (JsonNode f : functions) {
      long s = f.get("startUs").asLong();
      long d = f.path("latencyUs").asLong(0);
      lastEnd = Math.max(lastEnd, s + d);
      bars.addObject().put("function", f.get("function").asText()).put("key", f.path("partitionKey").asText(null))
          .put("execId", f.path("execId").asText(null))
          .put("outcome", ProvenanceSchema.MODE_RECORDED.equals(f.path("mode").asText()) ? RECORDED : OK)
          .put("startUs", s - origin).put("durationUs", d);
    }
    JsonNode outcome = body.get("outcome");
    if ("FAILED".equals(e.path("status").asText()) && outcome != null && outcome.hasNonNull("function")) {
      bars.addObject().put("function", outcome.get("function").asText()).putNull("key").putNull("execId")
          .put("outcome", FAILED).put("startUs", lastEnd - origin).put("durationUs", Math.max(0, end - lastEnd))
          .put("error", outcome.path("message").asText(null));
    }
    t.put("startedAt", Instant.EPOCH.plus(origin, java.time.temporal.ChronoUnit.MICROS).toString())
        .put("spanUs", end - origin);
  }

  private static Long micros(String instant) {
    if (instant == null) {
      return null;
    }
    try {
      Instant i = Instant.parse(instant);
      return i.getEpochSecond() * 1_000_000L + i.getNano() / 1_000;
    } catch (java.time.format.DateTimeParseException ex) {
      return null; // a sink's timestamp without a zone: no axis
    }
  }

  private static JsonNode request(byte[] frame) {
    ObjectNode o = Json.MAPPER.createObjectNode();
    WireRequest r;
    try {
      r = WireRequest.fromBytes(frame);
    } catch (IllegalArgumentException e) {
      return o.put("undecodable", e.getMessage());
    }
    o.set("key", cut(r.key()));
    o.set("arguments", cut(r.args() == null ? Json.MAPPER.createArrayNode() : Json.MAPPER.valueToTree(r.args())));
    o.put("caller", r.caller());
    return o;
  }

  private static JsonNode outcome(byte[] frame) {
    ObjectNode o = Json.MAPPER.createObjectNode();
    WireReply r;
    try {
      r = WireReply.fromBytes(frame);
    } catch (IllegalArgumentException e) {
      return o.put("undecodable", e.getMessage());
    }
    o.put("status", r.status());
    if (WireReply.OK.equals(r.status())) {
      o.set("result", cut(Json.MAPPER.valueToTree(r.outputs() == null ? List.of() : r.outputs())));
    } else {
      o.put("error", r.error()).put("function", r.function()).put("functionError", r.functionError())
          .put("message", r.message());
    }
    return o;
  }

  /** {@code value}, or if its JSON text is longer than {@link #CUT}, an object with the first {@link #CUT} chars. */
  static JsonNode cut(JsonNode value) {
    if (value == null) {
      return null;
    }
    String text;
    try {
      text = Json.MAPPER.writeValueAsString(value);
    } catch (JsonProcessingException e) {
      return Json.MAPPER.createObjectNode().put("unprintable", e.getOriginalMessage());
    }
    if (text.length() <= CUT) {
      return value;
    }
    return Json.MAPPER.createObjectNode().put("cut", true).put("length", text.length())
        .put("start", text.substring(0, CUT));
  }

  // --- /api/graphs ---

  private ObjectNode graphs() throws Refusal {
    ObjectNode body = Json.MAPPER.createObjectNode();
    ArrayNode problems = body.putArray("problems");
    ArrayNode graphs = body.putArray("graphs");
    try {
      List<ExecutionQueries.GraphVersion> all = query("reading the graphs", () -> ExecutionQueries.graphs(db));
      ObjectNode current = null;
      for (ExecutionQueries.GraphVersion g : all) {
        if (current == null || !current.get("name").asText().equals(g.name())) {
          current = graphs.addObject().put("name", g.name());
          current.putArray("versions");
        }
        current.put("latest", g.version());
        ObjectNode v = current.withArray("versions").addObject();
        v.put("version", g.version()).put("registeredAt", g.registeredAt());
        dag(g.graph(), v);
      }
    } catch (Refusal r) {
      problem(problems, "database", r.getMessage());
    }
    long since = System.currentTimeMillis() - STATS_WINDOW.toMillis();
    body.put("statsSince", Instant.ofEpochMilli(since).toString());
    try {
      Map<String, ConsoleQueries.GraphStats> stats = query("counting the graphs' executions",
          () -> ConsoleQueries.graphStats(db, since));
      for (JsonNode g : graphs) {
        ConsoleQueries.GraphStats st = stats.get(g.get("name").asText());
        ObjectNode o = ((ObjectNode) g).putObject("lastHour");
        o.put("calls", st == null ? 0 : st.calls()).put("failures", st == null ? 0 : st.failures())
            .put("ended", st == null ? 0 : st.ended()).put("p50Ms", st == null ? null : st.p50Ms())
            .put("p99Ms", st == null ? null : st.p99Ms());
      }
    } catch (Refusal r) {
      problem(problems, "database", r.getMessage());
    }
    return body;
  }

  /** The window of the graphs page's calls, failures and latencies. */
  static final java.time.Duration STATS_WINDOW = java.time.Duration.ofHours(1);

  /** The graph as a DAG: SOURCE, its functions, SINK; its edges with IDs and value kinds. */
  static void dag(RegisteredGraph g, ObjectNode into) {
    into.put("kind", g.oneTransaction() ? "one transaction" : g.recordsNothing() ? "records nothing" : "logged");
    into.put("recording", String.valueOf(g.mode()));
    ArrayNode nodes = into.putArray("nodes");
    nodes.addObject().put("id", org.apiary.Graph.SOURCE).put("kind", "source");
    for (RegisteredGraph.Node n : g.nodes()) {
      nodes.addObject().put("id", n.function()).put("kind", n.local() ? "local" : "global")
          .put("keyType", n.keyType() == null ? null : String.valueOf(n.keyType())).put("writes", n.writes())
          .put("recorded", n.recorded());
    }
    nodes.addObject().put("id", org.apiary.Graph.SINK).put("kind", "sink");
    ArrayNode edges = into.putArray("edges");
    for (RegisteredGraph.Edge e : g.edges()) {
      edges.addObject().put("from", e.from()).put("to", e.to()).put("id", e.id())
          .put("type", e.kind() == null ? null : String.valueOf(e.kind()));
    }
    layout(into);
  }

  /**
   * Adds {@link DagLayout}'s places to the DAG's nodes ({@code x}, {@code y}: the box's top-left corner;
   * {@code layer}, {@code order}) and the drawing's {@code layout} (width, height, box size), for a page to draw.
   */
  static void layout(ObjectNode dag) {
    List<String> ids = new ArrayList<>();
    dag.get("nodes").forEach(n -> ids.add(n.get("id").asText()));
    List<String[]> pairs = new ArrayList<>();
    dag.get("edges").forEach(e -> pairs.add(new String[] {e.get("from").asText(), e.get("to").asText()}));
    DagLayout.Layout layout = DagLayout.layout(ids, pairs, org.apiary.Graph.SOURCE, org.apiary.Graph.SINK);
    for (JsonNode n : dag.get("nodes")) {
      DagLayout.Place p = layout.places().get(n.get("id").asText());
      ((ObjectNode) n).put("layer", p.layer()).put("order", p.order()).put("x", p.x()).put("y", p.y());
    }
    dag.putObject("layout").put("width", layout.width()).put("height", layout.height())
        .put("nodeWidth", DagLayout.NODE_WIDTH).put("nodeHeight", DagLayout.NODE_HEIGHT);
  }

  // --- /api/cluster ---

  private ObjectNode cluster() {
    ObjectNode body = Json.MAPPER.createObjectNode();
    ArrayNode problems = body.putArray("problems");
    try {
      ExecutionQueries.Overview o = query("reading the database overview", () -> ExecutionQueries.overview(db));
      ObjectNode d = body.putObject("database");
      d.put("version", o.version()).put("partitions", o.partitions()).put("kfactor", o.kfactor());
      o.hosts().forEach(d.putArray("hosts")::add);
      o.addresses().forEach(d.putArray("addresses")::add);
    } catch (Refusal r) {
      body.putNull("database");
      problem(problems, "database", r.getMessage());
    }
    try {
      List<ExecutionQueries.Frontend> frontends = query("reading the frontends", () -> ExecutionQueries.frontends(db));
      ArrayNode a = body.putArray("frontends");
      for (ExecutionQueries.Frontend f : frontends) {
        a.addObject().put("id", f.id()).put("endpoint", f.endpoint()).put("leaseRemainingMs", f.leaseRemainingMs())
            .put("live", f.live()).put("running", f.running());
      }
      Map<String, Long> counts = query("counting executions", () -> ExecutionQueries.hasLog(db)
          ? ExecutionQueries.countsByStatus(db) : Map.<String, Long>of());
      ObjectNode c = body.putObject("executions");
      counts.forEach(c::put);
    } catch (Refusal r) {
      problem(problems, "database", r.getMessage());
    }
    if (config.sinkUrl() != null) {
      ObjectNode sink = body.putObject("sink").put("url", ProvenanceSink.redact(config.sinkUrl()));
      try {
        query("reaching the provenance sink", () -> sinkSql("SELECT 1 AS one"));
        sink.put("reachable", true);
      } catch (Refusal r) {
        sink.put("reachable", false);
        problem(problems, "sink", r.getMessage());
      }
    }
    backlog(body, problems);
    return body;
  }

  /**
   * Adds {@code provenance}: the captured writes VoltDB's export streams hold ({@code exportBacklog}, by stream),
   * and each server's spooler as it last reported it under the spill root ({@code servers}: rows in memory, on
   * disk, loaded, dropped, the spill files' bytes, the oldest unloaded row's age, whether the sink answered its
   * last attempt, the last error, the report's age; those three null in a report from before they were reported);
   * {@code servers} is null without a spill root.
   */
  private void backlog(ObjectNode body, ArrayNode problems) {
    ObjectNode p = body.putObject("provenance");
    try {
      Map<String, Long> pending = query("reading the export backlog",
          () -> org.apiary.runtime.provenance.ExportBacklog.bySource(db));
      ObjectNode export = p.putObject("exportBacklog");
      pending.forEach(export::put);
    } catch (Refusal r) {
      p.putNull("exportBacklog");
      problem(problems, "database", r.getMessage());
    }
    if (config.spillRoot() == null) {
      p.putNull("servers");
      return;
    }
    try {
      List<org.apiary.runtime.provenance.BacklogReport> reports = query("reading the servers' backlog reports",
          () -> org.apiary.runtime.provenance.BacklogReport.readAll(config.spillRoot()));
      ArrayNode servers = p.putArray("servers");
      Instant now = Instant.now();
      for (org.apiary.runtime.provenance.BacklogReport b : reports) {
        ObjectNode o = servers.addObject().put("server", b.server()).put("pid", b.pid())
            .put("rowsWaiting", b.rowsWaiting()).put("rowsInMemory", b.rowsInMemory())
            .put("rowsOnDisk", b.rowsOnDisk()).put("rowsLoaded", b.rowsLoaded()).put("rowsDropped", b.rowsDropped())
            .put("lastError", b.lastError() == null ? null : ProvenanceSink.redact(b.lastError()))
            .put("refusing", b.refusing()).put("stopped", b.stopped()).put("reportedAt", b.at())
            .put("spillBytes", b.spillBytes()).put("oldestUnloadedSeconds", b.oldestUnloadedSeconds())
            .put("sinkReachable", b.sinkReachable());
        try {
          o.put("reportAgeSeconds", Math.max(0, java.time.Duration.between(Instant.parse(b.at()), now).toMillis())
              / 1000.0);
        } catch (java.time.format.DateTimeParseException e) {
          o.putNull("reportAgeSeconds");
        }
      }
    } catch (Refusal r) {
      p.putNull("servers");
      problem(problems, "spooler", r.getMessage());
    }
  }

  // --- plumbing ---

  /**
   * Runs {@code work} on the query pool within the timeout; a {@link Refusal} ({@code 503}, {@code 504}) naming
   * {@code what} and why if it cannot, with the failure as its cause.
   */
  private <T> T query(String what, Callable<T> work) throws Refusal {
    Future<T> f;
    try {
      f = queries.submit(work);
    } catch (RejectedExecutionException e) {
      throw new Refusal(503, what + ": the console's queries are all busy; try again");
    }
    try {
      return f.get(config.queryTimeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      f.cancel(true);
      throw new Refusal(504, what + " took longer than " + config.queryTimeout().toSeconds() + " s and was stopped");
    } catch (InterruptedException e) {
      f.cancel(true);
      Thread.currentThread().interrupt();
      throw new Refusal(503, what + ": interrupted");
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      LOG.log(Level.DEBUG, "console: " + what + " failed", cause);
      String message = cause instanceof SQLException s && config.sinkUrl() != null
          ? ProvenanceSink.redact(String.valueOf(s.getMessage())) : String.valueOf(cause.getMessage());
      Refusal r = new Refusal(503, what + " failed: " + cause.getClass().getSimpleName() + ": " + message);
      r.initCause(cause);
      throw r;
    }
  }

  private List<Map<String, Object>> sinkSql(String sql, Object... parameters) throws SQLException {
    return readingSink(q -> q.sql(sql, parameters));
  }

  /** Work on the sink's queries that may throw what JDBC throws. */
  @FunctionalInterface
  private interface SinkWork<T> {
    T apply(org.apiary.provenance.ProvenanceQueries queries) throws SQLException;
  }

  /** Runs {@code work} on a connection of its own inside a transaction that is rolled back: it only reads. */
  private <T> T readingSink(SinkWork<T> work) throws SQLException {
    try (ProvenanceSink opened = openSink()) {
      java.sql.Connection c = opened.connection();
      boolean autoCommit = c.getAutoCommit();
      c.setAutoCommit(false);
      try {
        return work.apply(new org.apiary.provenance.ProvenanceQueries(c));
      } finally {
        c.rollback();
        c.setAutoCommit(autoCommit);
      }
    }
  }

  private static void problem(ArrayNode problems, String source, String message) {
    problems.addObject().put("source", source).put("message", message);
  }

  private static void noParameters(Map<String, String> p) throws Refusal {
    if (!p.isEmpty()) {
      String name = p.keySet().iterator().next();
      throw new Refusal(400, "unknown parameter '" + name + "': this path takes none").with("field", name);
    }
  }

  /** The query's parameters; an empty value is as if absent; a repeated one or bad encoding is refused. */
  static Map<String, String> parameters(String rawQuery) throws Refusal {
    Map<String, String> p = new LinkedHashMap<>();
    if (rawQuery == null || rawQuery.isEmpty()) {
      return p;
    }
    for (String pair : rawQuery.split("&")) {
      if (pair.isEmpty()) {
        continue;
      }
      int eq = pair.indexOf('=');
      String name = decode("query", eq < 0 ? pair : pair.substring(0, eq));
      String value = eq < 0 ? "" : decode(name, pair.substring(eq + 1));
      if (p.containsKey(name)) {
        throw new Refusal(400, "'" + name + "' is given more than once").with("field", name);
      }
      if (!value.isEmpty()) { // an empty filter (a form's blank field) filters nothing
        p.put(name, value);
      }
    }
    return p;
  }

  private static String decode(String field, String raw) throws Refusal {
    try {
      return URLDecoder.decode(raw, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw new Refusal(400, "'" + field + "' is not percent-encoded correctly: " + e.getMessage())
          .with("field", field);
    }
  }

  private static String query(Map<String, String> p) {
    List<String> pairs = new ArrayList<>();
    p.forEach((k, v) -> pairs.add(java.net.URLEncoder.encode(k, StandardCharsets.UTF_8) + "="
        + java.net.URLEncoder.encode(v, StandardCharsets.UTF_8)));
    return String.join("&", pairs);
  }

  private static Response json(int status, JsonNode body) {
    byte[] bytes;
    try {
      bytes = Json.MAPPER.writeValueAsBytes(body);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a console answer cannot be written as JSON", e);
    }
    return new Response(status, "application/json; charset=utf-8", bytes)
        .withHeader("Content-Security-Policy", "default-src 'self'");
  }
}
