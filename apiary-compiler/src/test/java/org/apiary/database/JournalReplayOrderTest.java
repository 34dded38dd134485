package org.apiary.database;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.apiary.testapp.Scramble;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Recovery replays each partition's journal records in their order and multi-partition records in their place. A
 * child JVM runs an order-sensitive workload on six partitions (every call's result depends on the calls before it on
 * its counter, and a multi-partition call after each round changes every counter) and is SIGKILLed with all of it in
 * the journal; a fresh JVM recovers, and the counters must equal an oracle this test computes by plain arithmetic,
 * sharing no code with the journal or the database. A replay that reordered one partition's records, or ran a
 * multi-partition record before or after its place, ends with other values.
 */
class JournalReplayOrderTest {
  private static final Duration RUN = Duration.ofMinutes(5);
  private static final int KEYS = 48;
  private static final int ROUNDS = 6;

  /** One round of the workload: per key, the inputs of its {@code scramble} calls in order; then {@code all}. */
  record Round(long[][] inputs, long all) {}

  /** The workload of {@code seed}: the same for the child that runs it and the oracle here. */
  static Round[] workload(long seed) {
    Random random = new Random(seed);
    Round[] rounds = new Round[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
      long[][] inputs = new long[KEYS][];
      for (int k = 0; k < KEYS; k++) {
        inputs[k] = new long[1 + random.nextInt(12)];
        for (int i = 0; i < inputs[k].length; i++) {
          inputs[k][i] = random.nextInt(1000);
        }
      }
      rounds[r] = new Round(inputs, 1 + random.nextInt(1000));
    }
    return rounds;
  }

  /** The counters the workload of {@code seed} leaves, computed without a database. */
  static Map<Long, Long> oracle(long seed) {
    Map<Long, Long> counters = new TreeMap<>();
    for (Round round : workload(seed)) {
      for (int k = 0; k < round.inputs().length; k++) {
        for (long x : round.inputs()[k]) {
          counters.merge((long) k, x, (v, input) -> (v * 31 + input) % Scramble.MODULUS);
        }
      }
      counters.replaceAll((k, v) -> round.all() - v);
    }
    return counters;
  }

  @Test
  void recoveryReplaysEachPartitionInOrderAndMultiPartitionRecordsInTheirPlace(@TempDir Path dir) throws Exception {
    long seed = Long.getLong("apiary.test.seed", System.nanoTime());
    DurabilityFixture.Child load = DurabilityFixture.Child.startMain(JournalReplayOrderChild.class, null, "load",
        dir.toString(), String.valueOf(seed));
    try {
      load.awaitLine("LOADED", RUN);
    } finally {
      load.kill();
    }
    String out = DurabilityFixture.Child.startMain(JournalReplayOrderChild.class, null, "dump", dir.toString())
        .finish(RUN);
    Map<Long, Long> recovered = new TreeMap<>();
    out.lines().filter(l -> l.startsWith("COUNTER ")).forEach(l -> {
      String[] p = l.split(" ");
      recovered.put(Long.parseLong(p[1]), Long.parseLong(p[2]));
    });
    assertEquals(oracle(seed), recovered, "the counters after recovery (seed " + seed + ")");
    // The whole workload came back from the journal, not from a snapshot.
    long replayed = out.lines().filter(l -> l.contains("journal: replayed ") && l.contains(" records in ")).findFirst()
        .map(l -> Long.parseLong(l.replaceAll(".*journal: replayed (\\d+) records in .*", "$1"))).orElse(0L);
    long calls = 0;
    for (Round round : workload(seed)) {
      for (long[] inputs : round.inputs()) {
        calls += inputs.length;
      }
      calls++;
    }
    assertEquals(true, replayed >= calls, "recovery replayed " + replayed + " records for " + calls + " calls:\n"
        + out);
  }
}
