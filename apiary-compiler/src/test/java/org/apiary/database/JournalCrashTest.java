package org.apiary.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
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
import java.util.zip.CRC32C;
import org.apiary.journal.JournalReader;
import org.apiary.journal.JournalRecord;
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

  /**
   * A second server on a journal in use is refused before it starts, and the first is untouched. Then the first is
   * SIGKILLed and its journal rewritten in format 2 (records without the graph fields, headers saying version 2), as
   * an Apiary of the previous release would have left it (issue 40, item 1): the start replays it, every acknowledged
   * write there exactly once. One server start serves both: the load runs with no periodic checkpoint (as with an
   * external deployment), so its whole load after the deployment is in the journal to rewrite.
   */
  @Test
  void aSecondServerOnTheSameJournalIsRefusedAndAJournalInTheFormatBeforeStillReplays(@TempDir Path dir)
      throws Exception {
    DurabilityFixture.Child first = start("load", dir.toString(), "synchronous", "1", "external-deploy");
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
    Set<Long> acknowledged = acknowledged(first);
    Path journal = DatabaseJournal.directoryOf(dir);
    long replayable = 0;
    for (JournalReader.Timeline t : JournalReader.scan(journal, false).values()) {
      replayable += rewriteInFormat2(journal, t);
    }
    assertTrue(replayable >= 200, "the rewritten journal holds the load's records: " + replayable);
    String out = start("count", dir.toString(), "synchronous").finish(RUN);
    List<Long> missing = acknowledged.stream().filter(k -> !out.contains("COUNTER " + k + " " + k + "\n")).toList();
    assertEquals(List.of(), missing.subList(0, Math.min(20, missing.size())), missing.size() + " of "
        + acknowledged.size() + " acknowledged writes missing after replaying the format-2 journal");
    assertTrue(out.contains("DONE"), out);
    java.util.regex.Matcher replayed = java.util.regex.Pattern.compile("journal: replayed (\\d+) records").matcher(out);
    assertTrue(replayed.find() && Long.parseLong(replayed.group(1)) > 0,
        "the start replayed records of the format-2 journal (not the snapshot alone):\n" + out);
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

  /**
   * Replaces timeline {@code t}'s segments by one segment in format 2, laid out as docs/journal-format.md says (one
   * GROUP frame, then the records without the graph fields); returns the records written.
   */
  private static long rewriteInFormat2(Path journal, JournalReader.Timeline t) throws IOException {
    List<JournalRecord> records = new ArrayList<>();
    JournalReader.forEach(t, records::add);
    ByteArrayOutputStream file = new ByteArrayOutputStream();
    DataOutputStream o = new DataOutputStream(file);
    ByteArrayOutputStream headerBytes = new ByteArrayOutputStream();
    DataOutputStream h = new DataOutputStream(headerBytes);
    h.write("APJOURNL".getBytes(StandardCharsets.US_ASCII));
    h.writeShort(2);
    h.writeShort(0);
    h.writeLong(t.timeline());
    h.writeLong(1);
    h.writeLong(records.isEmpty() ? Math.max(1, t.firstSequence()) : records.get(0).sequence());
    byte[] header = headerBytes.toByteArray();
    o.write(header);
    o.writeInt(crc(header));
    if (!records.isEmpty()) {
      ByteArrayOutputStream group = new ByteArrayOutputStream();
      DataOutputStream g = new DataOutputStream(group);
      g.writeByte(1);
      g.writeLong(records.get(0).sequence());
      g.writeLong(records.get(records.size() - 1).sequence());
      g.writeInt(records.size());
      g.writeLong(System.currentTimeMillis());
      frame(o, group.toByteArray());
    }
    for (JournalRecord r : records) {
      ByteArrayOutputStream body = new ByteArrayOutputStream();
      DataOutputStream b = new DataOutputStream(body);
      b.writeByte(2);
      b.writeLong(r.sequence());
      b.writeInt(r.partition());
      b.writeLong(r.txnId());
      b.writeLong(r.uniqueId());
      b.writeInt(r.catalogVersion());
      b.writeLong(r.resultHash());
      byte[] name = r.procedure().getBytes(StandardCharsets.UTF_8);
      b.writeShort(name.length);
      b.write(name);
      if (r.invocationId() == null) {
        b.writeShort(-1);
      } else {
        byte[] id = r.invocationId().getBytes(StandardCharsets.UTF_8);
        b.writeShort(id.length);
        b.write(id);
      }
      b.writeInt(r.parameters().length);
      b.write(r.parameters());
      frame(o, body.toByteArray());
    }
    for (Path segment : t.segments()) {
      Files.delete(segment);
    }
    Files.write(journal.resolve(String.format("journal-%016x-%08d.log", t.timeline(), 1)), file.toByteArray());
    return records.size();
  }

  private static void frame(DataOutputStream o, byte[] body) throws IOException {
    o.writeInt(body.length);
    o.writeInt(crc(body));
    o.write(body);
  }

  private static int crc(byte[] bytes) {
    CRC32C c = new CRC32C();
    c.update(bytes);
    return (int) c.getValue();
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
