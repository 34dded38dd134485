package org.apiary.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apiary.FunctionFailedException;
import org.apiary.InvalidRequestException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.GraphResult;
import org.apiary.client.InvocationRequest;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.DatabaseConfig;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A frontend's /metrics, /health and /ready (issue 43), read over HTTP and parsed here (not with Micrometer's code),
 * against the real database.
 */
@DatabaseTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MetricsTest {
  private ApiaryDatabase db;
  private FrontendServer frontend;
  private ApiaryClient client;
  private String base;

  @BeforeAll
  void start(TestDatabase database) {
    db = database.database();
    TestGraphs.registerOnce(db);
    frontend = FrontendServer.start(db, FrontendConfig.defaults().withMetrics(0));
    base = frontend.metricsUrl().orElseThrow();
    client = ApiaryClient.connect(ClientConfig.of(frontend.endpoint()).withAttemptTimeout(Duration.ofSeconds(20)));
  }

  @AfterAll
  void stop() {
    client.close();
    frontend.close();
  }

  @Test
  void theScrapeCountsExactlyTheInvocationsAndExecutionsThatEnded() throws Exception {
    client.invoke("bumpAndReport", 1L, 1L); // the graphs' series exist before the first scrape
    assertThrows(FunctionFailedException.class, () -> client.invoke("failing", 1L, 1L));
    Map<String, Double> before = scrape();
    int n = 30;
    int k = 7;
    for (int i = 0; i < n; i++) {
      long key = 100 + i;
      if (i < k) {
        assertThrows(FunctionFailedException.class, () -> client.invoke("failing", key, 1L));
      } else {
        client.invoke("bumpAndReport", key, 1L);
      }
    }
    Map<String, Double> after = scrape();
    assertEquals(n - k, delta(before, after, "apiary_graph_invocations_total{graph=\"bumpAndReport\",outcome=\"ok\"}"));
    assertEquals(k, delta(before, after,
        "apiary_graph_invocations_total{graph=\"failing\",outcome=\"function_failed\"}"));
    assertEquals(0, delta(before, after, "apiary_graph_invocations_total{graph=\"failing\",outcome=\"ok\"}"));
    assertEquals(0, delta(before, after,
        "apiary_graph_invocations_total{graph=\"bumpAndReport\",outcome=\"function_failed\"}"));
    assertEquals(n - k, delta(before, after, "apiary_graph_duration_seconds_count{graph=\"bumpAndReport\"}"));
    assertEquals(k, delta(before, after, "apiary_graph_duration_seconds_count{graph=\"failing\"}"));
    // bump runs in both graphs; report only in bumpAndReport; explode fails every time.
    assertEquals(n, delta(before, after,
        "apiary_function_executions_total{function=\"bump\",mode=\"ran\",outcome=\"ok\"}"));
    assertEquals(n - k, delta(before, after,
        "apiary_function_executions_total{function=\"report\",mode=\"ran\",outcome=\"ok\"}"));
    assertEquals(k, delta(before, after,
        "apiary_function_executions_total{function=\"explode\",mode=\"unknown\",outcome=\"failed\"}"));
    assertEquals(0, delta(before, after,
        "apiary_function_executions_total{function=\"bump\",mode=\"record\",outcome=\"ok\"}"));
    assertEquals(n + (n - k) + k, delta(before, after, "apiary_function_duration_seconds_count{function=\"bump\"}")
        + delta(before, after, "apiary_function_duration_seconds_count{function=\"report\"}")
        + delta(before, after, "apiary_function_duration_seconds_count{function=\"explode\"}"));
    assertEquals(0.0, after.get("apiary_invocations_running"));
    double lease = after.get("apiary_frontend_lease_remaining_seconds");
    assertTrue(lease > 0 && lease <= 5, "lease remaining " + lease);
    assertTrue(after.keySet().stream().anyMatch(s -> s.startsWith("jvm_memory_used_bytes")), "JVM meters");
    assertTrue(after.containsKey("apiary_wire_rejected_total{reason=\"malformed_request\"}"), after.keySet().toString());
  }

  /**
   * An attempt lost after bump committed (its answer "lost" by a hook): the retry's bump is answered from its record,
   * counted as mode "record", and the invocation once, as ok.
   */
  @Test
  void aRetryAnsweredFromItsRecordIsCountedAsRecord() throws Exception {
    java.util.concurrent.atomic.AtomicBoolean lost = new java.util.concurrent.atomic.AtomicBoolean();
    FrontendHooks hooks = new FrontendHooks() {
      @Override
      public void afterFunction(String graph, String invocation, String function) {
        if (graph.equals("bumpAndReport") && function.equals("bump") && lost.compareAndSet(false, true)) {
          throw new org.apiary.OutcomeUnknownException("fault injection: the answer of bump was lost", null);
        }
      }
    };
    try (FrontendServer f = FrontendServer.start(db, FrontendConfig.defaults().withMetrics(0), hooks);
         ApiaryClient c = ApiaryClient.connect(ClientConfig.of(f.endpoint())
             .withAttemptTimeout(Duration.ofSeconds(20)))) {
      String url = f.metricsUrl().orElseThrow();
      c.invoke("bumpAndReport", 55_000L, 4L);
      assertTrue(lost.get(), "the fault was injected");
      assertEquals(4L, TestGraphs.counter(db, 55_000L), "bump took effect once");
      Map<String, Double> m = parse(get(url, "/metrics").body());
      assertEquals(1.0, m.get("apiary_function_executions_total{function=\"bump\",mode=\"ran\",outcome=\"ok\"}"));
      assertEquals(1.0, m.get("apiary_function_executions_total{function=\"bump\",mode=\"record\",outcome=\"ok\"}"));
      assertEquals(1.0, m.get("apiary_function_executions_total{function=\"report\",mode=\"ran\",outcome=\"ok\"}"));
      assertEquals(1.0, m.get("apiary_graph_invocations_total{graph=\"bumpAndReport\",outcome=\"ok\"}"));
      assertEquals(1.0, m.get("apiary_graph_duration_seconds_count{graph=\"bumpAndReport\"}"));
    }
  }

  @Test
  void tenThousandDistinctKeysAndUnregisteredGraphNamesAddNoSeries() throws Exception {
    client.invoke("bumpAndReport", 1L, 1L);
    assertThrows(InvalidRequestException.class, () -> client.invoke("noSuchGraph-warmup", 1L, 1L));
    Map<String, Double> before = scrape();
    List<CompletableFuture<GraphResult>> window = new ArrayList<>();
    for (int i = 0; i < 10_000; i++) {
      window.add(client.invokeAsync(InvocationRequest.of("bumpAndReport", 1_000_000L + i, 1L)
          .withId("metrics-" + UUID.randomUUID())));
      if (window.size() == 200) {
        window.forEach(f -> f.orTimeout(60, TimeUnit.SECONDS).join());
        window.clear();
      }
    }
    window.forEach(f -> f.orTimeout(60, TimeUnit.SECONDS).join());
    for (int i = 0; i < 50; i++) {
      String name = "unregistered-" + UUID.randomUUID();
      assertThrows(InvalidRequestException.class, () -> client.invoke(name, 1L, 1L));
    }
    Map<String, Double> after = scrape();
    List<String> added = new ArrayList<>(apiarySeries(after));
    added.removeAll(apiarySeries(before));
    assertEquals(List.of(), added.subList(0, Math.min(10, added.size())), added.size() + " series added, first 10");
    assertEquals(apiarySeries(before).size(), apiarySeries(after).size(), "series of Apiary's meters");
    assertEquals(10_000, delta(before, after,
        "apiary_graph_invocations_total{graph=\"bumpAndReport\",outcome=\"ok\"}"));
    assertEquals(50, delta(before, after,
        "apiary_graph_invocations_total{graph=\"unknown\",outcome=\"invalid_request\"}"));
    assertTrue(after.keySet().stream().noneMatch(s -> s.contains("unregistered-") || s.contains("metrics-")));
  }

  @Test
  void healthAndReadyAnswerAndOnlyGetIsAllowed() throws Exception {
    assertEquals(200, get("/health").status());
    assertEquals("up\n", get("/health").body());
    assertEquals(200, get("/ready").status());
    RawHttp.Response metrics = get("/metrics");
    assertTrue(metrics.headers().getOrDefault("content-type", "").startsWith("text/plain; version=0.0.4"));
    for (String method : List.of("POST", "PUT", "DELETE", "OPTIONS")) {
      for (String path : List.of("/metrics", "/health", "/ready")) {
        RawHttp.Response r = RawHttp.send(method, base + path, "x");
        assertEquals(405, r.status(), method + " " + path);
        assertEquals("GET, HEAD", r.headers().get("allow"));
      }
    }
    assertEquals(404, get("/api/anything").status());
  }

  /** Garbage and a 4 MiB header on raw sockets: the endpoint and the frontend keep answering. */
  @Test
  void garbageAndHugeHeadersLeaveTheFrontendServing() throws Exception {
    java.net.InetSocketAddress at = new java.net.InetSocketAddress(URI.create(base).getHost(),
        URI.create(base).getPort());
    try (Socket s = new Socket()) {
      s.connect(at, 5_000);
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      byte[] junk = new byte[64 * 1024];
      new java.util.Random(7).nextBytes(junk);
      out.write(junk);
      out.flush();
      drain(s.getInputStream());
    } catch (IOException expected) {
      // the server may reset the connection: what matters is what follows
    }
    try (Socket s = new Socket()) {
      s.connect(at, 5_000);
      s.setSoTimeout(30_000);
      OutputStream out = s.getOutputStream();
      out.write("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Huge: ".getBytes(StandardCharsets.US_ASCII));
      byte[] chunk = "a".repeat(64 * 1024).getBytes(StandardCharsets.US_ASCII);
      for (int i = 0; i < 64; i++) {
        out.write(chunk);
      }
      out.write("\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      drain(s.getInputStream());
    } catch (IOException expected) {
      // refused or reset: fine
    }
    try (Socket s = new Socket()) { // many headers
      s.connect(at, 5_000);
      s.setSoTimeout(30_000);
      OutputStream out = s.getOutputStream();
      StringBuilder req = new StringBuilder("GET /health HTTP/1.1\r\nHost: x\r\n");
      for (int i = 0; i < 20_000; i++) {
        req.append("X-").append(i).append(": y\r\n");
      }
      out.write(req.append("\r\n").toString().getBytes(StandardCharsets.US_ASCII));
      out.flush();
      drain(s.getInputStream());
    } catch (IOException expected) {
      // refused or reset: fine
    }
    assertEquals(List.of(9L, 9L), client.invoke("bumpAndReport", 77_000L, 9L).values(List.class).get(0).stream()
        .map(v -> ((Number) v).longValue()).toList());
    assertEquals(200, get("/health").status());
    assertTrue(get("/metrics").body().contains("apiary_graph_invocations_total"));
  }

  /**
   * A frontend on a database connection of its own that is then closed: its lease renewals fail, so /ready turns to
   * 503 and says why, while /health still answers.
   */
  @Test
  void readyTurnsTo503WhenTheDatabaseStopsAnsweringItsLeaseRenewals() throws Exception {
    ApiaryDatabase own = ApiaryDatabase.open(DatabaseConfig.external(db.clientAddresses().toArray(String[]::new)));
    FrontendServer f = FrontendServer.start(own, FrontendConfig.defaults()
        .withLease(Duration.ofMillis(1500), Duration.ofMillis(200)).withMetrics(0));
    try {
      String url = f.metricsUrl().orElseThrow();
      assertEquals(200, get(url, "/ready").status());
      own.close();
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
      RawHttp.Response ready = get(url, "/ready");
      while (ready.status() == 200 && System.nanoTime() < until) {
        Thread.sleep(100);
        ready = get(url, "/ready");
      }
      assertEquals(503, ready.status(), ready.body());
      assertTrue(ready.body().startsWith("not ready: "), ready.body());
      assertEquals(200, get(url, "/health").status());
      long expiry = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
      while (!get(url, "/ready").body().contains("lease expired") && System.nanoTime() < expiry) {
        Thread.sleep(100);
      }
      assertTrue(get(url, "/ready").body().contains("its lease expired"), get(url, "/ready").body());
      assertEquals(0.0, parse(get(url, "/metrics").body()).get("apiary_frontend_lease_remaining_seconds"));
    } finally {
      f.close();
    }
  }

  private static void drain(InputStream in) throws IOException {
    byte[] buf = new byte[8192];
    while (in.read(buf) >= 0) {
      // read until the server closes or the timeout
    }
  }

  private RawHttp.Response get(String path) throws Exception {
    return get(base, path);
  }

  private RawHttp.Response get(String url, String path) throws Exception {
    return RawHttp.get(url + path);
  }

  private Map<String, Double> scrape() throws Exception {
    RawHttp.Response r = get("/metrics");
    assertEquals(200, r.status());
    return parse(r.body());
  }

  private static double delta(Map<String, Double> before, Map<String, Double> after, String series) {
    assertTrue(after.containsKey(series), "no series " + series + " in the scrape; Apiary's are "
        + apiarySeries(after));
    return after.get(series) - before.getOrDefault(series, 0.0);
  }

  private static List<String> apiarySeries(Map<String, Double> scrape) {
    return scrape.keySet().stream().filter(s -> s.startsWith("apiary_")).sorted().toList();
  }

  /**
   * Prometheus' text format, as far as these tests need it: {@code name{label="value",...} number} per line, comments
   * skipped; each series keyed by its name and its labels sorted by name.
   */
  static Map<String, Double> parse(String text) {
    Map<String, Double> series = new TreeMap<>();
    for (String line : text.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      int brace = line.indexOf('{');
      int space;
      String key;
      if (brace >= 0 && brace < line.indexOf(' ')) {
        int close = line.indexOf('}', brace);
        TreeMap<String, String> labels = new TreeMap<>();
        int i = brace + 1;
        while (i < close) {
          int eq = line.indexOf('=', i);
          int open = eq + 1; // a quote
          int end = open + 1;
          StringBuilder value = new StringBuilder();
          while (line.charAt(end) != '"') {
            if (line.charAt(end) == '\\') {
              end++;
            }
            value.append(line.charAt(end++));
          }
          labels.put(line.substring(i, eq).trim(), value.toString());
          i = end + 1;
          if (i < close && line.charAt(i) == ',') {
            i++;
          }
        }
        StringBuilder k = new StringBuilder(line.substring(0, brace)).append('{');
        labels.forEach((n, v) -> k.append(k.charAt(k.length() - 1) == '{' ? "" : ",").append(n).append("=\"")
            .append(v).append('"'));
        key = k.append('}').toString();
        space = close + 1;
      } else {
        space = line.indexOf(' ');
        key = line.substring(0, space);
      }
      String[] rest = line.substring(space).trim().split("\\s+");
      series.put(key, Double.parseDouble(rest[0].replace("+Inf", "Infinity").replace("-Inf", "-Infinity")));
    }
    return series;
  }
}
