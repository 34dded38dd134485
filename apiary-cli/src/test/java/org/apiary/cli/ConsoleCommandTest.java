package org.apiary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apiary.cli.CliProcesses.Result;
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

    assertTrue(get(port, "/api/cluster", null).startsWith("HTTP/1.1 401"), "no key, no answer");
    String cluster = get(port, "/api/cluster", key);
    assertTrue(cluster.startsWith("HTTP/1.1 200"), cluster);
    assertTrue(cluster.contains("\"live\":true"), cluster);
    String graphs = get(port, "/api/graphs", key);
    assertTrue(graphs.startsWith("HTTP/1.1 200"), graphs);
    Result listed = cli.run(Duration.ofSeconds(120), "executions", "list", "--json", "--data", data.toString());
    assertEquals(0, listed.exit(), listed.toString());
    String executions = get(port, "/api/executions", key);
    assertTrue(executions.startsWith("HTTP/1.1 200"), executions);
    // Nothing was deployed or invoked: both say so (ServiceCommandLineTest and ConsoleApiTest cover a workload).
    assertTrue(listed.out().isBlank(), listed.toString());
    assertTrue(executions.contains("\"executions\":[]") && executions.contains("\"total\":0"), executions);

    console.destroy(); // SIGTERM: its shutdown hook closes it
    assertTrue(console.waitFor(30, TimeUnit.SECONDS), "the console exited");
    Result stopped = cli.run(Duration.ofSeconds(60), "stop", "--data", data.toString());
    assertEquals(0, stopped.exit(), stopped.toString());
    assertTrue(service.waitFor(30, TimeUnit.SECONDS), "the service exited");
  }

  /** The status line, headers and body of a GET on loopback, HTTP/1.0 on a plain socket. */
  private static String get(int port, String path, String key) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
      s.setSoTimeout(60_000);
      OutputStream out = s.getOutputStream();
      out.write(("GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n" + (key == null ? ""
          : "Authorization: Bearer " + key + "\r\n") + "\r\n").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = s.getInputStream();
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      in.transferTo(all);
      return all.toString(StandardCharsets.UTF_8);
    }
  }
}
