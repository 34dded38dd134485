package org.apiary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apiary.cli.CliProcesses.Result;
import org.apiary.frontend.RawHttp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code apiary console --data DIR} (issue 43): prints its loopback address, answers /api/ with the service's admin
 * key, and refuses a request without one.
 */
class ConsoleCommandTest {
  private static final Duration START = Duration.ofSeconds(240); // apiary start on a loaded 2-core machine took over 90 s

  @TempDir
  Path work;

  @RegisterExtension
  final CliProcesses cli = new CliProcesses();

  @Test
  @Timeout(value = 600, unit = TimeUnit.SECONDS)
  void consoleServesTheApiOfARunningService() throws Exception {
    Path data = work.resolve("data");
    Path log = work.resolve("start.log");
    Process service = cli.start(log, "-Xmx768m", "start", "--data", data.toString(), "--no-provenance");
    CliProcesses.await(service, log, "apiary: ready: frontend ", START);
    Path consoleLog = work.resolve("console.log");
    Process console = cli.start(consoleLog, "-Xmx256m", "console", "--data", data.toString());
    String at = CliProcesses.await(console, consoleLog, "/api/ (", START);
    Matcher m = Pattern.compile("at http://127\\.0\\.0\\.1:(\\d+)/api/").matcher(at.lines().findFirst().orElse("")
        + Files.readString(consoleLog));
    assertTrue(m.find(), Files.readString(consoleLog));
    int port = Integer.parseInt(m.group(1));
    String key = Files.readAllLines(new ServiceDirectory(data).adminKey()).get(0).strip();

    assertEquals(401, get(port, "/api/cluster", null).status(), "no key, no answer");
    RawHttp.Response cluster = get(port, "/api/cluster", key);
    assertEquals(200, cluster.status(), cluster.body());
    assertTrue(cluster.body().contains("\"live\":true"), cluster.body());
    // With --data the console reads the servers' backlog reports under the spill root (none yet: no capture here).
    assertTrue(cluster.body().contains("\"servers\":["), cluster.body());
    RawHttp.Response graphs = get(port, "/api/graphs", key);
    assertEquals(200, graphs.status(), graphs.body());
    Result listed = cli.run(Duration.ofSeconds(120), "executions", "list", "--json", "--data", data.toString());
    assertEquals(0, listed.exit(), listed.toString());
    RawHttp.Response executions = get(port, "/api/executions", key);
    assertEquals(200, executions.status(), executions.body());
    // Nothing was deployed or invoked: both say so (ServiceCommandLineTest and ConsoleApiTest cover a workload).
    assertTrue(listed.out().isBlank(), listed.toString());
    assertTrue(executions.body().contains("\"executions\":[]") && executions.body().contains("\"total\":0"),
        executions.body());

    console.destroy(); // SIGTERM: its shutdown hook closes it
    assertTrue(console.waitFor(30, TimeUnit.SECONDS), "the console exited");
    Result stopped = cli.run(Duration.ofSeconds(60), "stop", "--data", data.toString());
    assertEquals(0, stopped.exit(), stopped.toString());
    assertTrue(service.waitFor(30, TimeUnit.SECONDS), "the service exited");
  }

  /** A GET on loopback with the key ({@code null}: none), through the tests' raw HTTP client. */
  private static RawHttp.Response get(int port, String path, String key) throws IOException {
    return RawHttp.send("GET", "http://127.0.0.1:" + port + path,
        key == null ? Map.of() : Map.of("Authorization", "Bearer " + key), null, Duration.ofSeconds(60));
  }
}
