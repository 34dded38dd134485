package org.apiary.provenance;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32;

/**
 * The spill file format: one file per segment, named {@code segment-<20-digit id>.spill}, ids increasing in offer
 * order. A file is the 8 ASCII bytes {@code APSPILL2} followed by units. A unit holds the rows of one append (for a
 * durable offer, the rows of one function execution), and is read whole or not at all:
 * <pre>
 *   4 bytes  0xFF 'A' 'U' '2' (0xFF never occurs in UTF-8, so a reader can find the next unit after damage)
 *   int32    number of rows in the unit
 *   int32    n, the payload's length in bytes
 *   int32    CRC-32 of the 12 bytes above
 *   n bytes  payload: entries, each an int32 length and that many bytes of UTF-8 JSON, either a table definition
 *            {"define": {name, columns, key, recordKey}} (the first time a file holds rows of a table), or a row
 *            {"table": "name", "values": [v, ...]}
 *   int32    CRC-32 of the payload
 * </pre>
 * (all integers big-endian) where each value {@code v} is JSON {@code null} or a pair {@code [tag, payload]}:
 * {@code ["L", 1]} Long, {@code ["I", 1]} Integer, {@code ["S", 1]} Short, {@code ["B", 1]} Byte, {@code ["D",
 * "1.5"]} Double (its {@code toString}, exact, NaN and infinities included), {@code ["N", "1.50"]} BigDecimal (exact,
 * scale kept), {@code ["V", "text"]} String, {@code ["X", "AAE="]} byte[] (base64), {@code ["T",
 * "2024-03-01T12:00:00.123456789Z"]} Instant (ISO-8601, nanoseconds kept).
 *
 * <p>A file carries the definitions of the tables its rows belong to, so it can be loaded by a spooler to which
 * nobody registers those tables. A unit cut short at the end of a file (the process stopped while appending it; its
 * append never returned) is ignored. A damaged unit (a checksum fails) is skipped, with a warning, and reading goes
 * on with the next intact unit: damage costs the rows written with it, never the rows after it. Files of the
 * earlier format {@code APSPILL1} (a record per row, no definitions) are still read.
 */
