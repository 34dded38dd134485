package org.apiary.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Acknowledged means durable: an embedded database journaled synchronously is SIGKILLed under load, at a random
 * moment, several times, and restarted each time; every call its client saw acknowledged must be there afterwards,
 * applied exactly once. The oracle is the client's own record of acknowledgements (lines it printed before it died),
 * checked against the counters read back in a fresh JVM; it shares no code with the journal.
 */
class JournalCrashTest {
  private static final Duration RUN = Duration.ofSeconds(120);
  /** The journal mode under test; {@code none} (today's default) shows the loss this test exists to catch. */
  private static final String MODE = System.getProperty("apiary.test.journal.mode", "synchronous");

  @Test
  void everyAcknowledgedWriteSurvivesRepeatedSigkillsOfASynchronouslyJournaledServer(@TempDir Path dir)
      throws Exception {
    int kills = Integer.getInteger("apiary.test.journal.kills", 2);
    Random random = new Random(Long.getLong("apiary.test.seed", System.nanoTime()));
    Set<Long> acknowledged = new TreeSet<>();
    for (int round = 0; round < kills; round++) {
      DurabilityFixture.Child load = start("load", dir.toString(), MODE, String.valueOf(1 + round * 1_000_000L));
      try {
        load.awaitLine("LOADING", RUN);
        Thread.sleep(random.nextInt(1500));
      } finally {
        load.kill();
      }
      acknowledged.addAll(acknowledged(load));
    }
    DurabilityFixture.Child count = start("count", dir.toString(), MODE);
    String out = count.finish(RUN);
    Map<Long, Long> counters = new HashMap<>();
    out.lines().filter(l -> l.startsWith("COUNTER ")).forEach(l -> {
      String[] p = l.split(" ");
      counters.put(Long.parseLong(p[1]), Long.parseLong(p[2]));
    });
    List<Long> lost = new ArrayList<>();
    List<String> wrong = new ArrayList<>();
    for (long k : acknowledged) {
      Long v = counters.get(k);
      if (v == null) {
        lost.add(k);
      }
    }
    counters.forEach((k, v) -> {
      if (v != (long) k) {
        wrong.add(k + "=" + v);
      }
    });
    System.getLogger(getClass().getName()).log(System.Logger.Level.INFO, "journal crash test: kills=" + kills
        + " acknowledged=" + acknowledged.size() + " present=" + counters.size() + " lost=" + lost.size()
        + " duplicated=" + wrong.size());
    assertTrue(acknowledged.size() >= 200L * kills, "the load ran: " + acknowledged.size());
    assertEquals(List.of(), lost.subList(0, Math.min(20, lost.size())), lost.size() + " acknowledged writes lost");
    assertEquals(List.of(), wrong, "counters applied other than exactly once");
  }

  /**
   * A deployment from another process changes the catalog where the journal cannot see it: the server checkpoints at
   * once and holds replies until it has, so a crash right after loses nothing acknowledged and recovery does not
   * meet records its restored catalog cannot run.
   */
  @Test
  void aDeploymentFromAnotherProcessIsCheckpointedBeforeRepliesThatDependOnItLeave(@TempDir Path dir)
      throws Exception {
    DurabilityFixture.Child load = start("load", dir.toString(), "synchronous", "1", "external-deploy");
    try {
      load.awaitLine("LOADING", RUN);
    } finally {
      load.kill();
    }
    Set<Long> acknowledged = acknowledged(load);
    String out = start("count", dir.toString(), "synchronous").finish(RUN);
    long present = acknowledged.stream().filter(k -> out.contains("COUNTER " + k + " " + k + "\n")).count();
    assertEquals(acknowledged.size(), present, "acknowledged increments present after the crash:\n" + out);
  }

  @Test
  void aSecondServerOnTheSameJournalIsRefusedBeforeItStarts(@TempDir Path dir) throws Exception {
    DurabilityFixture.Child first = start("load", dir.toString(), "synchronous", "1");
    try {
      first.awaitLine("LOADING", RUN);
      DurabilityFixture.Child second = start("count", dir.toString(), "synchronous");
      AssertionError refused = org.junit.jupiter.api.Assertions.assertThrows(AssertionError.class,
          () -> second.finish(RUN));
      assertTrue(refused.getMessage().contains("is in use by another server (process "
          + first.process().pid() + ")"), refused.getMessage());
      assertTrue(first.process().isAlive(), "the first server is untouched");
    } finally {
      first.kill();
    }
  }

  /**
   * Damage to a journal record that was fsynced (not a torn tail) stops the start, naming the file and offset; with
   * loss accepted the start goes on from what precedes it and says what it dropped.
   */
  @Test
  void damageBeforeTheTailStopsTheStartUnlessLossIsAccepted(@TempDir Path dir) throws Exception {
    DurabilityFixture.Child load = start("load", dir.toString(), "synchronous", "1");
    try {
      load.awaitLine("LOADING", RUN);
    } finally {
      load.kill();
    }
    Path segment;
    try (var files = Files.list(DatabaseJournal.directoryOf(dir))) {
      segment = files.filter(f -> f.getFileName().toString().endsWith(".log")).sorted().reduce((a, b) -> b)
          .orElseThrow();
    }
    long at = Files.size(segment) / 3;
    try (var f = new java.io.RandomAccessFile(segment.toFile(), "rw")) {
      f.seek(at);
      int b = f.read();
      f.seek(at);
      f.write(b ^ 0xff);
    }
    AssertionError refused = org.junit.jupiter.api.Assertions.assertThrows(AssertionError.class,
        () -> start("count", dir.toString(), "synchronous").finish(RUN));
    assertTrue(refused.getMessage().contains(segment + " is damaged at offset")
        && refused.getMessage().contains("--accept-journal-loss"), refused.getMessage());
    String out = start("count", dir.toString(), "synchronous", "accept-loss").finish(RUN);
    assertTrue(out.contains("DONE"), out);
    assertTrue(out.contains("dropped it and everything after it"), "the start says what it dropped:\n" + out);
  }

  private static Set<Long> acknowledged(DurabilityFixture.Child child) throws IOException {
    Set<Long> acks = new TreeSet<>();
    child.output().lines().filter(l -> l.startsWith("ACK ")).forEach(l -> acks.add(Long.parseLong(l.substring(4))));
    return acks;
  }

  private static DurabilityFixture.Child start(String... args) throws IOException {
    return DurabilityFixture.Child.startMain(JournalCrashChild.class, null, args);
  }
}
