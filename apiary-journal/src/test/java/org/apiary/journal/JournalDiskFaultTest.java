package org.apiary.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The journal on a real small file system (a tmpfs this test mounts, so it needs root, as CI has): a full disk, and a
 * directory that cannot be written.
 */
class JournalDiskFaultTest {
  @TempDir Path dir;
  private Path mounted;

  private static int run(String... command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return -1;
    }
    return p.exitValue();
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

  @Test
  void aFullDiskRefusesNewRecordsSaysWhyKeepsEveryAppendedOneAndResumesWhenSpaceReturns() throws Exception {
    Path fs = mountTmpfs("size=256k");
    Path journal = fs.resolve("journal");
    byte[] big = new byte[2000];
    long appended = 0;
    JournalUnavailableException refused = null;
    try (JournalDirectory d = JournalDirectory.open(journal)) {
      // Pending bytes bounded well below the size the disk gets back: a retry that fits for a moment (the failed
      // write's pages freed by the truncation) lets appends resume until the disk is full again, and with the
      // default bound they piled up more than the remounted 4 MB could take, so nothing was ever durable again.
      JournalWriter.Settings s = JournalWriter.Settings.of(JournalMode.SYNCHRONOUS);
      JournalWriter w = JournalWriter.start(d, 1, 1, new JournalWriter.Settings(s.mode(), s.fsyncInterval(),
          s.segmentBytes(), 256 * 1024, Duration.ofMillis(50)));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (refused == null && System.nanoTime() < deadline) {
        try {
          appended = w.append(0, appended + 1, appended + 1, 0, 0, "p", null, big);
        } catch (JournalUnavailableException e) {
          if (e.getMessage().contains("cannot write")) {
            refused = e;
          } else {
            Thread.sleep(5); // back-pressure (too many bytes wait for the disk): the writer catches up
          }
        }
      }
      assertNotNull(refused, "appends go on being accepted on a full disk");
      assertTrue(refused.getMessage().contains("cannot write") && refused.getMessage().contains(journal.toString()),
          refused.getMessage());
      assertTrue(w.durableSequence() < appended, "what did not fit is not called durable");
      assertEquals(0, run("mount", "-o", "remount,size=4m", fs.toString()));
      w.whenDurable(appended).get(30, TimeUnit.SECONDS);
      assertNull(w.failure());
      long after = w.append(0, appended + 1, appended + 1, 0, 0, "p", null, big);
      assertEquals(appended + 1, after, "appends resume");
      w.whenDurable(after).get(30, TimeUnit.SECONDS);
      w.close();
      appended = after;
    }
    List<JournalRecord> back = JournalWriterTest.readAll(journal, 1, false);
    assertEquals(appended, back.size(), "every appended record is on disk once space returned");
  }

  @Test
  void aReadOnlyJournalDirectoryStopsTheStartNamingIt() throws Exception {
    Path fs = mountTmpfs("size=64k,ro");
    JournalException e = assertThrows(JournalException.class, () -> JournalDirectory.open(fs.resolve("journal")));
    assertTrue(e.getMessage().contains(fs.resolve("journal").toString()), e.getMessage());
    JournalException existing = assertThrows(JournalException.class, () -> JournalDirectory.open(fs));
    assertTrue(existing.getMessage().contains(fs.toString()), existing.getMessage());
  }
}
