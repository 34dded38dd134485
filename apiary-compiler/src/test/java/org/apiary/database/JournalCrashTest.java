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
    int kills = Integer.getInteger("apiary.test.journal.kills", 3);
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

  private static Set<Long> acknowledged(DurabilityFixture.Child child) throws IOException {
    Set<Long> acks = new TreeSet<>();
    child.output().lines().filter(l -> l.startsWith("ACK ")).forEach(l -> acks.add(Long.parseLong(l.substring(4))));
    return acks;
  }

  private static DurabilityFixture.Child start(String... args) throws IOException {
    return DurabilityFixture.Child.startMain(JournalCrashChild.class, null, args);
  }
}
