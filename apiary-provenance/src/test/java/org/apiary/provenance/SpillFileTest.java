package org.apiary.provenance;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SpillFileTest {
  @TempDir
  Path dir;

  private static final List<Object> EDGE_VALUES = Arrays.asList(Long.MIN_VALUE, Integer.MAX_VALUE, (short) -1,
      (byte) -128, Double.NaN, -0.0, Double.NEGATIVE_INFINITY, 1e-300, new BigDecimal("-0.000000000001"),
      new BigDecimal("12345678901234567890123456.120000000000"), "", "tab\tnewline\n\"quote\" \u0000 ✓",
      new byte[0], new byte[] {0, -1, 127}, Instant.parse("2024-03-01T12:00:00.123456789Z"),
      Instant.parse("1969-12-31T23:59:59.999999999Z"), null);

  @Test
  void everyValueTypeRoundTrips() throws IOException {
    ProvenanceTable table = SinkChecks.typedTable("spilled");
    List<ProvenanceRow> rows = new ArrayList<>(SinkChecks.typedRows(table, 0, 50, "v"));
    rows.add(new ProvenanceRow("edge", EDGE_VALUES));
    Path file = write(1, rows);

    List<ProvenanceRow> read = SpillFile.read(file).rows();
    assertEquals(rows.size(), read.size());
    assertEquals(rows.size(), SpillFile.count(file));
    for (int i = 0; i < rows.size(); i++) {
      assertSameRow(rows.get(i), read.get(i));
    }
  }

  @Test
  void anIncompleteLastUnitIsIgnored() throws IOException {
    ProvenanceTable table = SinkChecks.typedTable("torn");
    Path file = write(2, SinkChecks.typedRows(table, 0, 10, "v"));
    long size = Files.size(file);
    try (var channel = java.nio.channels.FileChannel.open(file, StandardOpenOption.WRITE)) {
      channel.truncate(size - 5); // the process stopped in the middle of the last unit (rows 7 to 9)
    }
    assertEquals(7, SpillFile.count(file));
    assertEquals(7, SpillFile.read(file).rows().size());
  }

  @Test
  void aDamagedUnitCostsItsRowsOnlyAndTheFileCarriesItsTablesDefinitions() throws IOException {
    ProvenanceTable table = SinkChecks.typedTable("corrupt");
    Path file = write(3, SinkChecks.typedRows(table, 0, 70, "v")); // 10 units of 7 rows
    byte[] bytes = Files.readAllBytes(file);
    bytes[bytes.length / 2] ^= 0x55;
    Files.write(file, bytes);
    SpillFile.Contents contents = SpillFile.read(file);
    assertEquals(63, contents.rows().size());
    assertEquals(1, contents.damagedUnits());
    assertEquals(63, SpillFile.count(file));
    assertEquals(java.util.Map.of(table.name(), table), contents.tables());
  }

  @Test
  void aDamagedUnitHeaderIsSkippedToTheNextIntactUnit() throws IOException {
    ProvenanceTable table = SinkChecks.typedTable("header");
    Path file = write(4, SinkChecks.typedRows(table, 0, 21, "v")); // 3 units of 7 rows
    byte[] bytes = Files.readAllBytes(file);
    bytes[8 + 6] ^= 0x01; // the first unit's row count
    Files.write(file, bytes);
    SpillFile.Contents contents = SpillFile.read(file);
    assertEquals(14, contents.rows().size());
    assertEquals(1, contents.damagedUnits());
    assertEquals(7L, (Long) contents.rows().get(0).values().get(6), "reading resumes at the second unit");
  }

  @Test
  void aFileOfTheEarlierJsonFormatIsStillRead() throws IOException {
    // Written by the APSPILL2 code (JSON entries) before rows became binary: 20 rows in units of 7.
    Path file = SpillFile.path(dir, 5);
    try (var in = SpillFileTest.class.getResourceAsStream("segment-version2.spill")) {
      Files.copy(in, file);
    }
    ProvenanceTable table = SinkChecks.typedTable("legacy");
    List<ProvenanceRow> expected = SinkChecks.typedRows(table, 0, 20, "v");
    SpillFile.Contents contents = SpillFile.read(file);
    assertEquals(java.util.Map.of(table.name(), table), contents.tables());
    assertEquals(expected.size(), contents.rows().size());
    for (int i = 0; i < expected.size(); i++) {
      assertSameRow(expected.get(i), contents.rows().get(i));
    }
    assertEquals(20, SpillFile.count(file));
  }

  @Test
  void rowsAreWrittenBinaryUnderTheCurrentMark() throws IOException {
    ProvenanceTable table = SinkChecks.typedTable("current");
    Path file = write(6, SinkChecks.typedRows(table, 0, 3, "v"));
    byte[] bytes = Files.readAllBytes(file);
    assertEquals("APSPILL3", new String(bytes, 0, 8, java.nio.charset.StandardCharsets.US_ASCII));
    assertEquals(-1, new String(bytes, java.nio.charset.StandardCharsets.ISO_8859_1).indexOf("\"values\""),
        "rows are not JSON");
  }

  @Test
  void anEntryThatPassesItsChecksumButIsNotARowIsAnErrorNamingTheFileAndOffset() throws IOException {
    byte[] name = "tEvents".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    java.nio.ByteBuffer unknownTag = java.nio.ByteBuffer.allocate(1 + 2 + name.length + 2 + 1)
        .put((byte) 'R').putShort((short) name.length).put(name).putShort((short) 1).put((byte) 'Q');
    java.nio.ByteBuffer longString = java.nio.ByteBuffer.allocate(1 + 2 + name.length + 2 + 1 + 4)
        .put((byte) 'R').putShort((short) name.length).put(name).putShort((short) 1).put((byte) 'V').putInt(1 << 20);
    java.nio.ByteBuffer trailing = java.nio.ByteBuffer.allocate(1 + 2 + name.length + 2 + 1 + 3)
        .put((byte) 'R').putShort((short) name.length).put(name).putShort((short) 1).put((byte) 0);
    for (java.nio.ByteBuffer entry : List.of(unknownTag, longString, trailing)) {
      Path file = SpillFile.path(dir, 100 + entry.capacity());
      Files.write(file, unitFile(entry.array()));
      IOException e = assertThrows(IOException.class, () -> SpillFile.read(file));
      assertEquals(true, e.getMessage().contains(file.toString()) && e.getMessage().contains("offset 24")
          && e.getMessage().contains("passed its checksum but cannot be read"), e.getMessage());
    }
  }

  /** A spill file of the current format holding one unit of one entry, checksums right. */
  private static byte[] unitFile(byte[] entry) {
    java.nio.ByteBuffer payload = java.nio.ByteBuffer.allocate(4 + entry.length).putInt(entry.length).put(entry);
    java.nio.ByteBuffer header = java.nio.ByteBuffer.allocate(12).putInt(0xFF415532).putInt(1)
        .putInt(payload.capacity());
    java.nio.ByteBuffer file = java.nio.ByteBuffer.allocate(8 + 16 + payload.capacity() + 4)
        .put("APSPILL3".getBytes(java.nio.charset.StandardCharsets.US_ASCII)).put(header.array())
        .putInt(crc(header.array())).put(payload.array()).putInt(crc(payload.array()));
    return file.array();
  }

  private static int crc(byte[] bytes) {
    java.util.zip.CRC32 crc = new java.util.zip.CRC32();
    crc.update(bytes);
    return (int) crc.getValue();
  }

  @Test
  void namesCarryIncreasingIds() throws IOException {
    Path file = SpillFile.path(dir, 42);
    assertEquals("segment-00000000000000000042.spill", file.getFileName().toString());
    assertEquals(OptionalLong.of(42), SpillFile.idOf(file));
    assertEquals(OptionalLong.empty(), SpillFile.idOf(dir.resolve("spool.lock")));
    Files.writeString(dir.resolve("segment-00000000000000000007.spill"), "not a spill file at all");
    assertThrows(IOException.class, () -> SpillFile.count(dir.resolve("segment-00000000000000000007.spill")));
  }

  private Path write(long id, List<ProvenanceRow> rows) throws IOException {
    Path file = SpillFile.path(dir, id);
    java.util.Map<String, ProvenanceTable> tables = new java.util.HashMap<>();
    for (ProvenanceRow row : rows) {
      if (row.table().endsWith("Events")) {
        tables.put(row.table(), SinkChecks.typedTable(row.table().substring(0, row.table().length() - 6)));
      }
    }
    try (SpillFile.Writer writer = SpillFile.Writer.create(file)) {
      for (int from = 0; from < rows.size(); from += 7) {
        writer.append(rows.subList(from, Math.min(rows.size(), from + 7)), tables);
      }
    }
    return file;
  }

  static void assertSameRow(ProvenanceRow expected, ProvenanceRow actual) {
    assertEquals(expected.table(), actual.table());
    assertEquals(expected.values().size(), actual.values().size());
    for (int i = 0; i < expected.values().size(); i++) {
      Object e = expected.values().get(i);
      Object a = actual.values().get(i);
      if (e instanceof byte[] bytes) {
        assertArrayEquals(bytes, (byte[]) a, "value " + i);
      } else {
        assertEquals(e, a, "value " + i); // equals also compares class and BigDecimal scale
      }
    }
  }
}
