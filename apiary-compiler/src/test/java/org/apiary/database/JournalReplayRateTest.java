package org.apiary.database;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * The recovery speed measurement of issue 40 (not a unit test: it asserts no speed, only that recovery restored
 * every increment). A child JVM journals {@code apiary.replay.records} counter increments (default 1,000,000) and is
 * SIGKILLed, so the journal holds all of them after the restored checkpoint; a second child recovers, and the replay
 * rate it logs is printed. Runs only with {@code -Dapiary.replay.records=N}; {@code -Dapiary.replay.mode} picks the
 * journal mode (default synchronous, as {@code apiary start}; asynchronous writes the same records and loads a large
 * journal many times faster, and recovery does not depend on the mode):
 *
 * <pre>
 * mvn -q -o -pl apiary-compiler -am -Dtest=JournalReplayRateTest -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dapiary.replay.records=1000000 -Dapiary.replay.mode=asynchronous test
 * </pre>
 */
@EnabledIfSystemProperty(named = "apiary.replay.records", matches = "\\d+")
class JournalReplayRateTest {
  private static final Duration TIMEOUT = Duration.ofMinutes(30);

  @Test
  void measuresTheReplayRateOfAJournalOfCounterIncrements(@TempDir Path dir) throws Exception {
    long records = Long.getLong("apiary.replay.records");
    String mode = System.getProperty("apiary.replay.mode", "synchronous");
    DurabilityFixture.Child load = DurabilityFixture.Child.startMain(JournalReplayRateChild.class, null, "load",
        dir.toString(), mode, String.valueOf(records));
    String loaded;
    try {
      awaitPrefix(load, "LOADED ");
      loaded = load.output().lines().filter(l -> l.startsWith("LOADED ")).findFirst().orElseThrow();
    } finally {
      load.kill();
    }
    String out = DurabilityFixture.Child.startMain(JournalReplayRateChild.class, null, "recover", dir.toString(),
        mode).finish(TIMEOUT);
    String replayed = out.lines().filter(l -> l.contains("journal: replayed") && l.contains(" in "))
        .findFirst().orElse("(no replay line)");
    String recovered = out.lines().filter(l -> l.startsWith("RECOVERED ")).findFirst().orElseThrow();
    System.getLogger(getClass().getName()).log(System.Logger.Level.INFO, "replay rate: " + loaded + "; " + replayed
        + "; " + recovered);
    System.out.println("REPLAY-RATE " + loaded + " | " + replayed.strip() + " | " + recovered);
    long total = Long.parseLong(out.lines().filter(l -> l.startsWith("TOTAL ")).findFirst().orElseThrow()
        .substring(6));
    assertEquals(records, total, "every journaled increment is there after recovery");
  }

  private static void awaitPrefix(DurabilityFixture.Child child, String prefix) throws Exception {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (child.output().lines().noneMatch(l -> l.startsWith(prefix))) {
      if (!child.process().isAlive()) {
        throw new AssertionError("the child JVM exited before printing " + prefix + ":\n" + child.output());
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the child did not print " + prefix + " within " + TIMEOUT);
      }
      Thread.sleep(200);
    }
  }
}
