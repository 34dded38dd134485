package org.apiary.database;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apiary.compiler.Deployer;
import org.apiary.compiler.FunctionCompiler;
import org.apiary.compiler.FunctionDefinition;
import org.apiary.runtime.FunctionCatalog;
import org.apiary.runtime.FunctionInvoker;
import org.apiary.runtime.SystemSchema;
import org.apiary.testapp.Increment;
import org.apiary.testapp.TestApp;
import org.voltdb.VoltTable;

/**
 * What the durability tests share: the test application's schema and one function, rows written through it (each
 * one committed transaction), and reading them back; a child JVM for the embedded database.
 */
final class DurabilityFixture {
  private DurabilityFixture() {}

  /** Loads the test schema and deploys {@code increment}; on a restored database only checks the system schema. */
  static FunctionInvoker deploy(ApiaryDatabase db) {
    if (!SystemSchema.tables(db).contains("COUNTERS")) {
      db.loadSchema(TestApp.SCHEMA);
      Deployer.deploy(db, FunctionCompiler.compile(TestApp.SCHEMA,
          List.of(FunctionDefinition.of("increment", Increment.class))));
    }
    SystemSchema.ensure(db);
    return new FunctionInvoker(db, FunctionCatalog.load(db));
  }

  /** Sets counter k to k for every k in [from, to), one committed transaction each. */
  static void write(FunctionInvoker invoker, long from, long to) {
    for (long k = from; k < to; k++) {
      long v = invoker.call("increment", k, k).value(Long.class);
      if (v != k) {
        throw new AssertionError("counter " + k + " was not new: " + v);
      }
    }
  }

  /** How many of the counters in [from, to) hold their own key, as {@link #write} left them. */
  static long present(ApiaryDatabase db, long from, long to) {
    return scalar(db, "SELECT COUNT(*) FROM counters WHERE k >= " + from + " AND k < " + to + " AND v = k");
  }

  static long scalar(ApiaryDatabase db, String sql) {
    VoltTable t = db.callAdmin("reading", "@AdHoc", sql).getResults()[0];
    t.advanceRow();
    return t.getLong(0);
  }

  /**
   * Waits until an automatic snapshot that started after {@code afterMillis} (server clock, this machine) is
   * reported complete and successful for the {@code COUNTERS} table by {@code @Statistics SNAPSHOTSTATUS}.
   */
  static void awaitAutomaticSnapshot(ApiaryDatabase db, long afterMillis, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      VoltTable t = db.callAdmin("snapshot status", "@Statistics", "SNAPSHOTSTATUS", 0).getResults()[0];
      while (t.advanceRow()) {
        if ("AUTO".equals(t.getString("TYPE")) && "COUNTERS".equalsIgnoreCase(t.getString("TABLE"))
            && t.getLong("START_TIME") > afterMillis && t.getLong("END_TIME") > 0
            && "SUCCESS".equals(t.getString("RESULT"))) {
          return;
        }
      }
      Thread.sleep(200);
    }
    throw new AssertionError("no automatic snapshot completed within " + timeout);
  }

  /** A JVM running {@link EmbeddedDurabilityChild} with this test's classpath, its output going to a file. */
  record Child(Process process, Path log) {
    static Child start(String... args) throws IOException {
      return startIn(null, args);
    }

    /** As {@link #start}, in working directory {@code workingDirectory} ({@code null}: this JVM's). */
    static Child startIn(Path workingDirectory, String... args) throws IOException {
      return startMain(EmbeddedDurabilityChild.class, workingDirectory, args);
    }

    /** A JVM running {@code main} with {@code args} in {@code workingDirectory} ({@code null}: this JVM's). */
    static Child startMain(Class<?> main, Path workingDirectory, String... args) throws IOException {
      Path log = Files.createTempFile("apiary-durability-child-", ".log");
      List<String> cmd = new ArrayList<>();
      cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      cmd.addAll(LocalCluster.VOLTDB_JVM_FLAGS);
      cmd.addAll(List.of("-Xmx1g", "-cp", System.getProperty("java.class.path"), main.getName()));
      cmd.addAll(List.of(args));
      ProcessBuilder builder = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
      if (workingDirectory != null) {
        builder.directory(workingDirectory.toFile());
      }
      return new Child(builder.start(), log);
    }

    /** Waits for the child to exit; fails the test with its output if it does not in time or exits non-zero. */
    String finish(Duration timeout) throws IOException, InterruptedException {
      try {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
          throw new AssertionError("the child JVM did not finish within " + timeout + ":\n" + output());
        }
        if (process.exitValue() != 0) {
          throw new AssertionError("the child JVM exited with " + process.exitValue() + ":\n" + output());
        }
        return output();
      } finally {
        process.destroyForcibly();
      }
    }

    /** Waits until the child prints a line equal to {@code line}. */
    void awaitLine(String line, Duration timeout) throws IOException, InterruptedException {
      long deadline = System.nanoTime() + timeout.toNanos();
      while (!output().lines().anyMatch(line::equals)) {
        if (!process.isAlive()) {
          throw new AssertionError("the child JVM exited before printing " + line + ":\n" + output());
        }
        if (System.nanoTime() > deadline) {
          throw new AssertionError("the child JVM did not print " + line + " within " + timeout + ":\n" + output());
        }
        Thread.sleep(100);
      }
    }

    /** Kills the child with SIGKILL and waits for it to die. */
    void kill() throws InterruptedException {
      process.destroyForcibly();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        throw new AssertionError("the child JVM did not die within 30 s of SIGKILL");
      }
    }

    String output() throws IOException {
      return Files.readString(log);
    }
  }
}
