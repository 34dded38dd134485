package org.apiary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apiary.AccessDeniedException;
import org.apiary.Application;
import org.apiary.Graph;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.Credentials;
import org.apiary.frontend.Registrar;
import org.apiary.testapp.Increment;
import org.apiary.testapp.TestApp;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.voltdb.VoltTable;
import picocli.CommandLine;

/**
 * {@code apiary frontend} in its own JVM against the test database (issue 14). By default (issue 45, finding 7: it
 * served anyone and recorded whatever caller a client claimed unless given {@code --require-credentials}) it refuses a call without a valid API key and runs nothing of it, and serves a call with one; the key lives in the
 * database, never on the frontend's command line. (The frontend with a fault injected is the drills':
 * {@code DrillFrontendCommandTest} in apiary-drills.)
 */
@DatabaseTest
class FrontendCommandTest {
  private static final Duration START = Duration.ofSeconds(60);

  @TempDir
  Path work;

  @RegisterExtension
  final CliProcesses cli = new CliProcesses();

  @Test
  void helpDescribesNoCredentials() {
    StringWriter out = new StringWriter();
    CommandLine cl = Main.commandLine();
    cl.setOut(new PrintWriter(out));
    assertEquals(0, cl.execute("frontend", "--help"));
    String help = out.toString().replaceAll("\\s+", " ");
    assertTrue(help.contains("--no-credentials Serve without requiring API keys"), help);
    assertTrue(help.contains("apiary credentials create"), help);
    assertTrue(help.contains("--metrics-port=P Serve GET /metrics"), help);
  }

