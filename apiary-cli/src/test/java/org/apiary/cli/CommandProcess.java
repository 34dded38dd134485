package org.apiary.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apiary.database.LocalCluster;

/**
 * Runs an {@code apiary} command in its own JVM, as a user would, with this test's classpath. Commands that start an
 * embedded VoltDB need their own process: VoltDB runs at most once per JVM and the test JVM may hold one already.
 */
public record CommandProcess(int exitCode, String output) {
  public static CommandProcess run(Duration timeout, String... args) throws IOException, InterruptedException {
    Path log = Files.createTempFile("apiary-command-", ".log");
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(LocalCluster.VOLTDB_JVM_FLAGS);
    cmd.addAll(List.of("-Xmx1g", "-cp", System.getProperty("java.class.path"), "org.apiary.cli.Main"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    try {
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new AssertionError("apiary " + String.join(" ", args) + " did not finish within " + timeout + ":\n"
            + Files.readString(log));
      }
      return new CommandProcess(p.exitValue(), Files.readString(log));
    } finally {
      p.destroyForcibly();
      Files.deleteIfExists(log);
    }
  }
}