final class SpillFile {
  private static final System.Logger LOG = System.getLogger(SpillFile.class.getName());
  private static final byte[] MAGIC = "APSPILL2".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] MAGIC_V1 = "APSPILL1".getBytes(StandardCharsets.US_ASCII);
  private static final int UNIT_MAGIC = 0xFF415532;
  private static final int UNIT_HEADER_BYTES = 16;
  private static final int MAX_RECORD_BYTES = 256 << 20;
  private static final int MAX_UNIT_BYTES = Integer.MAX_VALUE - 64;
  private static final Pattern NAME = Pattern.compile("segment-(\\d{20})\\.spill");
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final JsonFactory JSON = MAPPER.getFactory();

  private SpillFile() {}

  /**
   * What a spill file holds.
   *
   * @param tables the definitions its units carry, by table name
   * @param rows its intact rows, in the order written
   * @param damagedUnits units skipped because a checksum failed
   * @param damagedRows rows of those units, where their header was intact enough to say
   */
  record Contents(Map<String, ProvenanceTable> tables, List<ProvenanceRow> rows, int damagedUnits,
                  long damagedRows) {}

  static Path path(Path directory, long id) {
    return directory.resolve(String.format("segment-%020d.spill", id));
  }

  /** The segment id a file name carries, or empty if the file is not a spill file. */
  static OptionalLong idOf(Path file) {
    Matcher m = NAME.matcher(file.getFileName().toString());
    return m.matches() ? OptionalLong.of(Long.parseLong(m.group(1))) : OptionalLong.empty();
  }

  /**
   * Encodes rows as one unit, with the definitions of their tables that {@code defined} does not name yet (those
   * are added to {@code newlyDefined}).
   */
  private static byte[] encodeUnit(List<ProvenanceRow> rows, Map<String, ProvenanceTable> tables, Set<String> defined,
                           Set<String> newlyDefined) {
    ByteArrayOutputStream payload = new ByteArrayOutputStream(64 + rows.size() * 160);
    for (ProvenanceRow row : rows) {
      if (!defined.contains(row.table()) && newlyDefined.add(row.table())) {
        ProvenanceTable table = tables.get(row.table());
        if (table != null) {
          writeEntry(payload, definition(table));
        }
      }
      writeEntry(payload, rowJson(row));
    }
    byte[] body = payload.toByteArray();
    ByteArrayOutputStream unit = new ByteArrayOutputStream(body.length + UNIT_HEADER_BYTES + 4);
    ByteBuffer header = ByteBuffer.allocate(12).putInt(UNIT_MAGIC).putInt(rows.size()).putInt(body.length);
    unit.writeBytes(header.array());
    writeInt(unit, crc(header.array(), 0, 12));
    unit.writeBytes(body);
    writeInt(unit, crc(body, 0, body.length));
    return unit.toByteArray();
  }

  private static void writeEntry(ByteArrayOutputStream out, byte[] json) {
    writeInt(out, json.length);
    out.writeBytes(json);
  }

  private static byte[] definition(ProvenanceTable table) {
    try {
      return MAPPER.writeValueAsBytes(Map.of("define", table));
    } catch (IOException e) {
      throw new UncheckedIOException("encoding the definition of " + table.name() + " failed", e);
    }
  }

  private static byte[] rowJson(ProvenanceRow row) {
    ByteArrayOutputStream payload = new ByteArrayOutputStream(128);
    try (JsonGenerator json = JSON.createGenerator(payload)) {
      json.writeStartObject();
      json.writeStringField("table", row.table());
      json.writeArrayFieldStart("values");
      for (Object value : row.values()) {
        writeValue(json, value);
      }
      json.writeEndArray();
      json.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException("encoding a row of " + row.table() + " in memory failed", e);
    }
    return payload.toByteArray();
  }

  private static int crc(byte[] bytes, int from, int length) {
    CRC32 crc = new CRC32();
    crc.update(bytes, from, length);
    return (int) crc.getValue();
  }

  private static void writeValue(JsonGenerator json, Object value) throws IOException {
    if (value == null) {
      json.writeNull();
      return;
    }
    json.writeStartArray();
    if (value instanceof Long v) {
      json.writeString("L");
      json.writeNumber(v);
    } else if (value instanceof Integer v) {
      json.writeString("I");
      json.writeNumber(v);
    } else if (value instanceof Short v) {
      json.writeString("S");
      json.writeNumber(v);
    } else if (value instanceof Byte v) {
      json.writeString("B");
      json.writeNumber(v);
    } else if (value instanceof Double v) {
      json.writeString("D");
      json.writeString(v.toString());
    } else if (value instanceof BigDecimal v) {
      json.writeString("N");
      json.writeString(v.toString());
    } else if (value instanceof String v) {
      json.writeString("V");
      json.writeString(v);
    } else if (value instanceof byte[] v) {
      json.writeString("X");
      json.writeString(Base64.getEncoder().encodeToString(v));
    } else if (value instanceof Instant v) {
      json.writeString("T");
      json.writeString(v.toString());
    } else {
      throw new IllegalArgumentException("cannot spill a value of type " + value.getClass().getName());
    }
    json.writeEndArray();
  }

  private static Object readValue(JsonNode node) {
    if (node == null || node.isNull()) {
      return null;
    }
    String tag = node.get(0).asText();
    JsonNode payload = node.get(1);
    return switch (tag) {
      case "L" -> payload.longValue();
      case "I" -> payload.intValue();
      case "S" -> payload.shortValue();
      case "B" -> (byte) payload.intValue();
      case "D" -> Double.valueOf(payload.textValue());
      case "N" -> new BigDecimal(payload.textValue());
      case "V" -> payload.textValue();
      case "X" -> Base64.getDecoder().decode(payload.textValue());
      case "T" -> Instant.parse(payload.textValue());
      default -> throw new IllegalArgumentException("unknown value tag " + tag);
    };
  }

  private static ProvenanceRow decodeRow(JsonNode node) {
    List<Object> values = new ArrayList<>();
    for (JsonNode value : node.get("values")) {
      values.add(readValue(value));
    }
    return new ProvenanceRow(node.get("table").textValue(), values);
  }

  /** Reads a whole spill file. */
  static Contents read(Path file) throws IOException {
    return read(file, Long.MAX_VALUE);
  }

  /**
   * Reads a spill file up to {@code validBytes} (the end of the last unit this process knows was appended whole;
   * what follows may be a unit whose append failed).
   */
  static Contents read(Path file, long validBytes) throws IOException {
    Map<String, ProvenanceTable> tables = new LinkedHashMap<>();
    List<ProvenanceRow> rows = new ArrayList<>();
    Census census = scan(file, validBytes, tables, rows);
    return new Contents(tables, rows, census.damagedUnits(), census.damagedRows());
  }

  /**
   * How many intact and damaged rows a spill file holds, found from the units' headers and checksums without
   * decoding the rows.
   *
   * @param rows intact rows
   * @param damagedUnits units skipped because a checksum failed
   * @param damagedRows rows of those units, where their header was intact enough to say
   */
  record Census(int rows, int damagedUnits, long damagedRows) {}

  /** Counts a whole spill file's rows (see {@link Census}). */
  static Census census(Path file) throws IOException {
    return scan(file, Long.MAX_VALUE, null, null);
  }

  /** Walks a spill file's units up to {@code validBytes}; decodes them into the collections unless those are null. */
  private static Census scan(Path file, long validBytes, Map<String, ProvenanceTable> tables,
                             List<ProvenanceRow> rows) throws IOException {
    byte[] bytes = Files.readAllBytes(file);
    int end = (int) Math.min(bytes.length, validBytes);
    if (end < MAGIC.length) {
      return new Census(0, 0, 0); // created, header not yet written: nothing in it
    }
    byte[] magic = Arrays.copyOf(bytes, MAGIC.length);
    if (Arrays.equals(magic, MAGIC_V1)) {
      return scanVersion1(file, bytes, end, rows);
    }
    if (!Arrays.equals(magic, MAGIC)) {
      throw new IOException(file + " is not a provenance spill file (it does not start with APSPILL2)");
    }
    int intact = 0;
    int damagedUnits = 0;
    long damagedRows = 0;
    ByteBuffer in = ByteBuffer.wrap(bytes, 0, end);
    int at = MAGIC.length;
    while (at < end) {
      if (end - at < UNIT_HEADER_BYTES || in.getInt(at) != UNIT_MAGIC
          || in.getInt(at + 12) != crc(bytes, at, 12) || in.getInt(at + 4) < 0 || in.getInt(at + 8) < 0
          || in.getInt(at + 8) > MAX_UNIT_BYTES) {
        int next = nextUnit(bytes, at + 1, end);
        if (next < 0 && end - at < UNIT_HEADER_BYTES + 4) {
          LOG.log(System.Logger.Level.WARNING, "spill file {0}: the last unit is incomplete (the process stopped "
              + "while appending it); ignoring it", file);
          break;
        }
        damagedUnits++;
        LOG.log(System.Logger.Level.WARNING, "spill file {0}: damaged bytes at offset {1}; skipping {2} bytes to "
            + "the next intact unit", file, at, (next < 0 ? end : next) - at);
        if (next < 0) {
          break;
        }
        at = next;
        continue;
      }
      int count = in.getInt(at + 4);
      int length = in.getInt(at + 8);
      long unitEnd = (long) at + UNIT_HEADER_BYTES + length + 4;
      if (unitEnd > end) {
        LOG.log(System.Logger.Level.WARNING, "spill file {0}: the last unit ({1} rows) is incomplete (the process "
            + "stopped while appending it); ignoring it", file, count);
        break;
      }
      int payload = at + UNIT_HEADER_BYTES;
      if (in.getInt(payload + length) != crc(bytes, payload, length)) {
        damagedUnits++;
        damagedRows += count;
        LOG.log(System.Logger.Level.WARNING, "spill file {0}: a unit of {1} rows at offset {2} fails its checksum; "
            + "skipping it", file, count, at);
        at = (int) unitEnd;
        continue;
      }
      intact += count;
      if (rows != null) {
        readPayload(file, bytes, payload, length, tables, rows);
      }
      at = (int) unitEnd;
    }
    return new Census(intact, damagedUnits, damagedRows);
  }

  /** The offset of the next unit header whose checksum holds, or -1. */
  private static int nextUnit(byte[] bytes, int from, int end) {
    ByteBuffer in = ByteBuffer.wrap(bytes);
    for (int at = from; at + UNIT_HEADER_BYTES <= end; at++) {
      if (bytes[at] == (byte) 0xFF && in.getInt(at) == UNIT_MAGIC && in.getInt(at + 12) == crc(bytes, at, 12)) {
        return at;
      }
    }
    return -1;
  }

  private static void readPayload(Path file, byte[] bytes, int from, int length, Map<String, ProvenanceTable> tables,
                                  List<ProvenanceRow> rows) throws IOException {
    ByteBuffer in = ByteBuffer.wrap(bytes, from, length);
    int at = from;
    int end = from + length;
    while (at < end) {
      int entry = in.getInt(at);
      try {
        JsonNode node = MAPPER.readTree(bytes, at + 4, entry);
        if (node.has("define")) {
          ProvenanceTable table = MAPPER.treeToValue(node.get("define"), ProvenanceTable.class);
          tables.put(table.name(), table);
        } else {
          rows.add(decodeRow(node));
        }
      } catch (IOException | RuntimeException e) {
        throw new IOException("an entry of spill file " + file + " at offset " + at + " passed its checksum but "
            + "cannot be read: " + e.getMessage(), e);
      }
      at += 4 + entry;
    }
  }

  /** The earlier format: a record (length, JSON row, CRC-32) per row; damage ends the file. */
  private static Census scanVersion1(Path file, byte[] bytes, int end, List<ProvenanceRow> rows)
      throws IOException {
    int intact = 0;
    ByteBuffer in = ByteBuffer.wrap(bytes, 0, end);
    int at = MAGIC_V1.length;
    while (end - at >= 4) {
      int length = in.getInt(at);
      if (length <= 0 || length > MAX_RECORD_BYTES || (long) at + 8 + length > end
          || in.getInt(at + 4 + length) != crc(bytes, at + 4, length)) {
        LOG.log(System.Logger.Level.WARNING, "spill file {0}: record {1} is damaged or incomplete; ignoring it and "
            + "the rest of the file", file, intact + 1);
        break;
      }
      if (rows != null) {
        try {
          rows.add(decodeRow(MAPPER.readTree(bytes, at + 4, length)));
        } catch (IOException | RuntimeException e) {
          throw new IOException("record " + (intact + 1) + " of spill file " + file + " passed its checksum but "
              + "is not a row: " + e.getMessage(), e);
        }
      }
      intact++;
      at += 8 + length;
    }
    return new Census(intact, 0, 0);
  }

  /** How many intact rows a spill file holds. */
  static int count(Path file) throws IOException {
    return census(file).rows();
  }

  private static void writeInt(ByteArrayOutputStream out, int value) {
    out.write(value >>> 24);
    out.write(value >>> 16);
    out.write(value >>> 8);
    out.write(value);
  }

  /**
   * A unit whose append failed may still be read from the file (it could be neither cut off nor marked damaged):
   * the file must not be read past {@link #offset} again, and no later unit may go into it.
   */
  static final class Tainted extends IOException {
    final transient Path file;
    final long offset;

    Tainted(Path file, long offset, IOException cause) {
      super("spill file " + file + " may still hold, from offset " + offset + ", rows whose append failed ("
          + cause.getMessage() + "); they could be neither removed nor marked", cause);
      this.file = file;
      this.offset = offset;
    }
  }

  /** Opens the channels spill files are written through. */
  interface Channels {
    /** New files, created (they must not exist) for writing. */
    Channels FILES = file -> FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);

    FileChannel create(Path file) throws IOException;
  }

  /** Appends units to a new spill file. Not thread-safe. */
  static final class Writer implements Closeable {
    private final Path file;
    private final FileChannel channel;

    private Writer(Path file, FileChannel channel) {
      this.file = file;
      this.channel = channel;
    }

    /** Creates the file (it must not exist) and writes its header. */
    static Writer create(Path file) throws IOException {
      return create(file, Channels.FILES);
    }

    /** Creates the file through {@code channels} (tests inject failing channels). */
    static Writer create(Path file, Channels channels) throws IOException {
      FileChannel channel = channels.create(file);
      Writer writer = new Writer(file, channel);
      try {
        writer.writeFully(ByteBuffer.wrap(MAGIC));
      } catch (IOException e) {
        try {
          channel.close();
        } catch (IOException closing) {
          e.addSuppressed(closing);
        }
        throw e;
      }
      return writer;
    }

    Path file() {
      return file;
    }

    /** The tables this file holds a definition of (written with a unit that was appended whole). */
    private final Set<String> defined = new HashSet<>();

    /** The file's length: where the next unit starts. */
    long size() throws IOException {
      return channel.position();
    }

    /**
     * Appends rows as one unit, with the definitions of their tables this file does not hold yet. If the write fails
     * the file is cut back to where it was, so it never holds part of what this call wrote.
     *
     * @param tables the registered tables, for their definitions
     */
    void append(List<ProvenanceRow> rows, Map<String, ProvenanceTable> tables) throws IOException {
      Set<String> newlyDefined = new HashSet<>();
      byte[] unit = encodeUnit(rows, tables, defined, newlyDefined);
      long before = channel.position();
      try {
        writeFully(ByteBuffer.wrap(unit));
      } catch (IOException e) {
        try {
          rollBack(before);
        } catch (IOException truncating) {
          e.addSuppressed(truncating);
        }
        throw e;
      }
      defined.addAll(newlyDefined);
    }

    /**
     * Appends rows as one unit, as {@link #append}, and forces it to the storage device. If either fails, the unit is taken out of the file again
     * (cut off and the cut forced) so no reader ever sees it; if even that fails, its first byte is overwritten,
     * which makes readers skip it as damaged; and if that fails too, {@link Tainted} says the unit may survive.
     */
    void appendDurably(List<ProvenanceRow> rows, Map<String, ProvenanceTable> tables) throws IOException {
      Set<String> newlyDefined = new HashSet<>();
      byte[] unit = encodeUnit(rows, tables, defined, newlyDefined);
      long before = channel.position();
      try {
        writeFully(ByteBuffer.wrap(unit));
        channel.force(false);
      } catch (IOException e) {
        try {
          rollBack(before);
        } catch (IOException truncating) {
          try {
            channel.write(ByteBuffer.wrap(new byte[] {0}), before);
            channel.force(false);
          } catch (IOException overwriting) {
            truncating.addSuppressed(overwriting);
            Tainted tainted = new Tainted(file, before, e);
            tainted.addSuppressed(truncating);
            throw tainted;
          }
        }
        throw e;
      }
      defined.addAll(newlyDefined);
    }

    private void rollBack(long to) throws IOException {
      channel.truncate(to);
      channel.position(to);
      channel.force(false);
    }

    private void writeFully(ByteBuffer buffer) throws IOException {
      while (buffer.hasRemaining()) {
        channel.write(buffer);
      }
    }

    /** Forces the file's content to the storage device and closes it. */
    @Override
    public void close() throws IOException {
      try (channel) {
        channel.force(false);
      }
    }
  }
}
