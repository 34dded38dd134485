package org.apiary.provenance;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
 * order. A file is the 8 ASCII bytes {@code APSPILL3} followed by units. A unit holds the rows of one append (for a
 * durable offer, the rows of one function execution), and is read whole or not at all:
 * <pre>
 *   4 bytes  0xFF 'A' 'U' '2' (0xFF never occurs in UTF-8, so a reader can find the next unit after damage)
 *   int32    number of rows in the unit
 *   int32    n, the payload's length in bytes
 *   int32    CRC-32 of the 12 bytes above
 *   n bytes  payload: entries, each an int32 length and that many bytes: either 'D' and a table definition as UTF-8
 *            JSON {"define": {name, columns, key, recordKey}} (the first time a file holds rows of a table), or 'R'
 *            and a row: uint16 length and UTF-8 bytes of its table's name, uint16 number of values, the values
 *   int32    CRC-32 of the payload
 * </pre>
 * (all integers big-endian) where each value is a tag byte and its payload: {@code 0} null (nothing), {@code 'L'}
 * Long (int64), {@code 'I'} Integer (int32), {@code 'S'} Short (int16), {@code 'B'} Byte (one byte), {@code 'D'}
 * Double (its IEEE 754 bits, int64: exact, NaN and infinities included), {@code 'N'} BigDecimal (int32 scale, int32
 * length and the unscaled value's two's-complement bytes), {@code 'V'} String (int32 length and UTF-8 bytes),
 * {@code 'X'} byte[] (int32 length and the bytes), {@code 'T'} Instant (int64 epoch seconds, int32 nanoseconds).
 *
 * <p>Rows are binary because spilling happens when the loader falls behind (at saturation, or while the sink is
 * down), where each row's cost is paid twice, by the site that spills it and by the loader that reads it back.
 *
 * <p>A file carries the definitions of the tables its rows belong to, so it can be loaded by a spooler to which
 * nobody registers those tables. A unit cut short at the end of a file (the process stopped while appending it; its
 * append never returned) is ignored. A damaged unit (a checksum fails) is skipped, with a warning, and reading goes
 * on with the next intact unit: damage costs the rows written with it, never the rows after it. Files of the
 * earlier formats are still read: {@code APSPILL2} (the same units, every entry JSON: a definition, or a row
 * {"table": "name", "values": [v, ...]} with each value {@code null} or a pair {@code [tag, payload]} of the tags
 * above, numbers as JSON numbers, Double, BigDecimal and Instant as text, byte[] as base64) and {@code APSPILL1} (a
 * record per row, no definitions).
 */
