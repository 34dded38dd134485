package org.apiary.drills;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apiary.database.LocalCluster;

/**
 * A frontend running as its own operating-system process, on this JVM's classpath, for fault drills and failure
 * tests that must really kill or stop one: {@code apiary frontend}, or {@code apiary drill-frontend} when the options
 * inject a fault ({@code --crash-after}, {@code --stop-after}, {@code --fault}).
 */
public final class FrontendProcess implements AutoCloseable {
  private static final Pattern LISTENING = Pattern.compile("frontend (\\S+) listening on (tcp://\\S+)");

  private static final Pattern PORT = Pattern.compile(":(\\d+)$");
  private static final Duration SIGNAL_TIMEOUT = Duration.ofSeconds(10);

  private final Process process;
  private final Path log;
  private final String id;
  private final String endpoint;
  private final List<String> databaseHosts;
  private final List<String> options;
  private volatile boolean paused;

  private FrontendProcess(Process process, Path log, String id, String endpoint, List<String> databaseHosts,
                          List<String> options) {
    this.process = process;
    this.log = log;
    this.id = id;
    this.endpoint = endpoint;
    this.databaseHosts = List.copyOf(databaseHosts);
    this.options = List.copyOf(options);
  }

  /**
   * Starts two frontend processes at once (their JVM starts overlap: about one start's time saved on two cores) and
   * waits until both listen. Either both are returned, {@code first}'s options first, or neither is left running.
   */
  static FrontendProcess[] startTwo(List<String> databaseHosts, List<String> first, List<String> second,
      Duration timeout) throws InterruptedException {
    List<java.util.concurrent.CompletableFuture<FrontendProcess>> starts = List.of(
        java.util.concurrent.CompletableFuture.supplyAsync(() -> start(databaseHosts, first, timeout)),
        java.util.concurrent.CompletableFuture.supplyAsync(() -> start(databaseHosts, second, timeout)));
    FrontendProcess[] started = new FrontendProcess[2];
    Exception failure = null;
    for (int i = 0; i < 2; i++) {
      try {
        started[i] = starts.get(i).get(timeout.plusSeconds(30).toMillis(), TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
        failure = failure == null ? e : failure;
        starts.get(i).thenAccept(FrontendProcess::close); // one that starts after all is closed then
      }
    }
    if (failure != null) {
      for (FrontendProcess p : started) {
        if (p != null) {
          p.close();
        }
      }
      Throwable cause = failure instanceof java.util.concurrent.ExecutionException e ? e.getCause() : failure;
      throw new IllegalStateException("a frontend process did not start: " + cause.getMessage(), cause);
    }
    return started;
  }

  /**
   * Starts a frontend process and waits until it listens.
   *
   * @param databaseHosts the database's client addresses (host:port)
   * @param options further {@code apiary frontend} options, e.g. {@code --lease-ms 2000}, and at most one fault
   */
  public static FrontendProcess start(List<String> databaseHosts, List<String> options, Duration timeout) {
    try {
      Path log = Files.createTempFile("apiary-frontend-", ".log");
      List<String> cmd = new ArrayList<>();
      cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      cmd.addAll(LocalCluster.VOLTDB_JVM_FLAGS);
      cmd.add("-Xmx512m");
      cmd.add("-cp");
      cmd.add(System.getProperty("java.class.path"));
      cmd.add("org.apiary.cli.Main");
      cmd.add(options.stream().anyMatch(o -> DrillFrontendCommand.FAULT_OPTIONS.contains(o.split("=", 2)[0]))
          ? "drill-frontend" : "frontend");
      cmd.add("--database");
      cmd.add(String.join(",", databaseHosts));
      if (!options.contains("--require-credentials")) {
        cmd.add("--no-credentials"); // the drills' clients carry no key; `apiary frontend` requires one by default
      }
      cmd.addAll(options);
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
      long deadline = System.nanoTime() + timeout.toNanos();
      while (System.nanoTime() < deadline) {
        Matcher m = LISTENING.matcher(Files.readString(log));
        if (m.find()) {
          return new FrontendProcess(p, log, m.group(1), m.group(2), databaseHosts, options);
        }
        if (!p.isAlive()) {
          throw new IllegalStateException("frontend process exited with code " + p.exitValue() + " before listening:\n"
              + Files.readString(log));
        }
        Thread.sleep(50);
      }
      p.destroyForcibly();
      throw new IllegalStateException("frontend process did not listen within " + timeout + ":\n" + Files.readString(log));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start a frontend process", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while starting a frontend process", e);
    }
  }

