package org.apiary.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An embedded database with a data directory keeps its data: across a close and an open in the same JVM, and across
 * a SIGKILL of the JVM that ran it, up to the last automatic snapshot. Each run is its own JVM
 * ({@link EmbeddedDurabilityChild}), since the test JVM may already hold an embedded VoltDB.
 */
class EmbeddedDurabilityTest {
  private static final Duration RUN = Duration.ofSeconds(60);

  @Test
  void closeAndReopenInOneJvmKeepsEveryCommittedRow(@TempDir Path dir) throws Exception {
    String out = DurabilityFixture.Child.start("reopen", dir.toString()).finish(RUN);
    assertTrue(out.lines().anyMatch("PRESENT 100"::equals), "every committed counter is there after reopening:\n" + out);
  }

  @Test
  void sigkillLosesAtMostWhatCameAfterTheLastSnapshot(@TempDir Path dir) throws Exception {
    DurabilityFixture.Child crashed = DurabilityFixture.Child.start("crash", dir.toString());
    try {
      crashed.awaitLine("WROTE", RUN);
    } finally {
      crashed.kill();
    }
    String out = DurabilityFixture.Child.start("count", dir.toString()).finish(RUN);
    assertTrue(out.lines().anyMatch("PRESENT 100"::equals),
        "every counter committed before the last automatic snapshot is there:\n" + out);
    long later = out.lines().filter(l -> l.startsWith("LATER ")).mapToLong(l -> Long.parseLong(l.substring(6)))
        .findFirst().orElseThrow(() -> new AssertionError("no LATER line:\n" + out));
    System.getLogger(getClass().getName()).log(System.Logger.Level.INFO,
        "after SIGKILL, " + later + " of the 100 counters written after the snapshot survived");
    assertTrue(later >= 0 && later <= 100);
    assertEquals(137, crashed.process().exitValue(), "the JVM was killed by SIGKILL (128 + 9), not finished");
  }

  /**
   * Issue 14: everything an embedded database listens on is on loopback, with or without a data directory (VoltDB's
   * HTTP server listened on every interface when started on a data directory).
   */
  @Test
  void anEmbeddedDatabaseListensOnLoopbackOnly(@TempDir Path dir) throws Exception {
    for (String where : new String[] {dir.toString(), "-"}) {
      String out = DurabilityFixture.Child.start("listeners", where).finish(RUN);
      java.util.List<String> listening = out.lines().filter(l -> l.startsWith("LISTENING "))
          .map(l -> l.substring(10)).toList();
      assertTrue(listening.size() >= 2, "the database listens on its client and admin ports:\n" + out);
      assertEquals(java.util.List.of(), listening.stream().filter(ListeningSockets::everyInterface).toList(),
          "sockets listening on every interface (" + where + "):\n" + out);
    }
  }

  /** VoltDB defaults its directories to {@code voltdbroot/} under the working directory; Apiary's never are. */
  @Test
  void anEmbeddedDatabaseWritesNothingIntoTheWorkingDirectory(@TempDir Path dir) throws Exception {
    Path data = Files.createDirectory(dir.resolve("data"));
    Path workingDirectory = Files.createDirectory(dir.resolve("work"));
    for (String where : new String[] {"-", data.toString()}) {
      String out = DurabilityFixture.Child.startIn(workingDirectory, "listeners", where).finish(RUN);
      try (var left = Files.list(workingDirectory)) {
        assertEquals(java.util.List.of(), left.map(p -> p.getFileName().toString()).toList(),
            "an embedded start (" + where + ") wrote into its working directory:\n" + out);
      }
    }
  }
}
