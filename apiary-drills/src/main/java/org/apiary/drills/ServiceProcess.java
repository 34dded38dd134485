package org.apiary.drills;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.DatabaseConfig;
import org.apiary.database.DatabaseUsers;
import org.apiary.database.LocalCluster;

/**
 * {@code apiary start} as its own operating-system process, on this JVM's classpath, for drills that kill the
 * database itself: the embedded VoltDB and the frontend die together, as in a crash of the service's machine.
 */
final class ServiceProcess {
  static final String READY = "apiary: ready:";

  private final Process process;
  private final Path log;

  private ServiceProcess(Process process, Path log) {
    this.process = process;
    this.log = log;
  }

  /** Launches {@code apiary start --data DIR} with {@code options}; returns at once (see {@link #awaitReady}). */
  static ServiceProcess launch(Path dir, List<String> options) throws IOException {
    return launch(dir, options, List.of());
  }

  /** The same, with further flags for its JVM (after a maximum heap of 1 GiB). */
  static ServiceProcess launch(Path dir, List<String> options, List<String> jvmFlags) throws IOException {
    Path log = Files.createTempFile("apiary-service-", ".log");
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(LocalCluster.VOLTDB_JVM_FLAGS);
    cmd.add("-Xmx1g");
    cmd.addAll(jvmFlags);
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), "org.apiary.cli.Main", "start",
        "--data", dir.toString()));
    cmd.addAll(options);
    return new ServiceProcess(new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start(),
        log);
  }

  /** Waits until the service printed its ready line; fails with its output if it exits or takes too long. */
  void awaitReady(Duration timeout) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!output().contains(READY)) {
      if (!process.isAlive()) {
        throw new IllegalStateException("apiary start exited with " + process.exitValue() + " before it was ready:\n"
            + output());
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("apiary start was not ready within " + timeout + ":\n" + output());
      }
      Thread.sleep(50);
    }
  }

  /** SIGKILL, and waits for the process to be gone. */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      throw new IllegalStateException("apiary start did not die within 30 s of SIGKILL");
    }
  }

  /** SIGTERM (a clean stop), waiting at most {@code timeout}, then SIGKILL. */
  void stop(Duration timeout) throws InterruptedException {
    process.destroy();
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      kill();
    }
  }

  /** The operating system's process ID. */
  long pid() {
    return process.pid();
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /**
   * A connection to the service's database as its administrator (the login {@code apiary start} wrote into
   * {@code dir}), once the service is ready.
   */
  ApiaryDatabase admin(Path dir) throws IOException {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("database (127\\.0\\.0\\.1:\\d+)")
        .matcher(output());
    if (!m.find()) {
      throw new IllegalStateException("apiary start did not say where its database listens:\n" + output());
    }
    DatabaseUsers users = DatabaseUsers.readFrom(dir.resolve("database-users.properties"));
    return ApiaryDatabase.open(DatabaseConfig.external(m.group(1)).withLogin(DatabaseUsers.adminOf(users)));
  }

  String output() throws IOException {
    return Files.readString(log);
  }

  void deleteLog() throws IOException {
    Files.deleteIfExists(log);
  }
}
