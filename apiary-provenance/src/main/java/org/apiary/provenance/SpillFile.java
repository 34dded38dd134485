package org.apiary.provenance;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
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
import java.util.List;
import java.util.OptionalLong;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32;

/**
 * The spill file format: one file per segment, named {@code segment-<20-digit id>.spill}, ids increasing in offer
 * order. A file is the 8 ASCII bytes {@code APSPILL1} followed by records, each
 * <pre>
 *   int32 (big-endian) n, the payload's length in bytes
 *   n bytes of UTF-8 JSON: {"table": "name", "values": [v, ...]}
 *   int32 (big-endian) CRC-32 of the payload
 * </pre>
 * where each value {@code v} is JSON {@code null} or a pair {@code [tag, payload]}: {@code ["L", 1]} Long,
 * {@code ["I", 1]} Integer, {@code ["S", 1]} Short, {@code ["B", 1]} Byte, {@code ["D", "1.5"]} Double (its
 * {@code toString}, exact, NaN and infinities included), {@code ["N", "1.50"]} BigDecimal (exact, scale kept),
 * {@code ["V", "text"]} String, {@code ["X", "AAE="]} byte[] (base64), {@code ["T", "2024-03-01T12:00:00.123456789Z"]}
 * Instant (ISO-8601, nanoseconds kept).
 *
 * <p>A record cut short at the end of a file (the process stopped while appending) and anything after a record whose
 * checksum does not match are ignored with a warning.
 */
final class SpillFile {
  private static final System.Logger LOG = System.getLogger(SpillFile.class.getName());
  private static final byte[] MAGIC = "APSPILL1".getBytes(StandardCharsets.US_ASCII);
  private static final int MAX_RECORD_BYTES = 256 << 20;
  private static final Pattern NAME = Pattern.compile("segment-(\\d{20})\\.spill");
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final JsonFactory JSON = MAPPER.getFactory();

  private SpillFile() {}

  static Path path(Path directory, long id) {
    return directory.resolve(String.format("segment-%020d.spill", id));
  }

  /** The segment id a file name carries, or empty if the file is not a spill file. */
  static OptionalLong idOf(Path file) {
    Matcher m = NAME.matcher(file.getFileName().toString());
    return m.matches() ? OptionalLong.of(Long.parseLong(m.group(1))) : OptionalLong.empty();
  }

  /** Appends one framed record for a row to {@code out}. */
  static void encode(ProvenanceRow row, ByteArrayOutputStream out) {
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
    byte[] bytes = payload.toByteArray();
    CRC32 crc = new CRC32();
    crc.update(bytes);
    writeInt(out, bytes.length);
    out.writeBytes(bytes);
    writeInt(out, (int) crc.getValue());
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

  private static ProvenanceRow decode(byte[] payload) throws IOException {
    JsonNode node = MAPPER.readTree(payload);
    List<Object> values = new ArrayList<>();
    for (JsonNode value : node.get("values")) {
      values.add(readValue(value));
    }
    return new ProvenanceRow(node.get("table").textValue(), values);
  }

  /** The rows of a spill file, in the order they were written. */
  static List<ProvenanceRow> read(Path file) throws IOException {
    List<ProvenanceRow> rows = new ArrayList<>();
    IOException[] failure = new IOException[1];
    scan(file, payload -> {
      if (failure[0] == null) {
        try {
          rows.add(decode(payload));
        } catch (IOException | RuntimeException e) {
          failure[0] = new IOException("record " + (rows.size() + 1) + " of spill file " + file
              + " passed its checksum but is not a row: " + e.getMessage(), e);
        }
      }
    });
    if (failure[0] != null) {
      throw failure[0];
    }
    return rows;
  }

  /** How many complete records a spill file holds. */
  static int count(Path file) throws IOException {
    return scan(file, payload -> { });
  }

  private static int scan(Path file, Consumer<byte[]> consumer) throws IOException {
    int records = 0;
    try (InputStream raw = Files.newInputStream(file);
         DataInputStream in = new DataInputStream(new BufferedInputStream(raw, 1 << 16))) {
      byte[] magic = in.readNBytes(MAGIC.length);
      if (magic.length < MAGIC.length) {
        return 0; // created, header not yet written: nothing in it
      }
      if (!Arrays.equals(magic, MAGIC)) {
        throw new IOException(file + " is not a provenance spill file (it does not start with APSPILL1)");
      }
      while (true) {
        byte[] lengthBytes = in.readNBytes(4);
        if (lengthBytes.length == 0) {
          return records;
        }
        try {
          if (lengthBytes.length < 4) {
            throw new EOFException();
          }
          int length = ByteBuffer.wrap(lengthBytes).getInt();
          if (length <= 0 || length > MAX_RECORD_BYTES) {
            LOG.log(System.Logger.Level.WARNING, "spill file {0}: record {1} has an impossible length {2}; "
                + "ignoring it and the rest of the file", file, records + 1, length);
            return records;
          }
          byte[] payload = new byte[length];
          in.readFully(payload);
          int expected = in.readInt();
          CRC32 crc = new CRC32();
          crc.update(payload);
          if ((int) crc.getValue() != expected) {
            LOG.log(System.Logger.Level.WARNING, "spill file {0}: record {1} fails its checksum; ignoring it and "
                + "the rest of the file", file, records + 1);
            return records;
          }
          consumer.accept(payload);
          records++;
        } catch (EOFException e) {
          LOG.log(System.Logger.Level.WARNING, "spill file {0}: record {1} is incomplete (the process stopped "
              + "while writing it); ignoring it", file, records + 1);
          return records;
        }
      }
    }
  }

  private static void writeInt(ByteArrayOutputStream out, int value) {
    out.write(value >>> 24);
    out.write(value >>> 16);
    out.write(value >>> 8);
    out.write(value);
  }

  /** Appends framed records to a new spill file. Not thread-safe. */
  static final class Writer implements Closeable {
    private final Path file;
    private final FileChannel channel;

    private Writer(Path file, FileChannel channel) {
      this.file = file;
      this.channel = channel;
    }

    /** Creates the file (it must not exist) and writes its header. */
    static Writer create(Path file) throws IOException {
      FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
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

    /**
     * Appends encoded records. If the write fails the file is cut back to where it was, so it never holds part of
     * what this call wrote.
     */
    void append(byte[] records) throws IOException {
      long before = channel.position();
      try {
        writeFully(ByteBuffer.wrap(records));
      } catch (IOException e) {
        try {
          channel.truncate(before);
          channel.position(before);
        } catch (IOException truncating) {
          e.addSuppressed(truncating);
        }
        throw e;
      }
    }

    private void writeFully(ByteBuffer buffer) throws IOException {
      while (buffer.hasRemaining()) {
        channel.write(buffer);
      }
    }

    /** Forces what was appended so far to the storage device. */
    void force() throws IOException {
      channel.force(false);
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
