package org.apiary.drills;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
    Path log = Files.createTempFile("apiary-service-", ".log");
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(LocalCluster.VOLTDB_JVM_FLAGS);
    cmd.addAll(List.of("-Xmx1g", "-cp", System.getProperty("java.class.path"), "org.apiary.cli.Main", "start",
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

  String output() throws IOException {
    return Files.readString(log);
  }

  void deleteLog() throws IOException {
    Files.deleteIfExists(log);
  }
}
