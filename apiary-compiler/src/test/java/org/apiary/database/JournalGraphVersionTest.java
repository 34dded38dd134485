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
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.apiary.internal.Invocation;
import org.apiary.internal.Json;
import org.apiary.journal.JournalMode;
import org.apiary.journal.JournalReader;
import org.apiary.journal.JournalRecord;
import org.apiary.runtime.FunctionInvoker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 40, item 1: each journal record holds the graph and graph version its invocation ran (journal format 3), as
 * the function's transaction received them; and a journal written in format 2, the one before, still replays.
 */
class JournalGraphVersionTest {
  private static final Duration RUN = Duration.ofSeconds(120);

  /** A function called for version 7 of graph {@code counting} leaves a record saying so; a direct call, none. */
  @Test
  void aRecordHoldsTheGraphAndVersionItsInvocationRan(@TempDir Path dir) throws Exception {
    DatabaseConfig config = DatabaseConfig.embedded(2).withDataDirectory(dir)
        .withSnapshotInterval(Duration.ofSeconds(600)).withJournal(JournalMode.SYNCHRONOUS);
    try (ApiaryDatabase db = ApiaryDatabase.open(config)) {
      FunctionInvoker invoker = DurabilityFixture.deploy(db);
      Invocation forGraph = new Invocation(Map.of(org.apiary.ApiaryFunction.SOURCE, List.of(Json.tree(5L))),
          "inv-graph", false, "counting", null, false, false, null, null, null, null, null, null, 7);
      invoker.callAsync("increment", 5L, forGraph).get(60, TimeUnit.SECONDS);
      invoker.call("increment", 6L, 6L);
      // The journal as the server wrote it, before a clean stop's checkpoint could make its segments redundant.
      List<JournalRecord> records = new ArrayList<>();
      for (JournalReader.Timeline t : JournalReader.scan(DatabaseJournal.directoryOf(dir), false).values()) {
        JournalReader.forEach(t, records::add);
      }
      List<JournalRecord> increments = records.stream().filter(r -> r.procedure().equals("increment")).toList();
      assertEquals(2, increments.size(), "records: " + records);
      assertEquals("inv-graph", increments.get(0).invocationId());
      assertEquals("counting", increments.get(0).graph());
      assertEquals(7, increments.get(0).graphVersion());
      assertEquals(null, increments.get(1).graph(), "a direct call ran for no graph");
      assertEquals(JournalRecord.NO_GRAPH_VERSION, increments.get(1).graphVersion());
    }
  }

  /**
   * A synchronously journaled server is SIGKILLed under load; its journal is then rewritten in format 2 (records
   * without the graph fields, headers saying version 2), as an Apiary of the previous release would have left it.
   * The start replays it: every acknowledged write is there exactly once.
   */
  @Test
  void aJournalInTheFormatBeforeStillReplays(@TempDir Path dir) throws Exception {
    DurabilityFixture.Child load = DurabilityFixture.Child.startMain(JournalCrashChild.class, null, "load",
        dir.toString(), "synchronous", "1");
    try {
      load.awaitLine("LOADING", RUN);
    } finally {
      load.kill();
    }
    Set<Long> acknowledged = new TreeSet<>();
    load.output().lines().filter(l -> l.startsWith("ACK ")).forEach(l -> acknowledged.add(Long.parseLong(l.substring(4))));
    Path journal = DatabaseJournal.directoryOf(dir);
    long replayable = 0;
    for (JournalReader.Timeline t : JournalReader.scan(journal, false).values()) {
      replayable += rewriteInFormat2(journal, t);
    }
    assertTrue(replayable >= 200, "the rewritten journal holds the load's records: " + replayable);
    String out = DurabilityFixture.Child.startMain(JournalCrashChild.class, null, "count", dir.toString(),
        "synchronous").finish(RUN);
    List<Long> missing = acknowledged.stream().filter(k -> !out.contains("COUNTER " + k + " " + k + "\n")).toList();
    assertEquals(List.of(), missing.subList(0, Math.min(20, missing.size())), missing.size() + " of "
        + acknowledged.size() + " acknowledged writes missing after replaying the format-2 journal");
    assertTrue(out.contains("DONE"), out);
    java.util.regex.Matcher replayed = java.util.regex.Pattern.compile("journal: replayed (\\d+) records").matcher(out);
    assertTrue(replayed.find() && Long.parseLong(replayed.group(1)) > 0,
        "the start replayed records of the format-2 journal (not the snapshot alone):\n" + out);
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
}
