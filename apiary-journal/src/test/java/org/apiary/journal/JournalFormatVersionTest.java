package org.apiary.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Format version 3 adds each record's graph and graph version (issue 40, item 1). What a writer writes is what a
 * reader reads, and segments of versions 1 and 2 (no graph fields; version 1 has no marks) are still read. The older
 * segments are built here byte by byte from docs/journal-format.md's layout, by an encoder that shares no code with
 * {@link JournalFormat}.
 */
class JournalFormatVersionTest {
  @TempDir Path dir;

  @Test
  void theGraphAndGraphVersionWrittenAreTheOnesRead() throws IOException {
    byte[] params = {1, 2, 3};
    try (JournalDirectory d = JournalDirectory.open(dir)) {
      JournalWriter w = JournalWriter.start(d, 9, 1, JournalWriter.Settings.of(JournalMode.SYNCHRONOUS));
      w.append(0, 100, 1000, 4, 77, "transfer", "inv-1", "payments", 7, params);
      w.append(1, 101, 1001, 4, 78, "StoreGraph", null, params); // a system procedure: no graph
      w.appendMark(1, 555, 4);
      w.append(JournalRecord.MULTI_PARTITION, 102, 1002, 5, 79, "audit", "inv-2", "überweisung", 2_000_000_000,
          params);
      w.flush(Duration.ofSeconds(10));
      w.close();
    }
    List<JournalRecord> read = readAll(9);
    assertEquals(List.of(
        new JournalRecord(1, 0, 100, 1000, 4, 77, "transfer", "inv-1", "payments", 7, params),
        new JournalRecord(2, 1, 101, 1001, 4, 78, "StoreGraph", null, null, JournalRecord.NO_GRAPH_VERSION, params),
        JournalRecord.mark(3, 1, 555, 4),
        new JournalRecord(4, JournalRecord.MULTI_PARTITION, 102, 1002, 5, 79, "audit", "inv-2", "überweisung",
            2_000_000_000, params)), read);
    try (var files = Files.list(dir)) {
      Path segment = files.filter(f -> f.getFileName().toString().endsWith(".log")).findFirst().orElseThrow();
      byte[] header = Files.readAllBytes(segment);
      assertEquals(JournalFormat.VERSION, ((header[8] & 0xff) << 8) | (header[9] & 0xff), "the header's version");
      assertEquals(3, JournalFormat.VERSION);
    }
  }

  @Test
  void segmentsOfFormatVersionsOneAndTwoAreStillRead() throws IOException {
    byte[] params = {9, 8};
    // Version 2 (marks, no graph fields) on timeline 5; version 1 (neither) on timeline 6.
    writeOldSegment(5, 2, List.of(
        oldRecord(1, 0, 200, 2000, 3, 11, "increment", "inv-a", params),
        oldRecord(2, 0, 300, 0, 3, 0, "", null, new byte[0]),
        oldRecord(3, JournalRecord.MULTI_PARTITION, 201, 2001, 3, 12, "tally", null, params)));
    writeOldSegment(6, 1, List.of(
        oldRecord(1, 1, 400, 4000, 2, 13, "increment", "inv-b", params)));
    assertEquals(List.of(
        new JournalRecord(1, 0, 200, 2000, 3, 11, "increment", "inv-a", params),
        JournalRecord.mark(2, 0, 300, 3),
        new JournalRecord(3, JournalRecord.MULTI_PARTITION, 201, 2001, 3, 12, "tally", null, params)), readAll(5));
    assertEquals(List.of(new JournalRecord(1, 1, 400, 4000, 2, 13, "increment", "inv-b", params)), readAll(6));
    assertEquals(null, readAll(5).get(0).graph());
    assertEquals(JournalRecord.NO_GRAPH_VERSION, readAll(5).get(0).graphVersion());
  }

  private List<JournalRecord> readAll(long timeline) {
    List<JournalRecord> out = new ArrayList<>();
    JournalReader.forEach(JournalReader.scan(dir, false).get(timeline), out::add);
    return out;
  }

  /** One RECORD body as versions 1 and 2 lay it out. */
  private static byte[] oldRecord(long sequence, int partition, long txnId, long uniqueId, int catalogVersion,
                                  long resultHash, String procedure, String invocationId, byte[] parameters)
      throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    DataOutputStream o = new DataOutputStream(bytes);
    o.writeByte(2);
    o.writeLong(sequence);
    o.writeInt(partition);
    o.writeLong(txnId);
    o.writeLong(uniqueId);
    o.writeInt(catalogVersion);
    o.writeLong(resultHash);
    byte[] name = procedure.getBytes(StandardCharsets.UTF_8);
    o.writeShort(name.length);
    o.write(name);
    if (invocationId == null) {
      o.writeShort(-1);
    } else {
      byte[] id = invocationId.getBytes(StandardCharsets.UTF_8);
      o.writeShort(id.length);
      o.write(id);
    }
    o.writeInt(parameters.length);
    o.write(parameters);
    return bytes.toByteArray();
  }

  /** A whole segment: header of {@code version}, one GROUP frame, then the records' frames. */
  private void writeOldSegment(long timeline, int version, List<byte[]> records) throws IOException {
    ByteArrayOutputStream file = new ByteArrayOutputStream();
    DataOutputStream o = new DataOutputStream(file);
    ByteArrayOutputStream headerBytes = new ByteArrayOutputStream();
    DataOutputStream h = new DataOutputStream(headerBytes);
    h.write("APJOURNL".getBytes(StandardCharsets.US_ASCII));
    h.writeShort(version);
    h.writeShort(0);
    h.writeLong(timeline);
    h.writeLong(1);
    h.writeLong(1);
    byte[] header = headerBytes.toByteArray();
    o.write(header);
    o.writeInt(crc(header));
    ByteArrayOutputStream groupBytes = new ByteArrayOutputStream();
    DataOutputStream g = new DataOutputStream(groupBytes);
    g.writeByte(1);
    g.writeLong(1);
    g.writeLong(records.size());
    g.writeInt(records.size());
    g.writeLong(1_700_000_000_000L);
    frame(o, groupBytes.toByteArray());
    for (byte[] r : records) {
      frame(o, r);
    }
    Files.write(dir.resolve(String.format("journal-%016x-%08d.log", timeline, 1)), file.toByteArray());
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
