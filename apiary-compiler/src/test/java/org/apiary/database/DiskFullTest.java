package org.apiary.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 45, finding 8: a full data volume must not end the service. An embedded, journaled database capturing
 * provenance into DuckDB keeps everything on a small file system (a tmpfs this test mounts, so it needs root, as CI
 * has; elsewhere it is skipped, saying why) and is written to until it refuses: it must refuse writes with a reason
 * naming the disk space before VoltDB meets a full disk (VoltDB exits when it cannot write its export overflow), keep
 * every acknowledged write and serve reads, resume once the volume has room again, and stop cleanly. The database
 * runs in a child JVM, since VoltDB's exit takes its process with it. Before the disk reserve, VoltDB exited here with
 * "Unable to write to export overflow" (No space left on device) after the journal and DuckDB had met the full disk.
 */
class DiskFullTest {
  private static final Duration RUN = Duration.ofSeconds(240);

  @TempDir Path dir;
  private Path mounted;

  @Test
  void aFillingVolumeRefusesWritesWithTheReasonKeepsServingAndResumesWhenSpaceReturns() throws Exception {
    Path fs = mountTmpfs("size=160m");
    Path resume = dir.resolve("resume");
    DurabilityFixture.Child child = DurabilityFixture.Child.startMain(DiskFullChild.class, null, fs.toString(),
        resume.toString(), "-1", System.getProperty("apiary.test.diskfull.journal", "synchronous"));
    try {
      child.awaitLine("SURVIVED", RUN);
      String out = child.output();
      String refused = out.lines().filter(l -> l.startsWith("REFUSED ")).findFirst().orElseThrow();
      assertTrue(refused.contains("writes are refused") && refused.contains("disk space")
          && refused.contains(fs.toString()) && refused.contains("reserve"), refused);
      long acknowledged = out.lines().filter(l -> l.startsWith("ACK ")).count();
      assertTrue(acknowledged > 100, "the volume filled after " + acknowledged + " writes");
      assertEquals("READ " + acknowledged, out.lines().filter(l -> l.startsWith("READ ")).findFirst().orElseThrow(),
          "every acknowledged write is there, and no refused one");
      assertTrue(Files.getFileStore(fs).getUsableSpace() > 0, "the volume filled up");
      assertFalse(out.contains("No space left on device"), "something met the full disk:\n" + out);
      assertEquals(0, run("mount", "-o", "remount,size=512m", fs.toString()));
      Files.createFile(resume);
      String finished = child.finish(RUN);
      assertTrue(finished.lines().anyMatch(l -> l.startsWith("RESUMED ")), finished);
      assertTrue(finished.lines().anyMatch("CLOSED"::equals), finished);
    } finally {
      child.process().destroyForcibly();
    }
  }

  private Path mountTmpfs(String options) throws Exception {
    Path m = dir.resolve("fs");
    Files.createDirectories(m);
    assumeTrue(run("mount", "-t", "tmpfs", "-o", options, "tmpfs", m.toString()) == 0,
        "mounting a tmpfs needs root");
    mounted = m;
    return m;
  }

  @AfterEach
  void unmount() throws Exception {
    if (mounted != null) {
      run("umount", "-l", mounted.toString());
    }
  }

  private static int run(String... command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return -1;
    }
    return p.exitValue();
  }
}
