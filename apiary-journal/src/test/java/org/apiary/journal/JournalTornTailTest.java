package org.apiary.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a power cut can do to a journal: anything after the last fsync may be missing, cut anywhere, or partly
 * garbage. Whatever it leaves, every record that was durable (and so may have been acknowledged) must come back, and
 * nothing after the cut may be taken for a record. Damage to bytes that were fsynced is not a tear and must stop the
 * read, naming the file and offset.
 */
class JournalTornTailTest {
  @TempDir Path dir;

  /** Writes groups of records, noting after each fsync how long the segment was and which record was durable. */
  private record Written(Path segment, List<long[]> durablePoints, long lastAppended) {}

  private Written write(Path journal, int groups, int perGroup) throws Exception {
    List<long[]> points = new ArrayList<>();
    long last = 0;
    try (JournalDirectory d = JournalDirectory.open(journal)) {
      // Asynchronous with a long interval: each group is written when waited for, all of its records in one write.
      JournalWriter w = JournalWriter.start(d, 9, 1, JournalWriter.Settings.of(JournalMode.ASYNCHRONOUS)
          .withFsyncInterval(java.time.Duration.ofMinutes(5)));
      Path segment = journal.resolve(JournalFormat.segmentName(9, 1));
      for (int g = 0; g < groups; g++) {
        for (int i = 0; i < perGroup; i++) {
          last = JournalWriterTest.append(w, last + 1);
        }
        w.whenDurable(last).get(10, TimeUnit.SECONDS);
        points.add(new long[] {Files.size(segment), last});
      }
      w.close();
      return new Written(segment, points, last);
    }
  }

  @Test
  void anyCutOrGarbageAfterTheLastFsyncKeepsEveryDurableRecord() throws Exception {
    Path original = dir.resolve("original");
    Written w = write(original, 30, 7);
    Random random = new Random(Long.getLong("apiary.test.seed", 20261128L));
    long durableEnd = w.durablePoints().get(w.durablePoints().size() - 2)[0];
    long durableRecords = w.durablePoints().get(w.durablePoints().size() - 2)[1];
    long fileEnd = Files.size(w.segment());
    for (int trial = 0; trial < 200; trial++) {
      Path copy = dir.resolve("trial" + trial);
      Files.createDirectories(copy);
      Path segment = copy.resolve(w.segment().getFileName());
      Files.copy(w.segment(), segment, StandardCopyOption.REPLACE_EXISTING);
      // The last group stands for the one a crash interrupted: cut it anywhere, and maybe scribble on what is left.
      long cut = durableEnd + (long) (random.nextDouble() * (fileEnd - durableEnd));
      try (RandomAccessFile f = new RandomAccessFile(segment.toFile(), "rw")) {
        f.setLength(cut);
        if (random.nextBoolean() && cut > durableEnd) {
          long at = durableEnd + (long) (random.nextDouble() * (cut - durableEnd));
          f.seek(at);
          byte[] junk = new byte[1 + random.nextInt(64)];
          random.nextBytes(junk);
          f.write(junk, 0, (int) Math.min(junk.length, cut - at));
        }
      }
      List<JournalRecord> back = JournalWriterTest.readAll(copy, 9, false);
      assertTrue(back.size() >= durableRecords, "trial " + trial + ": cut at " + cut + " lost durable records: "
          + back.size() + " < " + durableRecords);
      for (int i = 0; i < back.size(); i++) {
        JournalWriterTest.checkRecord(back.get(i), i + 1);
      }
    }
  }

  @Test
  void aPartialLastRecordIsCutAndReported() throws Exception {
    Written w = write(dir, 3, 5);
    long size = Files.size(w.segment());
    try (RandomAccessFile f = new RandomAccessFile(w.segment().toFile(), "rw")) {
      f.setLength(size - 3);
    }
    JournalReader.Timeline t = JournalReader.scan(dir, false).get(9L);
    assertEquals(14, t.lastSequence());
    assertEquals(15, t.lastGroupDeclared(), "the torn group still says how far it reached");
    assertEquals(1, t.notes().size());
    assertTrue(t.notes().get(0).contains("torn tail") && t.notes().get(0).contains("offset"), t.notes().toString());
    assertTrue(t.notes().get(0).contains("declared records through 15, of which 1 were not whole"), t.notes().get(0));
    assertEquals(15, JournalReader.scan(write(dir.resolve("whole"), 3, 5).segment().getParent(), false).get(9L)
        .lastGroupDeclared(), "a whole journal's last group ends at its last record");
  }

  @Test
  void damageToAnFsyncedGroupStopsTheReadNamingFileAndOffsetUnlessLossIsAccepted() throws Exception {
    Written w = write(dir, 5, 4);
    long secondGroupStart = w.durablePoints().get(0)[0];
    try (RandomAccessFile f = new RandomAccessFile(w.segment().toFile(), "rw")) {
      long at = secondGroupStart + 60; // inside the second group's records
      f.seek(at);
      int b = f.read();
      f.seek(at);
      f.write(b ^ 0x5a);
    }
    JournalCorruptException e = assertThrows(JournalCorruptException.class, () -> JournalReader.scan(dir, false));
    assertEquals(w.segment(), e.file());
    assertTrue(e.offset() >= secondGroupStart && e.offset() <= secondGroupStart + 60, "offset " + e.offset());
    assertTrue(e.getMessage().contains(w.segment().toString()) && e.getMessage().contains("offset " + e.offset())
        && e.getMessage().contains("--accept-journal-loss"), e.getMessage());

    JournalReader.Timeline t = JournalReader.scan(dir, true).get(9L);
    assertTrue(t.lastSequence() >= 4 && t.lastSequence() < 8, "kept what precedes the damage: " + t.lastSequence());
    assertFalse(t.notes().isEmpty());
    assertTrue(t.notes().get(0).contains("dropped"), t.notes().toString());
  }

  @Test
  void aMissingSegmentIsDamageNotATear() throws Exception {
    try (JournalDirectory d = JournalDirectory.open(dir)) {
      JournalWriter w = JournalWriter.start(d, 5, 1, JournalWriter.Settings.of(JournalMode.SYNCHRONOUS)
          .withSegmentBytes(512));
      long last = 0;
      for (int i = 0; i < 60; i++) {
        last = JournalWriterTest.append(w, i + 1);
        w.whenDurable(last).get(10, TimeUnit.SECONDS);
      }
      w.close();
    }
    Files.delete(dir.resolve(JournalFormat.segmentName(5, 2)));
    JournalCorruptException e = assertThrows(JournalCorruptException.class, () -> JournalReader.scan(dir, false));
    assertTrue(e.getMessage().contains("segment 2") && e.getMessage().contains("missing"), e.getMessage());
  }
}