  @Test
  void aFrontendListeningOnEveryInterfaceMustBeToldTheAddressItAdvertises() {
    StringWriter err = new StringWriter();
    CommandLine cl = Main.commandLine();
    cl.setErr(new PrintWriter(err));
    // Refused before the database is reached (there is none at port 1).
    assertEquals(2, cl.execute("frontend", "--database", "127.0.0.1:1", "--bind", "0.0.0.0"));
    assertTrue(err.toString().contains("give --advertise ADDRESS"), err.toString());
    assertThrows(IllegalArgumentException.class,
        () -> org.apiary.frontend.FrontendConfig.defaults().withAdvertisedAddress("0.0.0.0"));
    assertEquals("10.0.0.7", org.apiary.frontend.FrontendConfig.defaults().withAdvertisedAddress("10.0.0.7")
        .withPort(5555).withBindAddress("0.0.0.0").advertisedAddress());
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void aFrontendRequiresCredentialsByDefaultRefusesCallsWithoutAValidKeyAndServesCallsWithOne(TestDatabase database)
      throws Exception {
    ApiaryDatabase db = database.database();
    // The shared test database holds the compiler tests' schema; its counter function is the application here.
    Registrar.register(db, Application.of(TestApp.SCHEMA, Graph.ofFunction("increment", Increment.class)));
    long key = 7_000_000L + System.nanoTime() % 1_000_000L;
    Credentials.Issued issued = Credentials.create(db, "frontend-cli-test");
    Path log = work.resolve("frontend.log");
    Process frontend = cli.start(log, "-Xmx384m", "frontend", "--database",
        String.join(",", db.clientAddresses()));
    String listening = CliProcesses.await(frontend, log, "listening on ", START);
    String endpoint = listening.substring("listening on ".length()).lines().findFirst().orElseThrow().strip();
    assertTrue(java.nio.file.Files.readString(log).contains("every call needs a valid API key"),
        java.nio.file.Files.readString(log));

    ClientConfig config = ClientConfig.of(endpoint).withAttemptTimeout(Duration.ofSeconds(10));
    for (String credential : new String[] {null, issued.apiKey().substring(0, issued.apiKey().length() - 1)
        + (issued.apiKey().endsWith("A") ? "B" : "A")}) {
      try (ApiaryClient anonymous = ApiaryClient.connect(credential == null ? config
          : config.withCredential(credential))) {
        AccessDeniedException e = assertThrows(AccessDeniedException.class,
            () -> anonymous.invoke("increment", key, 5L), String.valueOf(credential));
        assertFalse(e.getMessage().contains(issued.apiKey().substring(24)), "the refusal echoes the secret");
      }
    }
    assertEquals(0L, counter(db, key), "a refused call ran");

    try (ApiaryClient withKey = ApiaryClient.connect(config.withCredential(issued.apiKey()))) {
      assertEquals(5L, withKey.invoke("increment", key, 5L).values(Long.class).get(0));
    }
    assertEquals(5L, counter(db, key));

    frontend.destroy(); // SIGTERM: the frontend closes and exits
    assertTrue(frontend.waitFor(30, TimeUnit.SECONDS), "the frontend exited on SIGTERM");
  }

  /** {@code --metrics-port 0}: the frontend prints where /metrics, /health and /ready answer, on loopback. */
  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void metricsPortServesMetricsHealthAndReadyOnLoopback(TestDatabase database) throws Exception {
    ApiaryDatabase db = database.database();
    Registrar.register(db, Application.of(TestApp.SCHEMA, Graph.ofFunction("increment", Increment.class)));
    Path log = work.resolve("frontend-metrics.log");
    Process frontend = cli.start(log, "-Xmx384m", "frontend", "--no-credentials", "--metrics-port", "0",
        "--database", String.join(",", db.clientAddresses()));
    String listening = CliProcesses.await(frontend, log, "listening on ", START);
    String endpoint = listening.substring("listening on ".length()).lines().findFirst().orElseThrow().strip();
    String at = CliProcesses.await(frontend, log, "readiness at ", START);
    String url = at.substring("readiness at ".length()).lines().findFirst().orElseThrow().split("/metrics")[0];
    assertTrue(url.startsWith("http://127.0.0.1:"), url);
    try (ApiaryClient client = ApiaryClient.connect(ClientConfig.of(endpoint)
        .withAttemptTimeout(Duration.ofSeconds(10)))) {
      client.invoke("increment", 7_100_000L + System.nanoTime() % 1_000_000L, 1L);
    }
    java.util.function.Function<String, org.apiary.frontend.RawHttp.Response> get = path -> {
      try {
        return org.apiary.frontend.RawHttp.get(url + path);
      } catch (java.io.IOException e) {
        throw new AssertionError(e);
      }
    };
    assertEquals(200, get.apply("/health").status());
    assertEquals(200, get.apply("/ready").status(), get.apply("/ready").body());
    String metrics = get.apply("/metrics").body();
    assertTrue(metrics.contains("apiary_graph_invocations_total{graph=\"increment\",outcome=\"ok\"} 1.0"), metrics);
    // The same meters as on apiary start: functions, running invocations, the lease, the wire guard, the JVM.
    assertTrue(metrics.contains("apiary_function_executions_total{function=\"increment\",mode=\"ran\","
        + "outcome=\"ok\"} 1.0"), metrics);
    assertTrue(metrics.contains("\napiary_invocations_running 0.0"), metrics);
    java.util.regex.Matcher lease = java.util.regex.Pattern.compile("\napiary_frontend_lease_remaining_seconds (\\S+)")
        .matcher(metrics);
    assertTrue(lease.find() && Double.parseDouble(lease.group(1)) > 0, "it holds its lease: " + metrics);
    assertTrue(metrics.contains("\napiary_wire_rejected_total{reason=\"malformed_request\"} 0.0"), metrics);
    assertTrue(metrics.contains("\njvm_memory_used_bytes{"), metrics);
    frontend.destroy();
    assertTrue(frontend.waitFor(30, TimeUnit.SECONDS), "the frontend exited on SIGTERM");
  }

  private static long counter(ApiaryDatabase db, long k) {
    VoltTable t = db.callAdmin("reading a counter", "@AdHoc", "SELECT v FROM counters WHERE k = ?", k)
        .getResults()[0];
    return t.advanceRow() ? t.getLong(0) : 0L;
  }
}
