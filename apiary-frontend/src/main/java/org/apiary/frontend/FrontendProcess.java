package org.apiary.frontend;

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
 * A frontend running as its own operating-system process ({@code apiary frontend}), on this JVM's classpath, for
 * fault drills and failure tests that must really kill one.
 */
public final class FrontendProcess implements AutoCloseable {
  private static final Pattern LISTENING = Pattern.compile("frontend (\\S+) listening on (tcp://\\S+)");

  private final Process process;
  private final Path log;
  private final String id;
  private final String endpoint;

  private FrontendProcess(Process process, Path log, String id, String endpoint) {
    this.process = process;
    this.log = log;
    this.id = id;
    this.endpoint = endpoint;
  }

  /**
   * Starts a frontend process and waits until it listens.
   *
   * @param databaseHosts the database's client addresses (host:port)
   * @param options further {@code apiary frontend} options, e.g. {@code --lease-ms 2000}
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
      cmd.add("frontend");
      cmd.add("--database");
      cmd.add(String.join(",", databaseHosts));
      cmd.addAll(options);
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
      long deadline = System.nanoTime() + timeout.toNanos();
      while (System.nanoTime() < deadline) {
        Matcher m = LISTENING.matcher(Files.readString(log));
        if (m.find()) {
          return new FrontendProcess(p, log, m.group(1), m.group(2));
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
