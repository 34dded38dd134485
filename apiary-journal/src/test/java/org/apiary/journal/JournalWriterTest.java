package org.apiary.journal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JournalWriterTest {
  @TempDir Path dir;

  static byte[] params(long i) {
    return ("parameters of " + i).getBytes(StandardCharsets.UTF_8);
  }

  static long append(JournalWriter w, long i) {
    return w.append((int) (i % 3), 1000 + i, 5000 + i, (int) (i % 5), i * 7, "proc" + (i % 2), i % 4 == 0 ? null : "inv-" + i,
        params(i));
  }

  static void checkRecord(JournalRecord r, long i) {
    assertEquals(i, r.sequence());
    assertEquals((int) (i % 3), r.partition());
    assertEquals(1000 + i, r.txnId());
    assertEquals(5000 + i, r.uniqueId());
    assertEquals((int) (i % 5), r.catalogVersion());
    assertEquals(i * 7, r.resultHash());
    assertEquals("proc" + (i % 2), r.procedure());
    assertEquals(i % 4 == 0 ? null : "inv-" + i, r.invocationId());
    assertArrayEquals(params(i), r.parameters());
  }

  static List<JournalRecord> readAll(Path dir, long timeline, boolean acceptLoss) {
    Map<Long, JournalReader.Timeline> t = JournalReader.scan(dir, acceptLoss);
    List<JournalRecord> out = new ArrayList<>();
    if (t.containsKey(timeline)) {
      JournalReader.forEach(t.get(timeline), out::add);
    }
    return out;
  }

  /**
   * A rejoining cluster node continues its timeline: the torn tail a crash left is cut, the next records follow the
   * last whole one without a gap, and the old segments are the writer's to delete once a checkpoint covers them.
   */
  @Test
  void aTimelineIsContinuedAfterItsTornTail() throws Exception {
    JournalWriter.Settings settings = JournalWriter.Settings.of(JournalMode.SYNCHRONOUS).withSegmentBytes(4096);
    try (JournalDirectory d = JournalDirectory.open(dir)) {
      JournalWriter w = JournalWriter.start(d, 42, 1, settings);
      for (long i = 1; i <= 100; i++) {
        append(w, i);
      }
      w.close();
    }
    JournalDirectory.SegmentName last = JournalDirectory.list(dir).get(JournalDirectory.list(dir).size() - 1);
    Files.write(last.file(), new byte[] {1, 2, 3, 4, 5, 6, 7}, java.nio.file.StandardOpenOption.APPEND); // torn
    try (JournalDirectory d = JournalDirectory.open(dir)) {
      JournalReader.Timeline t = JournalReader.scan(dir, false).get(42L);
      assertEquals(100, t.lastSequence());
      JournalWriter w = JournalWriter.continueTimeline(d, t, settings);
      for (long i = 101; i <= 150; i++) {
        assertEquals(i, append(w, i));
      }
      w.flush(Duration.ofSeconds(10));
      w.deleteSegmentsBefore(101);
      assertTrue(JournalDirectory.list(dir).size() <= 2 + 50 * 40 / 4096 + 1, "covered old segments deleted");
      w.close();
    }
    JournalReader.Timeline t = JournalReader.scan(dir, false).get(42L);
    assertEquals(List.of(), t.notes(), "one whole timeline");
    assertEquals(150, t.lastSequence());
    List<JournalRecord> all = readAll(dir, 42, false);
    checkRecord(all.get(all.size() - 1), 150);
    assertEquals(150 - all.get(0).sequence() + 1, all.size());
  }

  @Test
  void recordsComeBackInOrderAcrossSegmentsWithEveryField() throws Exception {
    try (JournalDirectory d = JournalDirectory.open(dir)) {
      JournalWriter w = JournalWriter.start(d, 42, 1, JournalWriter.Settings.of(JournalMode.SYNCHRONOUS)
          .withSegmentBytes(4096));
      for (long i = 1; i <= 500; i++) {
        assertEquals(i, append(w, i));
        if (i % 50 == 0) {
          w.whenDurable(i).get(10, TimeUnit.SECONDS);
          assertTrue(w.durableSequence() >= i);
        }
      }
      w.close();
      assertTrue(w.status().segments() > 3, "small segments roll: " + w.status());
    }
    List<JournalRecord> all = readAll(dir, 42, false);
    assertEquals(500, all.size());
    for (int i = 0; i < all.size(); i++) {
      checkRecord(all.get(i), i + 1);
    }
    JournalReader.Timeline t = JournalReader.scan(dir, false).get(42L);
    assertEquals(List.of(), t.notes());
    assertEquals(1, t.firstSequence());
    assertEquals(500, t.lastSequence());
  }

  @Test
  void filesAndDirectoryAreOwnerOnly() throws Exception {
    Path journal = dir.resolve("journal");
    try (JournalDirectory d = JournalDirectory.open(journal)) {
      JournalWriter w = JournalWriter.start(d, 1, 1, JournalWriter.Settings.of(JournalMode.SYNCHRONOUS));
      append(w, 1);
      w.close();
    }
    assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(journal)));
    try (var files = Files.list(journal)) {
      for (Path f : files.toList()) {
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(f)), f.toString());
      }
    }
  }

  @Test
  void asynchronousModeMakesRecordsDurableWithinItsIntervalWithoutBeingAsked() throws Exception {
    try (JournalDirectory d = JournalDirectory.open(dir)) {
      JournalWriter w = JournalWriter.start(d, 7, 1, JournalWriter.Settings.of(JournalMode.ASYNCHRONOUS)
          .withFsyncInterval(Duration.ofMillis(50)));
      for (long i = 1; i <= 20; i++) {
        append(w, i);
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (w.durableSequence() < 20 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertEquals(20, w.durableSequence());
      w.close();
    }
    assertEquals(20, readAll(dir, 7, false).size());
  }

  @Test
  void aSecondServerOnTheSameDirectoryIsRefused() {
    try (JournalDirectory d = JournalDirectory.open(dir)) {
      JournalException e = assertThrows(JournalException.class, () -> JournalDirectory.open(dir));
      assertTrue(e.getMessage().contains("in use by another server"), e.getMessage());
      assertTrue(e.getMessage().contains("process " + ProcessHandle.current().pid()), e.getMessage());
    }
    JournalDirectory.open(dir).close(); // released: a later server may take it
  }

  @Test
  void aClosedWriterRefusesAppendsAndAWaiterForTheLastRecordCompletes() throws Exception {
    try (JournalDirectory d = JournalDirectory.open(dir)) {
      JournalWriter w = JournalWriter.start(d, 3, 10, JournalWriter.Settings.of(JournalMode.ASYNCHRONOUS)
          .withFsyncInterval(Duration.ofSeconds(30)));
      long s = append(w, 10);
      CompletableFuture<Void> durable = w.whenDurable(s);
      durable.get(10, TimeUnit.SECONDS); // a waiter does not wait out the interval
      w.close();
      JournalUnavailableException e = assertThrows(JournalUnavailableException.class, () -> append(w, 11));
      assertTrue(e.getMessage().contains("closing"), e.getMessage());
      assertNull(w.failure());
    }
  }
}
