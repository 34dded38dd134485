package org.apiary.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
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
import org.apiary.frontend.provenance.ItemsApp;
import org.apiary.internal.Json;
import org.apiary.runtime.FunctionCatalog;
import org.apiary.runtime.FunctionInvoker;
import org.apiary.runtime.provenance.ServerProvenance;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The console's provenance views against the test database's real capture (issue 43 items 3 and 4): an execution's
 * timeline and its functions' reads and writes, and a record's lineage, for a scripted workload of {@link ItemsApp}
 * whose expected values are written here from what each function does.
 *
 * <p>Lineage workload, items a, a+1, a+2: E0 {@code stockRange [a, a+3)} (called directly) writes all three (reads
 * none); E1 {@code readThenSetTwo [a, a+1]} reads and updates a and a+1; E2 {@code readThenSetTwo [a+1, a+2]} the same for
 * a+1 and a+2; E3 {@code readItem a+2} only reads. So from a: a -> E1 -> {a, a+1}; a+1 -> E1, E2; E2 -> {a+1, a+2};
 * a+2 -> E2, E3 (three steps).
 */
@DatabaseTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConsoleProvenanceTest {
  private ApiaryDatabase db;
  private FrontendServer frontend;
  private ConsoleServer console;
  private String admin;
  private String run;
  private final long a = 9_100L + (System.nanoTime() & 0x3f) * 10;
  private final long item = 9_900L + (System.nanoTime() & 0x3f) * 10;
  private final long crowded = item + 5;

  @BeforeAll
  void start(TestDatabase database) throws Exception {
    db = database.database();
    ItemsApp.registerOnce(db);
    run = "p" + UUID.randomUUID().toString().substring(0, 6) + "-";
    frontend = FrontendServer.start(db, FrontendConfig.defaults());
    FunctionInvoker invoker = new FunctionInvoker(db, FunctionCatalog.load(db));
    invoker.callGlobal("stockRange", a, a + 3); // E0
    invoker.callGlobal("stockRange", crowded, crowded + 1);
    try (ApiaryClient client = ApiaryClient.connect(ClientConfig.of(frontend.endpoint())
        .withAttemptTimeout(Duration.ofSeconds(60)))) {
      client.invoke(InvocationRequest.of("readThenSetTwo", null, List.of(a, a + 1, 7L)).withId(run + "e1"));
      client.invoke(InvocationRequest.of("readThenSetTwo", null, List.of(a + 1, a + 2, 8L)).withId(run + "e2"));
      client.invoke(InvocationRequest.of("readItem", a + 2, "x").withId(run + "e3"));
      client.invoke(InvocationRequest.of("itemLifecycle", item, "widget").withId(run + "life"));
      assertThrows(FunctionFailedException.class, () -> client.invoke(InvocationRequest.of("stockThenFail",
          item + 1, "gadget").withId(run + "failed")));
      // One record read by more executions than a lineage holds.
      List<java.util.concurrent.CompletableFuture<?>> readers = new ArrayList<>();
      for (int i = 0; i < ConsoleApi.LINEAGE_NODES; i++) { // at once: a serial loop took most of this class's time
        readers.add(client.invokeAsync(InvocationRequest.of("readItem", crowded, "x").withId(run + "r" + i)));
      }
      java.util.concurrent.CompletableFuture.allOf(readers.toArray(java.util.concurrent.CompletableFuture[]::new))
          .get(120, java.util.concurrent.TimeUnit.SECONDS);
    }
    admin = Credentials.create(db, "console-provenance", Set.of(Credentials.ADMIN_ROLE)).apiKey();
    String sink = db.config().provenance().sinkUrl();
    awaitSink(sink, 3 + 2 + ConsoleApi.LINEAGE_NODES); // e1 to e3, the lifecycle's two, the readers
    console = ConsoleServer.start(db, ConsoleConfig.defaults(0).withSink(sink).withSinkInProcess(true));
  }

  /** Waits until the sink holds this run's function executions (one each, two for the lifecycle). */
  private void awaitSink(String sink, long expected) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    long functions = 0;
    while (System.nanoTime() < deadline) {
      ServerProvenance.active().orElseThrow().flush(Duration.ofSeconds(10));
      try (Connection c = DriverManager.getConnection(sink);
           PreparedStatement s = c.prepareStatement("SELECT COUNT(*) FROM FunctionInvocations WHERE execution_id "
               + "LIKE ?")) {
        s.setString(1, "%" + run + "%");
        try (ResultSet rs = s.executeQuery()) {
          rs.next();
          functions = rs.getLong(1);
        }
      }
      if (functions >= expected) {
        return;
      }
      Thread.sleep(200);
    }
    fail("the sink holds " + functions + " of " + expected + " function executions of " + run);
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
  void anExecutionsTimelineAndFunctionsShowTheirTimesReadsAndWrites() throws Exception {
    JsonNode life = get("/api/executions/" + enc(run + "life"));
    assertTrue(life.get("problems").isEmpty(), life.toString());
    JsonNode bars = life.at("/timeline/bars");
    assertEquals(List.of("stock", "audit"), names(bars), life.toString());
    long span = life.at("/timeline/spanUs").asLong();
    for (int i = 0; i < 2; i++) {
      JsonNode b = bars.get(i);
      JsonNode f = life.get("functions").get(i);
      assertEquals("ok", b.get("outcome").asText());
      assertEquals(String.valueOf(item), b.get("key").asText());
      assertEquals(f.get("execId").asText(), b.get("execId").asText());
      assertEquals(f.get("latencyUs").asLong(), b.get("durationUs").asLong(), "a bar lasts its latency");
      assertTrue(b.get("startUs").asLong() >= 0 && b.get("startUs").asLong() + b.get("durationUs").asLong() <= span,
          life.at("/timeline").toString());
    }
    assertTrue(bars.get(0).get("startUs").asLong() <= bars.get(1).get("startUs").asLong(), "stock before audit");
    String key = "id=" + item;
    JsonNode stock = life.get("functions").get(0);
    assertEquals(List.of(), touched(stock.get("reads")));
    assertEquals(List.of("items " + key + " insert", "items " + key + " update"), touched(stock.get("writes")),
        stock.toString());
    JsonNode audit = life.get("functions").get(1);
    assertEquals(List.of("items " + key), touched(audit.get("reads")), audit.toString());
    assertEquals(List.of("items " + key + " delete"), touched(audit.get("writes")), audit.toString());
    assertTrue(audit.at("/reads/0/keyed").asBoolean(), "its key links to the record page");

    // A failure: its function captured nothing (rolled back), and its bar names it with the error.
    JsonNode failed = get("/api/executions/" + enc(run + "failed"));
    JsonNode last = failed.at("/timeline/bars").get(failed.at("/timeline/bars").size() - 1);
    assertEquals("stockThenFail", last.get("function").asText(), failed.toString());
    assertEquals("failed", last.get("outcome").asText());
    assertTrue(last.get("error").asText().contains("stockThenFail fails"), last.toString());
    assertEquals(0, failed.get("functions").size(), "nothing of a rolled-back function is captured: " + failed);
  }

  @Test
  void aRecordsLineageFollowsReadersAndWhatTheyWroteThreeSteps() throws Exception {
    JsonNode l = get("/api/lineage?table=items&key=" + enc("id=" + a));
    assertFalse(l.get("more").asBoolean(), l.toString());
    String e1 = execution(l, "e1");
    String e2 = execution(l, "e2");
    String e3 = execution(l, "e3");
    Set<String> expected = new TreeSet<>(List.of(
        rec(a) + " -read-> " + e1, e1 + " -update-> " + rec(a), e1 + " -update-> " + rec(a + 1),
        rec(a + 1) + " -read-> " + e1, rec(a + 1) + " -read-> " + e2,
        e2 + " -update-> " + rec(a + 1), e2 + " -update-> " + rec(a + 2),
        rec(a + 2) + " -read-> " + e2, rec(a + 2) + " -read-> " + e3));
    assertEquals(expected, edges(l));
    assertEquals(Set.of(rec(a), rec(a + 1), rec(a + 2), e1, e2, e3), nodes(l), "E0 read nothing: not in it");
    for (JsonNode n : l.get("nodes")) {
      int level = n.get("level").asInt();
      String id = n.get("id").asText();
      int want = id.equals(rec(a)) ? 0 : id.equals(e1) ? 1 : id.equals(rec(a + 1)) ? 2 : id.equals(e2) ? 3
          : id.equals(rec(a + 2)) ? 4 : 5;
      assertEquals(want, level, id);
    }

    // Two steps: a+2 is written by E2, but who read it is not followed.
    JsonNode two = get("/api/lineage?table=items&key=" + enc("id=" + a) + "&depth=2");
    assertFalse(nodes(two).contains(e3), two.toString());
    assertTrue(nodes(two).contains(rec(a + 2)), two.toString());
  }

  @Test
  void aLineageHoldsAtMost200NodesThenSaysMore() throws Exception {
    JsonNode l = get("/api/lineage?table=items&key=" + enc("id=" + crowded));
    assertEquals(ConsoleApi.LINEAGE_NODES, l.get("nodes").size(), "the record and 199 of its 200 readers");
    assertTrue(l.get("more").asBoolean(), l.get("more").toString());
    assertEquals(ConsoleApi.LINEAGE_NODES - 1, l.get("edges").size());
    JsonNode small = get("/api/lineage?table=items&key=" + enc("id=" + crowded) + "&limit=3");
    assertEquals(3, small.get("nodes").size());
    assertTrue(small.get("more").asBoolean());
    for (String bad : List.of("depth=4", "limit=201", "limit=0", "colour=red")) {
      RawHttp.Response r = ConsoleApiTest.Http.send("GET", console.url() + "/api/lineage?table=items&key=id%3D1&"
          + bad, admin);
      assertEquals(400, r.status(), bad + ": " + r.body());
      assertEquals(bad.substring(0, bad.indexOf('=')), Json.MAPPER.readTree(r.body()).get("field").asText());
    }
    RawHttp.Response unknown = ConsoleApiTest.Http.send("GET", console.url() + "/api/lineage?table=nothing&key="
        + "id%3D1", admin);
    assertEquals(400, unknown.status(), unknown.body());
    assertTrue(unknown.body().contains("nothing"), unknown.body());
  }

  // --- helpers ---

  private static String rec(long id) {
    return "record:items id=" + id;
  }

  /** The lineage's execution node whose invocation ID ends with this run's {@code suffix}. */
  private String execution(JsonNode lineage, String suffix) {
    for (JsonNode n : lineage.get("nodes")) {
      if (n.get("kind").asText().equals("execution") && n.get("execution").asText().endsWith(run + suffix)) {
        return n.get("id").asText();
      }
    }
    fail("no execution " + run + suffix + " in " + lineage);
    return null;
  }

  private static Set<String> edges(JsonNode lineage) {
    Set<String> e = new TreeSet<>();
    lineage.get("edges").forEach(x -> e.add(x.get("from").asText() + " -" + x.get("kind").asText() + "-> "
        + x.get("to").asText()));
    return e;
  }

  private static Set<String> nodes(JsonNode lineage) {
    Set<String> n = new TreeSet<>();
    lineage.get("nodes").forEach(x -> n.add(x.get("id").asText()));
    return n;
  }

  private static List<String> names(JsonNode bars) {
    List<String> n = new ArrayList<>();
    bars.forEach(b -> n.add(b.get("function").asText()));
    return n;
  }

  private static List<String> touched(JsonNode list) {
    List<String> t = new ArrayList<>();
    list.forEach(x -> t.add(x.get("table").asText() + " " + x.get("key").asText()
        + (x.has("event") ? " " + x.get("event").asText() : "")));
    return t;
  }

  private JsonNode get(String path) throws Exception {
    RawHttp.Response r = ConsoleApiTest.Http.send("GET", console.url() + path, admin);
    assertEquals(200, r.status(), r.body());
    JsonNode body = Json.MAPPER.readTree(r.body());
    assertNotNull(body);
    return body;
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