  /**
   * Starts a replacement for this frontend on the same port, so clients configured with its endpoint reach the
   * replacement (it has a new frontend ID). Kills this process first if it still runs. Retries a few times if the
   * port is not free yet.
   *
   * @param extraOptions options for the replacement only, e.g. {@code --crash-after f}
   */
  public FrontendProcess restart(List<String> extraOptions, Duration timeout) {
    if (process.isAlive()) {
      kill();
    }
    Matcher port = PORT.matcher(endpoint);
    if (!port.find()) {
      throw new IllegalStateException("cannot tell the port of endpoint " + endpoint);
    }
    List<String> replacementOptions = new ArrayList<>();
    for (int i = 0; i < options.size(); i++) {
      if (options.get(i).equals("--port")) {
        i++; // and its value
      } else if (!options.get(i).startsWith("--port=")) {
        replacementOptions.add(options.get(i));
      }
    }
    replacementOptions.add("--port");
    replacementOptions.add(port.group(1));
    List<String> all = new ArrayList<>(replacementOptions);
    all.addAll(extraOptions);
    long deadline = System.nanoTime() + timeout.toNanos();
    IllegalStateException last = null;
    for (int attempt = 0; attempt < 3 && System.nanoTime() < deadline; attempt++) {
      try {
        FrontendProcess next = start(databaseHosts, all, Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
        // The replacement's own restart must not inherit the extra options.
        return new FrontendProcess(next.process, next.log, next.id, next.endpoint, databaseHosts, replacementOptions);
      } catch (IllegalStateException e) {
        last = e;
      }
    }
    throw last != null ? last : new IllegalStateException("no time left to restart frontend " + endpoint);
  }

  /** The operating system's process ID. */
  public long pid() {
    return process.pid();
  }

  /**
   * Freezes the process with SIGSTOP: it keeps its sockets and its lease row but does nothing (a "slow, not dead"
   * frontend) until {@link #resume()}.
   */
  public void pause() {
    signal("STOP");
    paused = true;
  }

  /** Lets a {@link #pause() paused} process go on with SIGCONT. */
  public void resume() {
    signal("CONT");
    paused = false;
  }

  /**
   * Waits until a frontend started with {@code --stop-after} has stopped itself (it printed that it is stopping and
   * the operating system shows it stopped); from then on it counts as {@link #pause() paused}.
   *
   * @return whether it stopped within {@code timeout}
   */
  public boolean awaitStoppedItself(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    Path stat = Path.of("/proc", Long.toString(process.pid()), "stat");
    while (System.nanoTime() < deadline && process.isAlive()) {
      try {
        if (output().contains(FaultInjection.LINE + "stopping after") && Files.exists(stat)
            && Files.readString(stat).replaceFirst("^.*\\) ", "").startsWith("T")) {
          paused = true;
          return true;
        }
        Thread.sleep(20);
      } catch (IOException e) {
        return false; // the process ended between the checks
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return false;
  }

  /** Whether the process was paused and not resumed since. */
  public boolean isPaused() {
    return paused;
  }

  private void signal(String name) {
    if (!process.isAlive()) {
      throw new IllegalStateException("frontend " + endpoint + " (pid " + process.pid() + ") is not running");
    }
    Signals.send(process.pid(), name, "frontend " + endpoint, SIGNAL_TIMEOUT);
  }

  public String endpoint() {
    return endpoint;
  }

  public String id() {
    return id;
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** Kills the process with SIGKILL and waits (bounded) for it to die. */
  public void kill() {
    process.destroyForcibly();
    awaitExit(Duration.ofSeconds(30));
    paused = false;
  }

  /**
   * Waits for the process to exit.
   *
   * @return its exit code, or -1 if it is still running after {@code timeout}
   */
  public int awaitExit(Duration timeout) {
    try {
      return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS) ? process.exitValue() : -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  /** What the process printed. */
  public String output() {
    try {
      return Files.readString(log);
    } catch (IOException e) {
      return "(log unreadable: " + e.getMessage() + ")";
    }
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      if (paused) {
        resume(); // a stopped process would not act on SIGTERM until continued
      }
      process.destroy();
      if (awaitExit(Duration.ofSeconds(10)) < 0) {
        kill();
      }
    }
    try {
      Files.deleteIfExists(log);
    } catch (IOException e) {
      System.getLogger(FrontendProcess.class.getName()).log(System.Logger.Level.WARNING,
          "cannot delete frontend log " + log + ": " + e.getMessage());
    }
  }
}
