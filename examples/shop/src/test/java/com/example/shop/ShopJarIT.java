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
    // The README's "service in five commands", run as written there (its data directory and jar name replaced).
    List<List<String>> readme = readmeServiceCommands(data, jar);
    List<String> startLine = readme.get(0);
    assertEquals("start", startLine.get(0), "the README's first service command starts Apiary: " + readme);
    Process service = start(log, startLine.toArray(String[]::new));
    await(service, log, "apiary: ready: frontend ");

    String deployed = run(readme.get(1).toArray(String[]::new));
    assertEquals(List.of("deploy", jar.toString(), "--data", data.toString()), readme.get(1));
    assertTrue(deployed.contains("graph checkout: version 1 (new)"), deployed);
    assertTrue(deployed.contains("checkout (local, writes, recorded), reserve (local, writes, recorded)"), deployed);
    assertFalse(deployed.contains("warning"), "the functions came from the jar: " + deployed);

    List<String> readmeInvoke = readme.get(2);
    assertEquals("invoke", readmeInvoke.get(0), "the README's third service command: " + readme);
    assertEquals("1", run(readmeInvoke.toArray(String[]::new)), "README: " + readmeInvoke);
    String status = run(readme.get(3).toArray(String[]::new));
    assertTrue(status.contains("add_to_cart"), status);

    assertEquals("{\"name\":\"tea\",\"price\":300,\"stock\":10}", run("invoke", "add_product", "--key", "1",
        "{\"name\":\"tea\",\"price\":300,\"stock\":10}", "--data", data.toString()));
    run("invoke", "add_product", "--key", "2", "{\"name\":\"mug\",\"price\":850,\"stock\":5}", "--data",
        data.toString());
    assertEquals("2", run("invoke", "add_to_cart", "--key", "43", "{\"product\":1,\"quantity\":2}", "--data",
        data.toString()));
    run("invoke", "add_to_cart", "--key", "43", "{\"product\":2,\"quantity\":1}", "--data", data.toString());
    String order = run("invoke", "checkout", "--key", "43", "order-1", "--data", data.toString());
    assertTrue(order.contains("\"product\":1,\"quantity\":2,\"total\":600"), order);
    assertTrue(order.contains("\"product\":2,\"quantity\":1,\"total\":850"), order);

    String stopped = run(readme.get(4).toArray(String[]::new));
    assertEquals(List.of("stop", "--data", data.toString()), readme.get(4));
    assertTrue(stopped.contains("stopped cleanly"), stopped);
    assertTrue(service.waitFor(30, TimeUnit.SECONDS), "the service exited");
    assertEquals(0, service.exitValue(), "a clean stop: exit 0\n" + Files.readString(log));
  }

  /**
   * The {@code ./apiary} lines of the README's "The service in five commands" block, as argument lists: its data
   * directory ({@code ./apiary-data}) and jar ({@code shop.jar}) replaced by this test's, comments and a trailing
   * {@code &} dropped, single-quoted words unquoted.
   */
  private static List<List<String>> readmeServiceCommands(Path data, Path jar) throws IOException {
    Path readme = Path.of("").toAbsolutePath().resolve("../../README.md").normalize();
    List<String> lines = Files.readAllLines(readme);
    int heading = lines.indexOf("## The service in five commands");
    assertTrue(heading >= 0, "README.md has its section 'The service in five commands'");
    List<List<String>> commands = new ArrayList<>();
    boolean inBlock = false;
    for (String line : lines.subList(heading, lines.size())) {
      if (line.startsWith("```")) {
        if (inBlock) {
          break;
        }
        inBlock = true;
        continue;
      }
      if (!inBlock || !line.startsWith("./apiary ")) {
        continue;
      }
      List<String> words = new ArrayList<>();
      java.util.regex.Matcher m = java.util.regex.Pattern.compile("'([^']*)'|(\\S+)").matcher(line);
      while (m.find()) {
        String w = m.group(1) != null ? m.group(1) : m.group(2);
        if (m.group(2) != null && (w.equals("#") || w.equals("&"))) {
          break;
        }
        words.add(w.equals("./apiary-data") ? data.toString() : w.equals("shop.jar") ? jar.toString() : w);
      }
      commands.add(words.subList(1, words.size()));
    }
    assertEquals(5, commands.size(), "five commands in the README's block: " + commands);
    return commands;
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
