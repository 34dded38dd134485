package org.apiary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.OutputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.apiary.Application;
import org.apiary.database.LocalCluster;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The command line as a user runs it, for tests: each {@code apiary} command in its own JVM with this test's classpath
 * (every wait bounded), and application jars compiled at test time from sources whose classes are nowhere on the
 * classpath. A JUnit extension ({@code @RegisterExtension final CliProcesses cli = new CliProcesses();}): after each
 * test it kills (SIGKILL) every process it started that is still alive and removes the commands' output files.
 */
public final class CliProcesses implements BeforeEachCallback, AfterEachCallback {
  private final List<Process> started = new ArrayList<>();
  private Path work;

  @Override
  public void beforeEach(ExtensionContext context) throws IOException {
    work = Files.createTempDirectory("apiary-cli-test-");
  }

  @Override
  public void afterEach(ExtensionContext context) throws IOException, InterruptedException {
    killLeftovers();
    started.clear();
    try (Stream<Path> files = Files.walk(work)) {
      for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(f);
      }
    }
  }

  /** What a command printed and how it exited. */
  public record Result(int exit, String out, String err) {
    @Override
    public String toString() {
      return "exit " + exit + "\n--- stdout:\n" + out + "--- stderr:\n" + err;
    }
  }

  /** The command that runs {@code apiary} in a JVM of its own, with the JVM flags VoltDB needs. */
  public static List<String> java(String maxHeap) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(LocalCluster.VOLTDB_JVM_FLAGS);
    cmd.addAll(List.of(maxHeap, "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
        "org.apiary.cli.Main"));
    return cmd;
  }

  /** Runs one command in its own JVM and waits for it, at most {@code timeout} (then it is killed). */
  public Result run(Duration timeout, String... args) throws IOException, InterruptedException {
    return run(timeout, Map.of(), args);
  }

  /** {@link #run(Duration, String...)} with {@code environment} added to this process's environment. */
  public Result run(Duration timeout, Map<String, String> environment, String... args)
      throws IOException, InterruptedException {
    Path out = Files.createTempFile(work, "out-", ".log");
    Path err = Files.createTempFile(work, "err-", ".log");
    List<String> cmd = java("-Xmx256m");
    cmd.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile());
    builder.environment().putAll(environment);
    Process p = builder.start();
    started.add(p);
    if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      String threads = threadDump(p.pid());
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
      throw new AssertionError("apiary " + String.join(" ", args) + " did not finish within " + timeout + ":\n"
          + Files.readString(out) + Files.readString(err) + "\n--- its threads when it was killed:\n" + threads);
    }
    return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
  }

  /** The threads of a live JVM ({@code jcmd PID Thread.print}), to show where a command that overran was waiting. */
  public static String threadDump(long pid) throws IOException, InterruptedException {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    Path text = Files.createTempFile("apiary-threads-", ".txt");
    try {
      Process dump = new ProcessBuilder(jcmd.toString(), String.valueOf(pid), "Thread.print")
          .redirectErrorStream(true).redirectOutput(text.toFile()).start();
      if (!dump.waitFor(20, TimeUnit.SECONDS)) {
        dump.destroyForcibly();
        return "(jcmd did not finish within 20 s)\n" + Files.readString(text);
      }
      return Files.readString(text);
    } finally {
      Files.deleteIfExists(text);
    }
  }

  /** Starts a long-running command (a service, a frontend) in its own JVM, its output and errors into {@code log}. */
  public Process start(Path log, String maxHeap, String... args) throws IOException {
    List<String> cmd = java(maxHeap);
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    started.add(p);
    return p;
  }

  /**
   * Waits until {@code log} holds {@code marker}, at most {@code timeout}.
   *
   * @return the log's text from the marker on
   * @throws AssertionError with the log if the process exits first or the marker does not come in time
   */
  public static String await(Process p, Path log, String marker, Duration timeout) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      String text = Files.readString(log);
      int at = text.indexOf(marker);
      if (at >= 0) {
        return text.substring(at);
      }
      if (!p.isAlive()) {
        throw new AssertionError("the process exited with " + p.exitValue() + " before printing '" + marker + "':\n"
            + text);
      }
      Thread.sleep(100);
    }
    throw new AssertionError("no '" + marker + "' within " + timeout + ":\n" + Files.readString(log));
  }

  /** Every process started here. */
  List<Process> started() {
    return List.copyOf(started);
  }

  /** Kills (SIGKILL) every process started here that is still alive, waiting at most 30 s for each. */
  void killLeftovers() throws InterruptedException {
    for (Process p : started) {
      if (p.isAlive()) {
        p.destroyForcibly();
        p.waitFor(30, TimeUnit.SECONDS);
      }
    }
  }

  /**
   * Compiles an application's sources into a jar whose manifest declares it. Keep its classes in a package that is
   * nowhere on the classpath, so deploying it must take them from the jar.
   *
   * @param name names the jar and its build directories under {@code work}
   * @param packageName the sources' package
   * @param appClass the simple name of the declaring class (its {@code application()} returns the Application)
   * @param sources the sources by simple class name
   */
  public static Path applicationJar(Path work, String name, String packageName, String appClass, Map<String, String> sources)
      throws IOException, URISyntaxException {
    Path src = work.resolve(name + "-src").resolve(packageName.replace('.', '/'));
    Files.createDirectories(src);
    List<String> files = new ArrayList<>();
    for (Map.Entry<String, String> e : sources.entrySet()) {
      Path file = src.resolve(e.getKey() + ".java");
      Files.writeString(file, e.getValue());
      files.add(file.toString());
    }
    Path classes = work.resolve(name + "-classes");
    Files.createDirectories(classes);
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    String sdk = Path.of(Application.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    List<String> javacArgs = new ArrayList<>(List.of("--release", "17", "-proc:none", "-classpath", sdk,
        "-d", classes.toString()));
    javacArgs.addAll(files);
    assertEquals(0, javac.run(null, null, null, javacArgs.toArray(String[]::new)),
        "the test application compiles (javac's messages are on stderr)");

    Manifest manifest = new Manifest();
    manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    manifest.getMainAttributes().putValue(ApplicationJar.ATTRIBUTE, packageName + "." + appClass);
    Path jar = work.resolve(name + ".jar");
    try (OutputStream file = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(file, manifest);
         Stream<Path> all = Files.walk(classes)) {
      for (Path c : (Iterable<Path>) all.filter(Files::isRegularFile)::iterator) {
        out.putNextEntry(new JarEntry(classes.relativize(c).toString().replace('\\', '/')));
        out.write(Files.readAllBytes(c));
        out.closeEntry();
      }
    }
    return jar;
  }
}
