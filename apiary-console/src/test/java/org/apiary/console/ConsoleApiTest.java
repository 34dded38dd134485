package org.apiary.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apiary.FunctionFailedException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.InvocationRequest;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.Credentials;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.FrontendServer;
import org.apiary.frontend.RawHttp;
import org.apiary.frontend.TestGraphs;
import org.apiary.frontend.query.ExecutionQueries;
import org.apiary.internal.Json;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The console's JSON API against the real database, for a scripted workload across two graphs (bumpAndReport, and
 * failing, whose one invocation fails), read over HTTP on plain sockets (an embedded VoltDB breaks the JDK's HTTP
 * client in this JVM).
 */
@DatabaseTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConsoleApiTest {
  private static final String SCRIPT = "<script>alert(1)</script>";
  private static final int OK_RUNS = 130; // more than a page of bumpAndReport

  private ApiaryDatabase db;
  private FrontendServer frontend;
  private ConsoleServer console;
  private String admin;
  private String viewer;
  private String run; // this run's ID prefix, so other tests' invocations in the same log do not count
  private String failedId;

  @BeforeAll
  void start(TestDatabase database) throws Exception {
    db = database.database();
    TestGraphs.registerOnce(db);
    frontend = FrontendServer.start(db, FrontendConfig.defaults());
    run = "c" + UUID.randomUUID().toString().substring(0, 8) + "-";
    try (ApiaryClient client = ApiaryClient.connect(ClientConfig.of(frontend.endpoint())
        .withAttemptTimeout(Duration.ofSeconds(60)))) {
      for (int i = 0; i < OK_RUNS; i++) {
        client.invoke(InvocationRequest.of("bumpAndReport", 7_000L + i, 1L).withId(run + "ok-" + i));
      }
      failedId = run + "failed";
      assertThrows(FunctionFailedException.class,
          () -> client.invoke(InvocationRequest.of("failing", 7_500L, 1L).withId(failedId)));
      client.invoke(InvocationRequest.of("bumpAndReport", 7_600L, 1L).withId(SCRIPT));
    }
    admin = Credentials.create(db, "console-ops", Set.of(Credentials.ADMIN_ROLE)).apiKey();
    viewer = Credentials.create(db, "console-viewer", Set.of("viewer")).apiKey();
    console = ConsoleServer.start(db, ConsoleConfig.defaults(0));
  }

  @AfterAll
  void stop() {
    if (console != null) {
      console.close();
    }
    if (frontend != null) {
      frontend.close();
    }
  }

  @Test
  void executionsHoldTheWorkloadAndPagingGivesEachExactlyOnce() throws Exception {
    JsonNode failed = ok(get("/api/executions?prefix=" + enc(run) + "&status=failed"));
    assertEquals(1, failed.get("total").asLong(), failed.toString());
    JsonNode f = failed.get("executions").get(0);
    assertEquals(failedId, f.get("id").asText());
    assertEquals("failing", f.get("graph").asText());
    assertEquals("FAILED", f.get("status").asText());
    assertTrue(failed.get("problems").isEmpty(), failed.toString());

    JsonNode failingGraph = ok(get("/api/executions?prefix=" + enc(run) + "&graph=failing"));
    assertEquals(1, failingGraph.get("total").asLong());

    // Every execution of this run, page by page: each once, 100 to a page, newest first.
    List<String> seen = new ArrayList<>();
    String url = "/api/executions?prefix=" + enc(run);
    int pages = 0;
    long total = -1;
    while (url != null) {
      JsonNode page = ok(get(url));
      total = page.get("total").asLong();
      JsonNode list = page.get("executions");
      assertTrue(list.size() <= 100, "a page holds at most 100, not " + list.size());
      for (JsonNode e : list) {
        seen.add(e.get("id").asText());
      }
      pages++;
      url = page.get("nextUrl").isNull() ? null : page.get("nextUrl").asText();
      assertTrue(pages < 10, "paging ends");
    }
    assertEquals(OK_RUNS + 1, total);
    assertEquals(2, pages);
    assertEquals(OK_RUNS + 1, seen.size(), "each execution once: " + seen);
    assertEquals(OK_RUNS + 1, new HashSet<>(seen).size(), "no execution twice");
    assertTrue(seen.contains(failedId));

    JsonNode done = ok(get("/api/executions?prefix=" + enc(run) + "&status=DONE&graph=bumpAndReport&since=1h"));
    assertEquals(OK_RUNS, done.get("total").asLong());
  }

  @Test
  void anExecutionHasItsRequestAndOutcome() throws Exception {
    JsonNode failed = ok(get("/api/executions/" + enc(failedId)));
    assertEquals("FAILED", failed.at("/execution/status").asText());
    assertEquals(7_500L, failed.at("/request/key").asLong());
    assertEquals("function-failed", failed.at("/outcome/error").asText(), failed.toString());
    assertEquals("explode", failed.at("/outcome/function").asText(), failed.toString());

    JsonNode ok = ok(get("/api/executions/" + enc(run + "ok-3")));
    assertEquals("DONE", ok.at("/execution/status").asText());
    assertEquals("bumpAndReport", ok.at("/execution/graph").asText());
    assertEquals("ok", ok.at("/outcome/status").asText());
    assertTrue(ok.get("functions").isNull(), "no sink configured: " + ok);
  }

  @Test
  void aStoredScriptComesBackAsAJsonStringUnchanged() throws Exception {
    RawHttp.Response r = get("/api/executions/" + enc(SCRIPT));
    JsonNode body = ok(r);
    assertEquals(SCRIPT, body.at("/execution/id").asText());
    assertTrue(r.header("content-type").startsWith("application/json"), r.headers().toString());
    assertEquals("default-src 'self'", r.header("content-security-policy"));
    assertEquals("nosniff", r.header("x-content-type-options"));
    JsonNode listed = ok(get("/api/executions?prefix=" + enc("<script>")));
    assertEquals(SCRIPT, listed.at("/executions/0/id").asText());
  }

  @Test
  void graphsAreDagsWithKindsKeyTypesAndRecordedMarks() throws Exception {
    JsonNode graphs = ok(get("/api/graphs"));
    JsonNode bump = null;
    for (JsonNode g : graphs.get("graphs")) {
      if (g.get("name").asText().equals("bumpAndReport")) {
        bump = g;
      }
    }
    assertNotNull(bump, graphs.toString());
    JsonNode v = bump.get("versions").get(bump.get("versions").size() - 1);
    List<String> ids = new ArrayList<>();
    for (JsonNode n : v.get("nodes")) {
      ids.add(n.get("id").asText());
    }
    assertEquals(List.of(org.apiary.Graph.SOURCE, "bump", "report", org.apiary.Graph.SINK), ids, v.toString());
    JsonNode bumpNode = v.get("nodes").get(1);
    assertEquals("local", bumpNode.get("kind").asText());
    assertTrue(bumpNode.get("writes").asBoolean());
    assertTrue(bumpNode.get("recorded").asBoolean(), bumpNode.toString());
    assertFalse(bumpNode.get("keyType").isNull(), bumpNode.toString());
    assertEquals(3, v.get("edges").size(), v.toString());
    assertEquals("bumped", v.get("edges").get(1).get("id").asText());
  }

  @Test
  void anExecutionsGraphIsColouredByOutcome() throws Exception {
    // No sink here: a failed execution's failing function is known from its outcome, the rest are not.
    JsonNode failed = ok(get("/api/executions/" + enc(failedId)));
    assertEquals("failing", failed.at("/graph/name").asText(), failed.toString());
    assertEquals(Map.of("bump", ConsoleApi.UNKNOWN, "explode", ConsoleApi.FAILED), outcomes(failed));
    JsonNode done = ok(get("/api/executions/" + enc(run + "ok-1")));
    assertEquals(Map.of("bump", ConsoleApi.OK, "report", ConsoleApi.OK), outcomes(done));
    assertApart(done.get("graph"));
  }

  /** Every graph version's layout: SOURCE first, SINK last, every edge forwards, no two boxes overlapping. */
  @Test
  void graphsAreLaidOutLeftToRightWithoutOverlap() throws Exception {
    JsonNode graphs = ok(get("/api/graphs"));
    int checked = 0;
    for (JsonNode g : graphs.get("graphs")) {
      for (JsonNode v : g.get("versions")) {
        assertApart(v);
        Map<String, Integer> layer = new java.util.HashMap<>();
        int last = 0;
        for (JsonNode n : v.get("nodes")) {
          layer.put(n.get("id").asText(), n.get("layer").asInt());
          last = Math.max(last, n.get("layer").asInt());
        }
        assertEquals(0, layer.get(org.apiary.Graph.SOURCE), v.toString());
        assertEquals(last, layer.get(org.apiary.Graph.SINK), v.toString());
        for (JsonNode e : v.get("edges")) {
          assertTrue(layer.get(e.get("from").asText()) < layer.get(e.get("to").asText()), "edge forwards: " + e);
        }
        checked++;
      }
    }
    assertTrue(checked >= 3, graphs.toString());
  }

  /** The browser pages: from the jar without a key (they hold no data), with the CSP; other paths 404. */
  @Test
  void pagesAreServedWithTheirCspAndNothingElseIs() throws Exception {
    for (String page : List.of("/", "/executions.html", "/execution.html", "/record.html", "/graphs.html",
        "/cluster.html", "/sql.html", "/console.js", "/console.css", "/favicon.svg")) {
      RawHttp.Response r = Http.send("GET", console.url() + page, null);
      assertEquals(200, r.status(), page);
      assertTrue(r.header("content-security-policy").startsWith("default-src 'self'"), page + ": " + r.headers());
      String body = r.body().replace("http://www.w3.org/2000/svg", ""); // SVG's namespace, never fetched
      assertFalse(body.contains("http://") || body.contains("https://") || body.contains("//cdn")
          || body.contains("@import"), page + " loads nothing from elsewhere");
    }
    assertTrue(Http.send("GET", console.url() + "/", null).header("content-type").startsWith("text/html"));
    // One page chrome: console.js builds the header; no page repeats it.
    for (String page : List.of("/executions.html", "/execution.html", "/record.html", "/graphs.html", "/cluster.html",
        "/sql.html")) {
      String html = Http.send("GET", console.url() + page, null).body();
      assertFalse(html.contains("<header") || html.contains("<nav") || html.contains("key-form"), page);
      assertTrue(html.contains("<script src=\"/console.js\" defer></script>"), page);
    }
    String js = Http.send("GET", console.url() + "/console.js", null).body();
    assertFalse(js.contains("innerHTML") || js.contains("outerHTML") || js.contains("insertAdjacentHTML")
        || js.contains("document.write") || js.contains("eval("), "data is inserted as text only");
    for (String bad : List.of("/nothing.html", "/../pom.xml", "/web/console.js", "/ConsoleApi.class")) {
      RawHttp.Response r = Http.send("GET", console.url() + bad, null);
      assertEquals(404, r.status(), bad + ": " + r.body());
    }
    assertEquals(405, Http.send("POST", console.url() + "/sql.html", null).status());
  }

  private static Map<String, String> outcomes(JsonNode execution) {
    Map<String, String> o = new java.util.HashMap<>();
    for (JsonNode n : execution.at("/graph/nodes")) {
      if (n.has("outcome")) {
        o.put(n.get("id").asText(), n.get("outcome").asText());
      }
    }
    return o;
  }

  /** No two node boxes of the DAG intersect, and each lies within the drawing. */
  static void assertApart(JsonNode dag) {
    int w = dag.at("/layout/nodeWidth").asInt();
    int h = dag.at("/layout/nodeHeight").asInt();
    List<JsonNode> nodes = new ArrayList<>();
    dag.get("nodes").forEach(nodes::add);
    for (int i = 0; i < nodes.size(); i++) {
      JsonNode a = nodes.get(i);
      assertTrue(a.get("x").asInt() >= 0 && a.get("x").asInt() + w <= dag.at("/layout/width").asInt()
          && a.get("y").asInt() >= 0 && a.get("y").asInt() + h <= dag.at("/layout/height").asInt(), a.toString());
      for (int j = i + 1; j < nodes.size(); j++) {
        JsonNode b = nodes.get(j);
        boolean apart = a.get("x").asInt() + w <= b.get("x").asInt() || b.get("x").asInt() + w <= a.get("x").asInt()
            || a.get("y").asInt() + h <= b.get("y").asInt() || b.get("y").asInt() + h <= a.get("y").asInt();
        assertTrue(apart, "nodes overlap: " + a + " and " + b);
      }
    }
  }

  @Test
  void clusterShowsTheDatabaseAndTheLiveFrontend() throws Exception {
    JsonNode c = ok(get("/api/cluster"));
    assertTrue(c.at("/database/partitions").asLong() >= 1, c.toString());
    assertTrue(c.at("/database/hosts").size() >= 1, c.toString());
    boolean live = false;
    for (JsonNode f : c.get("frontends")) {
      if (f.get("endpoint").asText().equals(frontend.endpoint()) && f.get("live").asBoolean()) {
        live = f.get("leaseRemainingMs").asLong() >= 0;
      }
    }
    assertTrue(live, "the frontend is listed as live: " + c);
    assertTrue(c.at("/executions/FAILED").asLong() >= 1, c.toString());
  }

  @Test
  void keysAreRequiredWithTheRole() throws Exception {
    for (String path : List.of("/api/executions", "/api/executions/x", "/api/graphs", "/api/cluster")) {
      RawHttp.Response none = Http.send("GET", console.url() + path, null);
      assertEquals(401, none.status(), path);
      assertTrue(none.header("www-authenticate").startsWith("Bearer"), none.headers().toString());
      assertEquals(401, Http.send("GET", console.url() + path, "apiary_0123456789abcdef_"
          + "x".repeat(43)).status(), path);
      RawHttp.Response forbidden = Http.send("GET", console.url() + path, viewer);
      assertEquals(403, forbidden.status(), path);
      assertTrue(forbidden.body().contains("admin"), forbidden.body());
    }
  }

  @Test
  void unknownIdsBadFiltersAndOtherMethodsAreRefused() throws Exception {
    RawHttp.Response missing = get("/api/executions/" + enc(run + "never"));
    assertEquals(404, missing.status());
    assertEquals(run + "never", json(missing).get("id").asText());
    assertTrue(json(missing).get("error").asText().contains(run + "never"));
    for (String[] bad : new String[][] {{"status", "sleeping"}, {"since", "yesterday"}, {"after", "bm90LWEtY3Vyc29y"}, {"colour", "red"}, {"graph", "g".repeat(65)}}) {
      RawHttp.Response r = get("/api/executions?" + bad[0] + "=" + bad[1]);
      assertEquals(400, r.status(), String.join("=", bad) + ": " + r.body());
      assertEquals(bad[0], json(r).get("field").asText(), r.body());
    }
    for (String method : List.of("POST", "PUT", "DELETE")) {
      RawHttp.Response r = Http.send(method, console.url() + "/api/executions", admin);
      assertEquals(405, r.status(), method);
      assertEquals("GET, HEAD", r.header("allow"));
    }
    assertEquals(404, get("/api/nothing").status());
  }

  @Test
  void withTheSinkUnreachableExecutionsStillAnswerWithTheProblemNamed() throws Exception {
    String sink = "jdbc:postgresql://127.0.0.1:1/apiary?user=apiary&password=hunter2";
    try (ConsoleServer broken = ConsoleServer.start(db, ConsoleConfig.defaults(0).withSink(sink))) {
      RawHttp.Response r = Http.send("GET", broken.url() + "/api/executions?prefix=" + enc(run) + "&status=FAILED",
          admin);
      JsonNode body = ok(r);
      assertEquals(1, body.get("total").asLong(), body.toString());
      JsonNode problems = body.get("problems");
      assertEquals(1, problems.size(), body.toString());
      assertEquals("sink", problems.get(0).get("source").asText());
      assertFalse(r.body().contains("hunter2"), "the sink's password is never shown: " + r.body());

      RawHttp.Response one = Http.send("GET", broken.url() + "/api/executions/" + enc(failedId), admin);
      JsonNode detail = ok(one);
      assertEquals("FAILED", detail.at("/execution/status").asText());
      assertEquals("sink", detail.at("/problems/0/source").asText(), detail.toString());
      assertTrue(detail.get("functions").isNull());
      assertFalse(one.body().contains("hunter2"), one.body());
      assertFalse(Http.send("GET", broken.url() + "/api/cluster", admin).body().contains("hunter2"));
    }
  }

  /**
   * With a sink: an execution's function executions come from its FunctionInvocations, and one that is no longer in
   * the log (past retention) but has function executions there is answered with what the sink knows.
   */
  @Test
  void withASinkFunctionExecutionsAreShownAndExecutionsPastRetentionAreFound(
      @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
    String sink = "jdbc:duckdb:" + dir.resolve("provenance.duckdb");
    String gone = run + "gone";
    try (java.sql.Connection c = java.sql.DriverManager.getConnection(sink);
         java.sql.Statement st = c.createStatement()) {
      // The columns the console reads, as ProvenanceSchema.functionInvocations() names them.
      st.execute("CREATE TABLE FunctionInvocations (event_time BIGINT, exec_id BIGINT, function_name VARCHAR, "
          + "execution_id VARCHAR, partition_key VARCHAR, latency_us BIGINT, mode VARCHAR)");
      st.execute("INSERT INTO FunctionInvocations VALUES (1, 11, 'bump', '" + failedId + "', '7500', 40, 'recorded'), "
          + "(2, 12, 'bump', '" + gone + "', '1', 30, 'ran'), (3, 13, 'report', '" + gone + "', '1', 20, 'ran')");
      // As ProvenanceSchema.invocations() declares it: how each invocation ended (issue 43 item 1).
      st.execute("CREATE TABLE Invocations (invocation_id VARCHAR, graph VARCHAR, graph_version INTEGER, status "
          + "VARCHAR, error VARCHAR, started_at TIMESTAMP, finished_at TIMESTAMP, frontend VARCHAR, caller VARCHAR, "
          + "attempts INTEGER, traceparent VARCHAR)");
      st.execute("INSERT INTO Invocations VALUES ('alice/" + gone + "', 'bumpAndReport', 3, 'FAILED', 'boom', "
          + "TIMESTAMP '2026-11-29 10:00:00', TIMESTAMP '2026-11-29 10:00:02', 'fe-1', 'alice', 2, NULL), "
          + "('" + run + "quiet', 'bumpAndReport', 1, 'DONE', NULL, TIMESTAMP '2026-11-29 09:00:00', "
          + "TIMESTAMP '2026-11-29 09:00:01', 'fe-2', NULL, 1, NULL)");
    }
    try (ConsoleServer withSink = ConsoleServer.start(db, ConsoleConfig.defaults(0).withSink(sink))) {
      JsonNode failed = ok(Http.send("GET", withSink.url() + "/api/executions/" + enc(failedId), admin));
      assertEquals(1, failed.get("functions").size(), failed.toString());
      assertEquals("bump", failed.at("/functions/0/function").asText());
      assertEquals("recorded", failed.at("/functions/0/mode").asText());
      assertTrue(failed.get("problems").isEmpty(), failed.toString());
      // Its graph's DAG by outcome: bump answered from its record, explode failed (issue 43 item 3).
      assertEquals(Map.of("bump", ConsoleApi.RECORDED, "explode", ConsoleApi.FAILED), outcomes(failed), failed.toString());
      JsonNode ok = ok(Http.send("GET", withSink.url() + "/api/executions/" + enc(run + "ok-5"), admin));
      assertEquals(Map.of("bump", ConsoleApi.UNKNOWN, "report", ConsoleApi.UNKNOWN), outcomes(ok),
          "done, but the sink holds no function execution of ok-5 (not loaded yet, or not captured): " + ok);

      // Past retention, known to the sink's Invocations by the client's ID alone (logged as alice/ID): how it ended.
      JsonNode past = ok(Http.send("GET", withSink.url() + "/api/executions/" + enc(gone), admin));
      assertEquals("FAILED", past.at("/execution/status").asText(), past.toString());
      assertEquals("alice/" + gone, past.at("/execution/id").asText(), past.toString());
      assertEquals("boom", past.at("/execution/error").asText(), past.toString());
      assertEquals(2000, past.at("/execution/durationMs").asLong(), past.toString());
      assertEquals(2, past.get("functions").size(), past.toString());
      assertTrue(past.get("known").asText().contains("retention"), past.toString());
      assertTrue(past.get("problems").isEmpty(), past.toString());
      // One that ran no function the sink knows of (read-only, or all answered from records) is found too.
      JsonNode quiet = ok(Http.send("GET", withSink.url() + "/api/executions/" + enc(run + "quiet"), admin));
      assertEquals("DONE", quiet.at("/execution/status").asText(), quiet.toString());
      assertEquals(0, quiet.get("functions").size(), quiet.toString());

      JsonNode list = ok(Http.send("GET", withSink.url() + "/api/executions?prefix=" + enc(run), admin));
      assertEquals(2, list.at("/sink/executionsWithFunctions").asLong(), list.toString());
      assertTrue(list.get("problems").isEmpty(), list.toString());
    }
  }

  /**
   * Issue 42 item 5, issue 43 item 3: invocations whose log rows the retention deleted are listed from the sink's
   * Invocations, merged with the log's page by page (pages of 5: each invocation exactly once, newest first), an
   * invocation in both shown once as the log has it, the filters applied to both; with the sink unreadable the log's
   * are listed and a problem says why.
   */
  @Test
  void executionsPastRetentionAreListedFromTheSinkOnceEachAcrossPages(
      @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
    String prefix = run + "ok-12"; // logged: ok-12 and ok-120 to ok-129
    ExecutionQueries.Filter byPrefix = new ExecutionQueries.Filter(null, null, null, null, null, prefix);
    List<ExecutionQueries.Execution> logged = ExecutionQueries.list(db, byPrefix, null, 100).executions();
    assertEquals(11, logged.size(), logged.toString());
    // The oracle: ID -> {status, graph, started (µs)}, written here and compared with what the pages show.
    Map<String, List<Object>> expected = new java.util.TreeMap<>();
    logged.forEach(e -> expected.put(e.id(), List.of(e.status(), e.graph(), e.startedMicros())));
    String sink = "jdbc:duckdb:" + dir.resolve("past.duckdb");
    try (java.sql.Connection c = java.sql.DriverManager.getConnection(sink)) {
      try (java.sql.Statement st = c.createStatement()) { // as ProvenanceSchema.invocations() declares it
        st.execute("CREATE TABLE Invocations (invocation_id VARCHAR, graph VARCHAR, graph_version INTEGER, status "
            + "VARCHAR, error VARCHAR, started_at TIMESTAMP, finished_at TIMESTAMP, frontend VARCHAR, caller "
            + "VARCHAR, attempts INTEGER, traceparent VARCHAR)");
        st.execute("CREATE TABLE FunctionInvocations (event_time BIGINT, exec_id BIGINT, function_name VARCHAR, "
            + "execution_id VARCHAR, partition_key VARCHAR, latency_us BIGINT, mode VARCHAR)");
      }
      try (java.sql.PreparedStatement insert = c.prepareStatement("INSERT INTO Invocations VALUES (?, ?, 1, ?, NULL, "
          + "?, ?, 'fe-past', NULL, 1, NULL)")) {
        java.util.function.BiConsumer<String, Object[]> row = (id, v) -> {
          try {
            long started = (long) v[2];
            insert.setString(1, id);
            insert.setString(2, (String) v[1]);
            insert.setString(3, (String) v[0]);
            insert.setObject(4, utc(started));
            insert.setObject(5, utc(started + (long) v[3]));
            insert.executeUpdate();
          } catch (java.sql.SQLException e) {
            throw new AssertionError(e);
          }
        };
        // Eight the log no longer holds: each just before a logged one (the fourth at the same instant: the ID
        // orders them), the last an hour before all.
        for (int i = 0; i < 8; i++) {
          String id = prefix + "past-" + i;
          long started = i == 7 ? logged.get(10).startedMicros() - 3_600_000_000L
              : logged.get(i).startedMicros() - (i == 3 ? 0 : 1);
          String status = i % 3 == 0 ? "FAILED" : "DONE";
          String graph = i % 2 == 0 ? "failing" : "bumpAndReport";
          if (i == 0) { // it failed, was resumed and ended again, done: its last end is its outcome
            row.accept(id, new Object[] {"FAILED", graph, started, 1_000L});
            status = "DONE";
          }
          row.accept(id, new Object[] {status, graph, started, 5_000L});
          expected.put(id, List.of(status, graph, started));
        }
        // Two logged ones the sink has as an earlier end (before a resume): the log's rows stand, shown once.
        row.accept(logged.get(0).id(), new Object[] {"FAILED", "failing", logged.get(0).startedMicros(), 1L});
        row.accept(logged.get(5).id(), new Object[] {"FAILED", "failing", logged.get(5).startedMicros() - 7_200_000_000L,
            1L});
        // And, as within the retention, every ended invocation of this run in both the log and the sink.
        for (ExecutionQueries.Execution e : ExecutionQueries.list(db, new ExecutionQueries.Filter(null, null, null,
            null, null, run), null, 1000).executions()) {
          row.accept(e.id(), new Object[] {e.status(), e.graph(), e.startedMicros(), 1000L * (e.finishedMs()
              - e.startedMs())});
        }
      }
    }
    java.util.Properties readOnly = new java.util.Properties();
    readOnly.setProperty("duckdb.read_only", "true");
    ExecutionQueries.Sink fromFile = (query, parameters) -> {
      try (org.apiary.provenance.ProvenanceSink opened = org.apiary.provenance.ProvenanceSink.open(sink, readOnly,
          Duration.ofSeconds(30))) {
        return org.apiary.provenance.ProvenanceReports.runRolledBack(opened.connection(), query, parameters);
      }
    };

    // A page reads the sink only down to the log's page: not through every invocation both hold (2 reads here, 4
    // without that floor).
    int[] reads = {0};
    ExecutionQueries.Page first = ExecutionQueries.list(db, new ExecutionQueries.Filter(null, null, null, null, null,
        run), null, 5, (query, parameters) -> {
          reads[0]++;
          return fromFile.answer(query, parameters);
        });
    assertEquals(5, first.executions().size(), first.toString());
    assertTrue(reads[0] <= 2, reads[0] + " reads of the sink for a page of 5");

    List<String> seen = new ArrayList<>();
    ExecutionQueries.Cursor after = null;
    int pages = 0;
    do {
      ExecutionQueries.Page page = ExecutionQueries.list(db, byPrefix, after, 5, fromFile);
      assertEquals(null, page.sinkProblem());
      assertEquals(null, page.total(), "not counted where the sink is read");
      assertTrue(page.executions().size() <= 5);
      for (ExecutionQueries.Execution e : page.executions()) {
        seen.add(e.id());
        List<Object> want = expected.get(e.id());
        assertNotNull(want, "listed, yet neither logged nor in the sink: " + e);
        assertEquals(want, List.of(e.status(), e.graph(), e.startedMicros()), e.toString());
      }
      after = page.next();
      pages++;
      assertTrue(pages < 10, "paging ends");
    } while (after != null);
    assertEquals(4, pages, seen.toString());
    assertEquals(19, seen.size(), "11 logged and 8 past the retention: " + seen);
    assertEquals(new java.util.TreeSet<>(expected.keySet()), new java.util.TreeSet<>(seen), "each once");
    List<String> newestFirst = new ArrayList<>(expected.keySet());
    newestFirst.sort(java.util.Comparator.comparing((String id) -> -(long) expected.get(id).get(2))
        .thenComparing(id -> id));
    assertEquals(newestFirst, seen, "newest first, by start then ID");

    // The filters apply to both sources; a logged invocation the sink has as FAILED is DONE, as the log says.
    Instant since = Instant.EPOCH.plus((long) expected.get(logged.get(4).id()).get(2), java.time.temporal.ChronoUnit.MICROS);
    for (ExecutionQueries.Filter f : List.of(
        new ExecutionQueries.Filter(null, "FAILED", null, null, null, prefix),
        new ExecutionQueries.Filter("failing", null, null, null, null, prefix),
        new ExecutionQueries.Filter(null, "DONE", since, null, null, prefix))) {
      List<String> want = newestFirst.stream().filter(id -> (f.status() == null || f.status().equals(
          expected.get(id).get(0))) && (f.graph() == null || f.graph().equals(expected.get(id).get(1)))
          && (f.since() == null || (long) expected.get(id).get(2) >= f.since().toEpochMilli() * 1000)).toList();
      List<String> got = ExecutionQueries.list(db, f, null, 100, fromFile).executions().stream()
          .map(ExecutionQueries.Execution::id).toList();
      assertEquals(want, got, f.toString());
      assertFalse(want.isEmpty(), f.toString());
    }

    // The console lists the same, through the same query layer; with the sink unreadable, the log's and a problem.
    try (ConsoleServer withSink = ConsoleServer.start(db, ConsoleConfig.defaults(0).withSink(sink))) {
      JsonNode list = ok(Http.send("GET", withSink.url() + "/api/executions?prefix=" + enc(prefix), admin));
      List<String> shown = new ArrayList<>();
      list.get("executions").forEach(e -> shown.add(e.get("id").asText()));
      assertEquals(newestFirst, shown, list.toString());
      assertTrue(list.get("total").isNull() && list.get("problems").isEmpty(), list.toString());
      JsonNode past = list.get("executions").get(shown.indexOf(prefix + "past-3"));
      assertEquals("FAILED", past.get("status").asText(), past.toString());
      assertEquals(5, past.get("durationMs").asLong(), past.toString());
    }
    String unreadable = "jdbc:duckdb:" + dir.resolve("no-such-dir").resolve("none.duckdb");
    try (ConsoleServer withoutSink = ConsoleServer.start(db, ConsoleConfig.defaults(0).withSink(unreadable))) {
      JsonNode list = ok(Http.send("GET", withoutSink.url() + "/api/executions?prefix=" + enc(prefix), admin));
      assertEquals(11, list.get("executions").size(), list.toString());
      assertEquals(11, list.get("total").asLong(), list.toString());
      assertTrue(list.toString().contains("invocations past the log's retention are not listed"), list.toString());
      assertEquals("sink", list.at("/problems/0/source").asText(), list.toString());
    }
  }

  /**
   * Issue 43 item 3: per graph, its logged executions started within the last hour, those that failed, and the
   * nearest-rank p50 and p99 of the ended ones' durations, as an oracle computes them from the log's rows here
   * (sorted in Java, where the console ranks them in SQL).
   */
  @Test
  void graphsCountCallsFailuresAndLatencyPercentilesOverTheLastHour() throws Exception {
    JsonNode graphs = ok(get("/api/graphs"));
    long since = Instant.parse(graphs.get("statsSince").asText()).toEpochMilli();
    assertTrue(Math.abs(System.currentTimeMillis() - 3_600_000L - since) < 60_000, graphs.get("statsSince").asText());
    int checked = 0;
    for (JsonNode g : graphs.get("graphs")) {
      String name = g.get("name").asText();
      org.voltdb.VoltTable t = db.callAdmin("the oracle", "@AdHoc", "SELECT status, SINCE_EPOCH(MICROSECOND, "
          + "finished_at) - SINCE_EPOCH(MICROSECOND, started_at), CASE WHEN finished_at IS NULL THEN 0 ELSE 1 END FROM "
          + org.apiary.runtime.SystemSchema.INVOCATIONS + " WHERE graph = ? AND started_at >= "
          + "TO_TIMESTAMP(MILLISECOND, ?)", name, since).getResults()[0];
      long calls = 0;
      long failures = 0;
      List<Long> durations = new ArrayList<>();
      while (t.advanceRow()) {
        calls++;
        failures += "FAILED".equals(t.getString(0)) ? 1 : 0;
        long d = t.getLong(1);
        if (t.getLong(2) == 1) {
          durations.add(d);
        }
      }
      java.util.Collections.sort(durations);
      JsonNode h = g.get("lastHour");
      assertEquals(calls, h.get("calls").asLong(), name + ": " + h);
      assertEquals(failures, h.get("failures").asLong(), name + ": " + h);
      assertEquals(durations.size(), h.get("ended").asLong(), name + ": " + h);
      if (durations.isEmpty()) {
        assertTrue(h.get("p50Ms").isNull() && h.get("p99Ms").isNull(), name + ": " + h);
      } else {
        long p50 = durations.get((int) Math.ceil(0.50 * durations.size()) - 1);
        long p99 = durations.get((int) Math.ceil(0.99 * durations.size()) - 1);
        assertEquals(p50 / 1000.0, h.get("p50Ms").asDouble(), 1e-9, name + ": " + h);
        assertEquals(p99 / 1000.0, h.get("p99Ms").asDouble(), 1e-9, name + ": " + h);
        assertTrue(h.get("p50Ms").asDouble() <= h.get("p99Ms").asDouble(), h.toString());
      }
      if (name.equals("bumpAndReport")) {
        assertTrue(h.get("calls").asLong() >= OK_RUNS + 1, h.toString());
        checked++;
      } else if (name.equals("failing")) {
        assertTrue(h.get("failures").asLong() >= 1, h.toString());
        checked++;
      }
    }
    assertEquals(2, checked, graphs.toString());
  }

  /**
   * Issue 43 item 3 (cluster): the provenance backlog each server last reported under the spill root, and a sink
   * that cannot be reached named as a problem (the page's banner) while the rest still answers.
   */
  @Test
  void clusterShowsEachServersBacklogAndAnUnreachableSink(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
      throws Exception {
    java.nio.file.Path server = java.nio.file.Files.createDirectories(dir.resolve("server-a"));
    String at = Instant.now().minusSeconds(3).toString();
    Json.MAPPER.writeValue(server.resolve(org.apiary.runtime.provenance.BacklogReport.FILE).toFile(),
        new org.apiary.runtime.provenance.BacklogReport("/srv/voltdbroot", 4242, 17, 5, 900, 0,
            "cannot reach the sink", null, false, at, 81920L, 42.5, false));
    String sink = "jdbc:postgresql://127.0.0.1:1/apiary?user=apiary&password=hunter2";
    try (ConsoleServer c = ConsoleServer.start(db, ConsoleConfig.defaults(0).withSink(sink).withSpillRoot(dir))) {
      RawHttp.Response r = Http.send("GET", c.url() + "/api/cluster", admin);
      JsonNode body = ok(r);
      JsonNode b = body.at("/provenance/servers/0");
      assertEquals("/srv/voltdbroot", b.get("server").asText(), body.toString());
      assertEquals(4242, b.get("pid").asLong());
      assertEquals(22, b.get("rowsWaiting").asLong());
      assertEquals(17, b.get("rowsInMemory").asLong());
      assertEquals(5, b.get("rowsOnDisk").asLong());
      assertEquals(900, b.get("rowsLoaded").asLong());
      assertEquals("cannot reach the sink", b.get("lastError").asText());
      assertEquals(81920, b.get("spillBytes").asLong(), b.toString());
      assertEquals(42.5, b.get("oldestUnloadedSeconds").asDouble(), b.toString());
      assertFalse(b.get("sinkReachable").asBoolean(true), b.toString());
      assertTrue(b.get("reportAgeSeconds").asDouble() >= 3, b.toString());
      assertTrue(body.at("/provenance/exportBacklog").isObject(), body.toString());
      assertFalse(body.at("/sink/reachable").asBoolean(), body.toString());
      assertEquals(List.of("sink"), sources(body), body.toString());
      assertTrue(body.at("/database/partitions").asLong() >= 1, "the rest still answers: " + body);
      assertFalse(r.body().contains("hunter2"), r.body());
    }
    try (ConsoleServer c = ConsoleServer.start(db, ConsoleConfig.defaults(0))) {
      JsonNode body = ok(Http.send("GET", c.url() + "/api/cluster", admin));
      assertTrue(body.at("/provenance/servers").isNull(), "no spill root, no reports: " + body);
      assertTrue(body.get("problems").isEmpty(), body.toString());
    }
  }

  /** With the database down every page's JSON still answers, naming the database and why. */
  @Test
  void withTheDatabaseDownPagesStillAnswerNamingIt() throws Exception {
    // A client of the test database, closed: every call to VoltDB through it fails, as with the database down.
    ApiaryDatabase closed = ApiaryDatabase.open(org.apiary.database.DatabaseConfig.external(
        db.clientAddresses().toArray(String[]::new)));
    closed.close();
    try (ConsoleServer c = ConsoleServer.start(closed, ConsoleConfig.defaults(0).withCredentialsRequired(false))) {
      for (String path : List.of("/api/cluster", "/api/graphs", "/api/executions")) {
        JsonNode body = ok(Http.send("GET", c.url() + path, null));
        assertTrue(sources(body).contains("database"), path + ": " + body);
        assertFalse(body.at("/problems/0/message").asText().isBlank(), body.toString());
      }
    }
  }

  private static List<String> sources(JsonNode body) {
    List<String> s = new ArrayList<>();
    body.get("problems").forEach(p -> s.add(p.get("source").asText()));
    return s;
  }

  /**
   * Issue 43 item 3 (SQL): SELECT and WITH only, a write refused with 400 naming it; at most 1,000 rows, more said;
   * a query running past the limit stopped with a message (2 s here; 10 s by default).
   */
  @Test
  void theSqlPageRunsReadsOnlyAtMostAThousandRowsAndStopsSlowQueries(
      @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
    String sink = "jdbc:duckdb:" + dir.resolve("sql.duckdb");
    try (java.sql.Connection c = java.sql.DriverManager.getConnection(sink);
         java.sql.Statement st = c.createStatement()) {
      st.execute("CREATE TABLE FunctionInvocations (event_time BIGINT, exec_id BIGINT, function_name VARCHAR, "
          + "execution_id VARCHAR, partition_key VARCHAR, latency_us BIGINT, mode VARCHAR)");
      st.execute("INSERT INTO FunctionInvocations VALUES (1, 11, 'bump', 'x', '1', 40, 'ran')");
    }
    assertEquals(Duration.ofSeconds(10), ConsoleApi.SQL_TIMEOUT);
    try (ConsoleServer c = ConsoleServer.start(db, ConsoleConfig.defaults(0).withSink(sink), Duration.ofSeconds(2))) {
      for (String write : List.of("DELETE FROM FunctionInvocations", "INSERT INTO FunctionInvocations VALUES (2, 12, "
          + "'x', 'y', '1', 1, 'ran')", "DROP TABLE FunctionInvocations", "/* hi */ UPDATE FunctionInvocations SET "
          + "mode = 'x'", "COPY FunctionInvocations TO 'out.csv'", "VALUES (1)")) {
        RawHttp.Response r = Http.send("GET", c.url() + "/api/sql?query=" + enc(write), admin);
        assertEquals(400, r.status(), write + ": " + r.body());
        assertEquals("query", json(r).get("field").asText(), r.body());
        assertTrue(json(r).get("error").asText().contains("SELECT and WITH"), r.body());
      }
      // A write behind a read: refused by the sink, or undone with the transaction it ran in.
      RawHttp.Response hidden = Http.send("GET", c.url() + "/api/sql?query=" + enc("SELECT 1; DELETE FROM "
          + "FunctionInvocations"), admin);
      assertTrue(hidden.status() == 200 || hidden.status() == 400, hidden.body());
      JsonNode one = ok(Http.send("GET", c.url() + "/api/sql?query=" + enc("WITH f AS (SELECT * FROM "
          + "FunctionInvocations) SELECT function_name, latency_us FROM f"), admin));
      assertEquals("[[\"bump\",\"40\"]]", one.get("rows").toString(), one.toString());
      assertFalse(one.get("truncated").asBoolean());
      assertEquals("[[\"1\"]]", ok(Http.send("GET", c.url() + "/api/sql?query=" + enc("SELECT COUNT(*) FROM "
          + "FunctionInvocations"), admin)).get("rows").toString(), "the refused writes changed nothing");

      JsonNode many = ok(Http.send("GET", c.url() + "/api/sql?query=" + enc("SELECT range AS n FROM "
          + "range(1500)"), admin));
      assertEquals(1000, many.get("rows").size());
      assertTrue(many.get("truncated").asBoolean(), many.get("message").toString());
      assertTrue(many.get("message").asText().contains("1000"), many.get("message").asText());
      JsonNode exactly = ok(Http.send("GET", c.url() + "/api/sql?query=" + enc("SELECT range AS n FROM "
          + "range(1000)"), admin));
      assertEquals(1000, exactly.get("rows").size());
      assertFalse(exactly.get("truncated").asBoolean());

      long started = System.nanoTime();
      RawHttp.Response slow = Http.send("GET", c.url() + "/api/sql?query=" + enc("SELECT SUM(a.range * "
          + "b.range) FROM range(1000000) a, range(1000000) b"), admin);
      long tookMs = (System.nanoTime() - started) / 1_000_000;
      assertEquals(504, slow.status(), slow.body());
      assertTrue(json(slow).get("error").asText().contains("was stopped"), slow.body());
      assertTrue(tookMs >= 1_900 && tookMs < 8_000, tookMs + " ms");
      // Cancelled, not left running: within 3 s no query thread of the console uses the CPU any more.
      java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
      long busy = Long.MAX_VALUE;
      for (long deadline = System.nanoTime() + 3_000_000_000L; System.nanoTime() < deadline && busy > 50_000_000L; ) {
        long before = queryThreadsCpu(threads);
        Thread.sleep(300);
        busy = queryThreadsCpu(threads) - before;
      }
      assertTrue(busy <= 50_000_000L, "the stopped query still runs: " + busy / 1_000_000 + " ms of CPU in 300 ms");
      ok(Http.send("GET", c.url() + "/api/sql?query=" + enc("SELECT 1"), admin));
    }
  }

  /** The CPU time (ns) of every console query thread in this JVM. */
  private static long queryThreadsCpu(java.lang.management.ThreadMXBean threads) {
    long sum = 0;
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().startsWith("console-query-")) {
        sum += Math.max(0, threads.getThreadCpuTime(t.getId()));
      }
    }
    return sum;
  }

  private static java.time.LocalDateTime utc(long micros) {
    return java.time.LocalDateTime.ofInstant(Instant.EPOCH.plus(micros, java.time.temporal.ChronoUnit.MICROS),
        java.time.ZoneOffset.UTC);
  }

  /**
   * Issue 43, item 4: the console's own {@code /metrics} counts its requests by page and status (after N of a page
   * and k refusals, exactly those), holds no path or ID as a label, needs a key as the API does; {@code /health} and
   * {@code /ready} answer without one.
   */
  @Test
  void theConsoleCountsItsRequestsByPageAndStatusAndServesHealthAndReadiness() throws IOException {
    String before = get("/metrics").body();
    for (int i = 0; i < 3; i++) {
      ok(get("/api/graphs"));
    }
    for (int i = 0; i < 2; i++) {
      assertEquals(404, get("/api/no-such-page-" + i).status());
    }
    String after = get("/metrics").body();
    assertEquals(requests(before, "graphs", 200) + 3, requests(after, "graphs", 200), after);
    assertEquals(requests(before, "other", 404) + 2, requests(after, "other", 404), after);
    assertTrue(after.contains("apiary_console_request_duration_seconds_count{page=\"graphs\"}"), after);
    assertTrue(after.contains("jvm_memory_used_bytes"), "the JVM's meters");
    assertFalse(after.contains("no-such-page"), "a path became a label");
    assertEquals(401, Http.send("GET", console.url() + "/metrics", null).status(), "metrics need a key");
    RawHttp.Response health = Http.send("GET", console.url() + "/health", null);
    assertEquals(200, health.status());
    RawHttp.Response ready = Http.send("GET", console.url() + "/ready", null);
    assertEquals(200, ready.status(), ready.body());
    assertEquals("ready\n", ready.body());
  }

  /** The count of {@code apiary_console_requests_total} for a page and status in a scrape (0 if absent). */
  private static double requests(String scrape, String page, int status) {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^apiary_console_requests_total\\{page=\""
        + page + "\",status=\"" + status + "\"\\} (\\S+)$").matcher(scrape);
    return m.find() ? Double.parseDouble(m.group(1)) : 0;
  }

  // --- HTTP on a plain socket ---

  private RawHttp.Response get(String path) throws IOException {
    return Http.send("GET", console.url() + path, admin);
  }

  private static JsonNode ok(RawHttp.Response r) throws IOException {
    assertEquals(200, r.status(), r.body());
    return json(r);
  }

  private static JsonNode json(RawHttp.Response r) throws IOException {
    return Json.MAPPER.readTree(r.body());
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  /** HTTP/1.0 with a bearer key on a plain socket ({@link RawHttp}); generous timeouts: the machine is shared. */
  static final class Http {
    static RawHttp.Response send(String method, String url, String key) throws IOException {
      return RawHttp.send(method, url, key == null ? Map.of() : Map.of("Authorization", "Bearer " + key),
          method.equals("GET") ? null : "", Duration.ofSeconds(60));
    }
  }
}
