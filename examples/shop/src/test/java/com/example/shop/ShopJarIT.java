package com.example.shop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apiary.database.LocalCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The jar this project builds, deployed as a user would: {@code apiary start --data D}, {@code apiary deploy
 * shop.jar}, {@code apiary invoke} of each graph and {@code apiary stop}, every command in a JVM of its own whose
 * classpath is Apiary's, without this project's classes, so the functions can only come from the jar. Runs after
 * {@code package} (Surefire's {@code deploy-the-jar} execution), which passes the jar's path as {@code shop.jar}.
 */
class ShopJarIT {
  private static final Duration START = Duration.ofSeconds(90);
  private static final Duration COMMAND = Duration.ofSeconds(60);

  @TempDir
  Path work;

  private final List<Process> started = new ArrayList<>();

  @AfterEach
  void killWhatIsLeft() throws InterruptedException {
    for (Process p : started) {
      if (p.isAlive()) {
        p.destroyForcibly();
        p.waitFor(30, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void theBuiltJarDeploysAndRuns() throws Exception {
    // Only Surefire's deploy-the-jar execution (after package) gives the jar; -Dtest=ShopJarIT also selects it in the
    // earlier test execution, where there is no jar yet.
    assumeTrue(System.getProperty("shop.jar") != null, "runs after package, in the deploy-the-jar execution");
    Path jar = Path.of(System.getProperty("shop.jar"));
    assertTrue(Files.isRegularFile(jar), "the packaged jar exists: " + jar);
    Path data = work.resolve("data");
    Path log = work.resolve("service.log");
    Process service = start(log, "start", "--data", data.toString());
    await(service, log, "apiary: ready: frontend ");

    String deployed = run("deploy", jar.toString(), "--data", data.toString());
    assertTrue(deployed.contains("graph checkout: version 1 (new)"), deployed);
    assertTrue(deployed.contains("checkout (local, writes, recorded), reserve (local, writes, recorded)"), deployed);
    assertFalse(deployed.contains("warning"), "the functions came from the jar: " + deployed);

    assertEquals("{\"name\":\"tea\",\"price\":300,\"stock\":10}", run("invoke", "add_product", "--key", "1",
        "{\"name\":\"tea\",\"price\":300,\"stock\":10}", "--data", data.toString()));
    run("invoke", "add_product", "--key", "2", "{\"name\":\"mug\",\"price\":850,\"stock\":5}", "--data",
        data.toString());
    assertEquals("2", run("invoke", "add_to_cart", "--key", "42", "{\"product\":1,\"quantity\":2}", "--data",
        data.toString()));
    run("invoke", "add_to_cart", "--key", "42", "{\"product\":2,\"quantity\":1}", "--data", data.toString());
    String order = run("invoke", "checkout", "--key", "42", "order-1", "--data", data.toString());
    assertTrue(order.contains("\"product\":1,\"quantity\":2,\"total\":600"), order);
    assertTrue(order.contains("\"product\":2,\"quantity\":1,\"total\":850"), order);

    String stopped = run("stop", "--data", data.toString());
    assertTrue(stopped.contains("stopped cleanly"), stopped);
    assertTrue(service.waitFor(30, TimeUnit.SECONDS), "the service exited");
  }

  /** Apiary's classpath: this JVM's, without this project's own classes (target/classes, target/test-classes). */
  private static String apiaryClasspath() {
    Path target = Path.of(System.getProperty("shop.jar")).toAbsolutePath().getParent();
    return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(entry -> !Path.of(entry).toAbsolutePath().startsWith(target))
        .collect(Collectors.joining(File.pathSeparator));
  }

  private List<String> command(String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(LocalCluster.VOLTDB_JVM_FLAGS);
    cmd.addAll(List.of("-Xmx512m", "-XX:TieredStopAtLevel=1", "-cp", apiaryClasspath(), "org.apiary.cli.Main"));
    cmd.addAll(List.of(args));
    return cmd;
  }

  private Process start(Path log, String... args) throws IOException {
    Process p = new ProcessBuilder(command(args)).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    started.add(p);
    return p;
  }

  /** Runs a command to its end (at most {@link #COMMAND}); it must exit 0. Returns its standard output, stripped. */
  private String run(String... args) throws IOException, InterruptedException {
    Path out = Files.createTempFile(work, "out-", ".log");
    Path err = Files.createTempFile(work, "err-", ".log");
    Process p = new ProcessBuilder(command(args)).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    started.add(p);
    if (!p.waitFor(COMMAND.toMillis(), TimeUnit.MILLISECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("apiary " + String.join(" ", args) + " did not finish within " + COMMAND);
    }
    String text = Files.readString(out);
    assertEquals(0, p.exitValue(), "apiary " + String.join(" ", args) + ":\n" + text + Files.readString(err));
    return text.strip();
  }

  private static void await(Process p, Path log, String marker) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + START.toNanos();
    while (System.nanoTime() < deadline) {
      if (Files.readString(log).contains(marker)) {
        return;
      }
      if (!p.isAlive()) {
        throw new AssertionError("apiary start exited with " + p.exitValue() + ":\n" + Files.readString(log));
      }
      Thread.sleep(100);
    }
    throw new AssertionError("apiary start printed no '" + marker + "' within " + START + ":\n" + Files.readString(log));
  }
}