final class SpillFile {
  private static final System.Logger LOG = System.getLogger(SpillFile.class.getName());
  private static final byte[] MAGIC = "APSPILL3".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] MAGIC_V2 = "APSPILL2".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] MAGIC_V1 = "APSPILL1".getBytes(StandardCharsets.US_ASCII);
  private static final int UNIT_MAGIC = 0xFF415532;
  private static final int UNIT_HEADER_BYTES = 16;
  private static final int MAX_RECORD_BYTES = 256 << 20;
  private static final int MAX_UNIT_BYTES = Integer.MAX_VALUE - 64;
  private static final Pattern NAME = Pattern.compile("segment-(\\d{20})\\.spill");
  private static final ObjectMapper MAPPER = new ObjectMapper();

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
  private static ByteBuffer encodeUnit(List<ProvenanceRow> rows, Map<String, ProvenanceTable> tables,
                                       Set<String> defined, Set<String> newlyDefined) {
    Bytes unit = new Bytes(UNIT_HEADER_BYTES + 4 + rows.size() * 128);
    unit.putInt(UNIT_MAGIC).putInt(rows.size()).putInt(0).putInt(0); // length and header CRC once known
    String lastTable = null;
    byte[] name = null;
    for (ProvenanceRow row : rows) {
      if (!defined.contains(row.table()) && newlyDefined.add(row.table())) {
        ProvenanceTable table = tables.get(row.table());
        if (table != null) {
          byte[] json = definition(table);
          unit.putInt(1 + json.length).put(DEFINITION).put(json, 0, json.length);
        }
      }
      int entry = unit.length();
      unit.putInt(0).put(ROW);
      if (!row.table().equals(lastTable)) { // a unit's rows are mostly of one table
        lastTable = row.table();
        name = lastTable.getBytes(StandardCharsets.UTF_8);
      }
      writeRow(unit, name, row);
      unit.putInt(entry, unit.length() - entry - 4);
    }
    int length = unit.length() - UNIT_HEADER_BYTES;
    unit.putInt(8, length);
    unit.putInt(12, crc(unit.array(), 0, 12));
    unit.putInt(crc(unit.array(), UNIT_HEADER_BYTES, length));
    return ByteBuffer.wrap(unit.array(), 0, unit.length());
  }

  private static final byte DEFINITION = 'D';
  private static final byte ROW = 'R';

  /** Writes a row; {@code name} is its table's name in UTF-8. */
  private static void writeRow(Bytes out, byte[] name, ProvenanceRow row) {
    List<Object> values = row.values();
    if (name.length > 0xFFFF || values.size() > 0xFFFF) {
      throw new IllegalArgumentException("cannot spill a row of " + row.table() + ": its table name or its "
          + values.size() + " values exceed 65,535");
    }
    out.putShort(name.length).put(name, 0, name.length).putShort(values.size());
    for (Object value : values) {
      if (value == null) {
        out.put((byte) 0);
      } else if (value instanceof Long v) {
        out.put((byte) 'L').putLong(v);
      } else if (value instanceof Integer v) {
        out.put((byte) 'I').putInt(v);
      } else if (value instanceof Short v) {
        out.put((byte) 'S').putShort(v);
      } else if (value instanceof Byte v) {
        out.put((byte) 'B').put(v);
      } else if (value instanceof Double v) {
        out.put((byte) 'D').putLong(Double.doubleToRawLongBits(v));
      } else if (value instanceof BigDecimal v) {
        byte[] unscaled = v.unscaledValue().toByteArray();
        out.put((byte) 'N').putInt(v.scale()).putInt(unscaled.length).put(unscaled, 0, unscaled.length);
      } else if (value instanceof String v) {
        byte[] utf8 = v.getBytes(StandardCharsets.UTF_8);
        out.put((byte) 'V').putInt(utf8.length).put(utf8, 0, utf8.length);
      } else if (value instanceof byte[] v) {
        out.put((byte) 'X').putInt(v.length).put(v, 0, v.length);
      } else if (value instanceof Instant v) {
        out.put((byte) 'T').putLong(v.getEpochSecond()).putInt(v.getNano());
      } else {
        throw new IllegalArgumentException("cannot spill a value of type " + value.getClass().getName());
      }
    }
  }

  /** Reads a row written by {@link #writeRow}: all of {@code in} from its position to its limit. */
  private static ProvenanceRow readRow(ByteBuffer in) {
    String table = utf8(in, in.getShort() & 0xFFFF);
    int count = in.getShort() & 0xFFFF;
    Object[] values = new Object[count];
    for (int i = 0; i < count; i++) {
      byte tag = in.get();
      values[i] = switch (tag) {
        case 0 -> null;
        case 'L' -> in.getLong();
        case 'I' -> in.getInt();
        case 'S' -> in.getShort();
        case 'B' -> in.get();
        case 'D' -> Double.longBitsToDouble(in.getLong());
        case 'N' -> {
          int scale = in.getInt();
          byte[] unscaled = new byte[length(in)];
          in.get(unscaled);
          yield new BigDecimal(new java.math.BigInteger(unscaled), scale);
        }
        case 'V' -> utf8(in, length(in));
        case 'X' -> {
          byte[] bytes = new byte[length(in)];
          in.get(bytes);
          yield bytes;
        }
        case 'T' -> Instant.ofEpochSecond(in.getLong(), in.getInt());
        default -> throw new IllegalArgumentException("unknown value tag " + tag + " in value " + (i + 1) + " of a row "
            + "of " + table);
      };
    }
    if (in.hasRemaining()) {
      throw new IllegalArgumentException("a row of " + table + " ends " + in.remaining() + " bytes before its "
          + "entry does");
    }
    return new ProvenanceRow(table, Arrays.asList(values));
  }

  private static int length(ByteBuffer in) {
    int length = in.getInt();
    if (length < 0 || length > in.remaining()) {
      throw new IllegalArgumentException("a value's length " + length + " exceeds its entry");
    }
    return length;
  }

  private static String utf8(ByteBuffer in, int length) {
    if (length > in.remaining()) {
      throw new IllegalArgumentException("a string's length " + length + " exceeds its entry");
    }
    String text = new String(in.array(), in.arrayOffset() + in.position(), length, StandardCharsets.UTF_8);
    in.position(in.position() + length);
    return text;
  }

  /** A growable big-endian byte array (ByteArrayOutputStream synchronizes every write). */
  private static final class Bytes {
    private byte[] bytes;
    private int length;

    Bytes(int capacity) {
      bytes = new byte[Math.max(capacity, 64)];
    }

    private void ensure(int more) {
      if (length + more > bytes.length) {
        long wanted = Math.max((long) bytes.length * 2, (long) length + more);
        if (wanted > MAX_UNIT_BYTES) {
          throw new IllegalArgumentException("a spill unit would exceed " + MAX_UNIT_BYTES + " bytes");
        }
        bytes = Arrays.copyOf(bytes, (int) wanted);
      }
    }

    Bytes put(byte value) {
      ensure(1);
      bytes[length++] = value;
      return this;
    }

    Bytes put(byte[] from, int offset, int count) {
      ensure(count);
      System.arraycopy(from, offset, bytes, length, count);
      length += count;
      return this;
    }

    Bytes putShort(int value) {
      ensure(2);
      bytes[length++] = (byte) (value >>> 8);
      bytes[length++] = (byte) value;
      return this;
    }

    Bytes putInt(int value) {
      ensure(4);
      putInt(length, value);
      length += 4;
      return this;
    }

    void putInt(int at, int value) {
      bytes[at] = (byte) (value >>> 24);
      bytes[at + 1] = (byte) (value >>> 16);
      bytes[at + 2] = (byte) (value >>> 8);
      bytes[at + 3] = (byte) value;
    }

    Bytes putLong(long value) {
      return putInt((int) (value >>> 32)).putInt((int) value);
    }

    byte[] array() {
      return bytes;
    }

    int length() {
      return length;
    }
  }

  private static byte[] definition(ProvenanceTable table) {
    try {
      return MAPPER.writeValueAsBytes(Map.of("define", table));
    } catch (IOException e) {
      throw new UncheckedIOException("encoding the definition of " + table.name() + " failed", e);
    }
  }

  private static int crc(byte[] bytes, int from, int length) {
    CRC32 crc = new CRC32();
    crc.update(bytes, from, length);
    return (int) crc.getValue();
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
    boolean binaryRows = Arrays.equals(magic, MAGIC);
    if (!binaryRows && !Arrays.equals(magic, MAGIC_V2)) {
      throw new IOException(file + " is not a provenance spill file (it does not start with APSPILL3 or an earlier "
          + "format's mark)");
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
        readPayload(file, bytes, payload, length, binaryRows, tables, rows);
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

  private static void readPayload(Path file, byte[] bytes, int from, int length, boolean binaryRows,
                                  Map<String, ProvenanceTable> tables, List<ProvenanceRow> rows) throws IOException {
    ByteBuffer in = ByteBuffer.wrap(bytes, from, length);
    int at = from;
    int end = from + length;
    while (at < end) {
      int entry = in.getInt(at);
      try {
        if (entry < (binaryRows ? 1 : 0) || entry > end - at - 4) {
          throw new IllegalArgumentException("its length " + entry + " does not fit the unit");
        }
        int body = at + 4;
        if (binaryRows && bytes[body] == ROW) {
          rows.add(readRow(ByteBuffer.wrap(bytes, body + 1, entry - 1)));
        } else if (binaryRows && bytes[body] != DEFINITION) {
          throw new IllegalArgumentException("unknown entry kind " + bytes[body]);
        } else {
          JsonNode node = binaryRows ? MAPPER.readTree(bytes, body + 1, entry - 1) : MAPPER.readTree(bytes, body, entry);
          if (node.has("define")) {
            ProvenanceTable table = MAPPER.treeToValue(node.get("define"), ProvenanceTable.class);
            tables.put(table.name(), table);
          } else if (binaryRows) {
            throw new IllegalArgumentException("a definition entry without a definition");
          } else {
            rows.add(decodeRow(node));
          }
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
      ByteBuffer unit = encodeUnit(rows, tables, defined, newlyDefined);
      long before = channel.position();
      try {
        writeFully(unit);
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
      ByteBuffer unit = encodeUnit(rows, tables, defined, newlyDefined);
      long before = channel.position();
      try {
        writeFully(unit);
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
