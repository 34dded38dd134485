package org.apiary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apiary.cli.CliProcesses.Result;
import org.apiary.frontend.RawHttp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** {@code apiary start --metrics-port 0} (issue 43): prints where /metrics, /health and /ready answer, on loopback. */
class StartMetricsTest {
  private static final Duration START = Duration.ofSeconds(240); // apiary start on a loaded 2-core machine took over 90 s

  @TempDir
  Path work;

  @RegisterExtension
  final CliProcesses cli = new CliProcesses();

  @Test
  @Timeout(value = 400, unit = TimeUnit.SECONDS)
  void startServesMetricsHealthAndReadyWhenAsked() throws Exception {
    Path data = work.resolve("data");
    Path log = work.resolve("start.log");
    Process service = cli.start(log, "-Xmx768m", "start", "--data", data.toString(), "--metrics-port", "0");
    CliProcesses.await(service, log, "apiary: ready: frontend ", START);
    String at = CliProcesses.await(service, log, "apiary: metrics, health and readiness at ", START);
    String url = at.substring("apiary: metrics, health and readiness at ".length()).split("/metrics")[0];
    assertTrue(url.startsWith("http://127.0.0.1:"), at);
    assertTrue(at.lines().findFirst().orElseThrow().contains("loopback only"), at);
    assertEquals(200, RawHttp.get(url + "/health").status());
    RawHttp.Response ready = RawHttp.get(url + "/ready");
    assertEquals(200, ready.status(), ready.body());
    String metrics = RawHttp.get(url + "/metrics").body();
    assertTrue(metrics.contains("apiary_invocations_running 0.0"), metrics);
    assertTrue(metrics.contains("apiary_frontend_lease_remaining_seconds "), metrics);
    // The embedded server's provenance capture, from the backlog report it rewrites every 2 s.
    for (String meter : List.of("apiary_provenance_backlog_rows ", "apiary_provenance_spill_rows ",
        "apiary_provenance_spill_bytes ", "apiary_provenance_lag_seconds ",
        "apiary_provenance_rows_loaded_total ", "apiary_provenance_rows_dropped_total ")) {
      assertTrue(metrics.contains("\n" + meter), meter + " missing:\n" + metrics);
    }
    java.util.regex.Matcher age = java.util.regex.Pattern.compile("\napiary_provenance_report_age_seconds (\\S+)")
        .matcher(metrics);
    // NaN until the server's capture starts (its first export: no application is deployed here), then seconds.
    assertTrue(age.find() && (age.group(1).equals("NaN") || Double.parseDouble(age.group(1)) < 30), metrics);
    Result stopped = cli.run(Duration.ofSeconds(60), "stop", "--data", data.toString());
    assertEquals(0, stopped.exit(), stopped.toString());
    assertTrue(service.waitFor(30, TimeUnit.SECONDS), "the service exited");
  }
}
