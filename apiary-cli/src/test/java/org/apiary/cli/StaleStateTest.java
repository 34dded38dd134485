package org.apiary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apiary.cli.CliProcesses.Result;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 45, finding 8: a service that ended without a clean stop (SIGKILL, a crash, VoltDB exiting on a full disk)
 * leaves {@code apiary.json} behind. Whatever that file says, {@code status} must answer "not running" naming it (the
 * pid it names may belong to another process by now), and the next {@code start} must replace it, saying so.
 */
class StaleStateTest {
  private static final Duration COMMAND = Duration.ofSeconds(60);
  private static final Duration START = Duration.ofSeconds(90);

  @TempDir
  Path work;

  @RegisterExtension
  final CliProcesses cli = new CliProcesses();

  /**
   * The stale file names a live process that is not Apiary (this test's JVM: the pid was reused) and no service holds
   * the directory's lock.
   */
  @Test
  void statusAndStopCallAStaleStateFileNotRunningEvenIfItsPidIsAliveAgain() throws Exception {
    Path data = work.resolve("data");
    long reused = ProcessHandle.current().pid();
    writeStaleService(data, reused);

    Result status = cli.run(COMMAND, "status", "--data", data.toString());
    assertEquals(1, status.exit(), status.toString());
    assertTrue(status.err().contains("not running") && status.err().contains("stale " + ServiceDirectory.STATE
        + " from pid " + reused), status.toString());
    assertFalse(status.out().contains("running, pid"), "status reported a service that is not there: " + status);

    Result stop = cli.run(COMMAND, "stop", "--data", data.toString());
    assertEquals(1, stop.exit(), stop.toString());
    assertTrue(stop.err().contains("stale " + ServiceDirectory.STATE + " from pid " + reused), stop.toString());
    assertTrue(ProcessHandle.current().isAlive(), "stop signalled the process the stale file names");

    Result invoke = cli.run(COMMAND, "invoke", "g", "--data", data.toString());
    assertEquals(1, invoke.exit(), invoke.toString());
    assertTrue(invoke.err().contains("not running") && invoke.err().contains("stale"), invoke.toString());
  }

  /**
   * A service is starting (it holds the lock and has written its pid there) but the previous run's state file is
   * still there: status must not report the old addresses as the running service's.
   */
  @Test
  void aStartingServiceIsNotDescribedByThePreviousRunsStateFile() throws Exception {
    Path data = work.resolve("data");
    long stalePid = 999_999_999L;
    writeStaleService(data, stalePid);
    try (FileChannel channel = FileChannel.open(data.resolve(ServiceDirectory.LOCK), StandardOpenOption.WRITE);
         FileLock held = channel.lock()) {
      channel.truncate(0);
      channel.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
      Result status = cli.run(COMMAND, "status", "--data", data.toString());
      assertEquals(1, status.exit(), status.toString());
      assertFalse(status.out().contains("running, pid " + stalePid), "status described the previous run as the "
          + "running service: " + status);
      assertTrue(status.err().contains("starting") && status.err().contains("pid " + ProcessHandle.current().pid())
          && status.err().contains("stale " + ServiceDirectory.STATE + " from pid " + stalePid), status.toString());
      assertTrue(held.isValid());
    }
  }

  /** A service killed with SIGKILL: status says so, and the next start replaces the state file and says it did. */
  @Test
  void theStartAfterASigkillReplacesTheStaleStateFileAndSaysSo() throws Exception {
    Path data = work.resolve("data");
    Path log = work.resolve("first.log");
    Process first = cli.start(log, "-Xmx768m", "start", "--data", data.toString(), "--no-provenance");
    CliProcesses.await(first, log, "apiary: ready: frontend ", START);
    first.destroyForcibly();
    assertTrue(first.waitFor(30, TimeUnit.SECONDS));
    assertTrue(Files.exists(data.resolve(ServiceDirectory.STATE)), "SIGKILL leaves the state file");

    Result status = cli.run(COMMAND, "status", "--data", data.toString());
    assertEquals(1, status.exit(), status.toString());
    assertTrue(status.err().contains("not running") && status.err().contains("stale " + ServiceDirectory.STATE
        + " from pid " + first.pid()), status.toString());

    Path againLog = work.resolve("again.log");
    Process again = cli.start(againLog, "-Xmx768m", "start", "--data", data.toString());
    String ready = CliProcesses.await(again, againLog, "apiary: ready: frontend ", START);
    String output = Files.readString(againLog);
    assertTrue(output.contains("replaced the stale " + ServiceDirectory.STATE + " of pid " + first.pid()), output);
    assertTrue(ready.contains("(pid " + again.pid() + ")"), ready);
    Result running = cli.run(COMMAND, "status", "--data", data.toString());
    assertEquals(0, running.exit(), running.toString());
    assertTrue(running.out().contains("running, pid " + again.pid()), running.toString());
    Result stopped = cli.run(COMMAND, "stop", "--data", data.toString());
    assertEquals(0, stopped.exit(), stopped.toString());
    assertFalse(Files.exists(data.resolve(ServiceDirectory.STATE)), "a clean stop removes the state file");
  }

  /** What a service that was killed leaves: its state file and an unheld lock file naming its pid. */
  private static void writeStaleService(Path data, long pid) throws IOException {
    Files.createDirectories(data);
    Files.writeString(data.resolve(ServiceDirectory.LOCK), pid + "\n");
    Files.writeString(data.resolve(ServiceDirectory.STATE), """
        {"pid": %d, "dataDirectory": "%s", "database": "127.0.0.1:1", "frontend": "tcp://127.0.0.1:1",
         "frontendPort": 1, "partitions": 2, "provenance": null, "startedAt": "2026-01-01T00:00:00Z"}
        """.formatted(pid, data.toAbsolutePath()));
  }
}
