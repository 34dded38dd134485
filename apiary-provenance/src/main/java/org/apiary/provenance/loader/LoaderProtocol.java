package org.apiary.provenance.loader;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apiary.provenance.ColumnType;
import org.apiary.provenance.ProvenanceColumn;
import org.apiary.provenance.ProvenanceRow;
import org.apiary.provenance.ProvenanceTable;

/**
 * The loader's frame protocol over TCP. Every frame is a 4-byte big-endian length and that many bytes, the first of
 * which is the frame's type:
 * <ul>
 *   <li>{@code H} hello, client first: {@link #MAGIC}, a 2-byte version ({@link #VERSION}), the client's identity
 *       (a string: the host and spill directory of the spooler it loads for, the same across its reconnections), and
 *       the loader's shared secret (a string, empty for none);</li>
 *   <li>{@code W} welcome, the loader's answer: a string describing the sink (no password);</li>
 *   <li>{@code L} load: the table's definition, a byte 1 if the rows are fresh (never loaded by any attempt), the
 *       row count, then each row's values in column order, each a tag byte and its bytes;</li>
 *   <li>{@code A} acknowledgment, for each load once its transaction committed: a 4-byte count of rows added, or
 *       -1 if the database does not say;</li>
 *   <li>{@code E} error: a byte 1 if the loader closes the connection after it, the SQL state (empty if none) and
 *       the message.</li>
 * </ul>
 * Strings are a 4-byte length and UTF-8. A load's rows are one transaction of the sink; a client splits a larger
 * batch into frames of at most {@link #TARGET_FRAME_BYTES}, and the loader refuses frames over
 * {@link #MAX_FRAME_BYTES} (it reads the length first and answers before reading the rest).
 */
public final class LoaderProtocol {
  /** The bytes a hello starts with. */
  public static final byte[] MAGIC = "APIARY-LOADER".getBytes(StandardCharsets.US_ASCII);
  /** The protocol's version; the loader refuses others. */
  public static final int VERSION = 1;
  /** The largest frame the loader reads: 64 MiB. */
  public static final int MAX_FRAME_BYTES = 64 << 20;
  /** The largest hello the loader reads. */
  public static final int MAX_HELLO_BYTES = 4096;
  /** The size a client stops adding rows to a load frame at (a row may take it past this, never past the maximum). */
  public static final int TARGET_FRAME_BYTES = 8 << 20;
  /** The loader's default port. */
  public static final int DEFAULT_PORT = 21720;

  static final byte HELLO = 'H';
  static final byte WELCOME = 'W';
  static final byte LOAD = 'L';
  static final byte ACK = 'A';
  static final byte ERROR = 'E';

  private LoaderProtocol() {}

  /**
   * Parses {@code host:port} ({@code [v6-address]:port} for an IPv6 address), unresolved.
   *
   * @throws IllegalArgumentException if it is not one, saying why
   */
  public static InetSocketAddress parseAddress(String address) {
    if (address == null || address.isBlank()) {
      throw new IllegalArgumentException("a loader address is host:port, not empty");
    }
    String text = address.strip();
    int colon = text.lastIndexOf(':');
    if (colon <= 0 || colon == text.length() - 1) {
      throw new IllegalArgumentException("a loader address is host:port, not '" + address + "'");
    }
    String host = text.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    } else if (host.contains(":")) {
      throw new IllegalArgumentException("write an IPv6 loader address in brackets, [address]:port, not '"
          + address + "'");
    }
    int port;
    try {
      port = Integer.parseInt(text.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("the port of loader address '" + address + "' is not a number");
    }
    if (port < 0 || port > 65535 || host.isEmpty()) {
      throw new IllegalArgumentException("a loader address is host:port with a port from 0 to 65535, not '"
          + address + "'");
    }
    return InetSocketAddress.createUnresolved(host, port);
  }

  /** {@code host:port} of an address, as {@link #parseAddress} reads it. */
  public static String format(InetSocketAddress address) {
    String host = address.getHostString();
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + address.getPort();
  }

  // ---- writing

  /** A growable big-endian frame, its length filled in by {@link #finish}. */
  static final class FrameWriter {
    private byte[] bytes = new byte[256];
    private int length;

    FrameWriter(byte type) {
      length = 4;
      put(type);
    }

    private void ensure(int more) {
      if ((long) length + more > bytes.length) {
        long wanted = Math.max((long) bytes.length * 2, (long) length + more);
        if (wanted > Integer.MAX_VALUE - 8) {
          throw new IllegalArgumentException("a loader frame would exceed 2 GiB");
        }
        bytes = Arrays.copyOf(bytes, (int) wanted);
      }
    }

    int length() {
      return length;
    }

    FrameWriter put(byte value) {
      ensure(1);
      bytes[length++] = value;
      return this;
    }

    FrameWriter put(byte[] value) {
      ensure(value.length);
      System.arraycopy(value, 0, bytes, length, value.length);
      length += value.length;
      return this;
    }

    FrameWriter putShort(int value) {
      ensure(2);
      bytes[length++] = (byte) (value >>> 8);
      bytes[length++] = (byte) value;
      return this;
    }

    FrameWriter putInt(int value) {
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

    FrameWriter putLong(long value) {
      return putInt((int) (value >>> 32)).putInt((int) value);
    }

    FrameWriter putString(String value) {
      byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
      return putInt(utf8.length).put(utf8);
    }

    /** Cuts the frame back to {@code length} bytes (a row that did not fit). */
    void truncate(int to) {
      length = to;
    }

    /** Writes the frame to {@code out} and flushes it. */
    void writeTo(OutputStream out) throws IOException {
      putInt(0, length - 4);
      out.write(bytes, 0, length);
      out.flush();
    }
  }

  static FrameWriter hello(String identity, String secret) {
    return new FrameWriter(HELLO).put(MAGIC).putShort(VERSION).putString(identity)
        .putString(secret == null ? "" : secret);
  }

  /** A hello decoded: who the client is, and the secret it presents (empty for none). */
  record Hello(String identity, String secret) {
    @Override
    public String toString() {
      return "Hello[" + identity + "]"; // never the secret
    }
  }

  static FrameWriter error(boolean fatal, String sqlState, String message) {
    return new FrameWriter(ERROR).put((byte) (fatal ? 1 : 0)).putString(sqlState == null ? "" : sqlState)
        .putString(message);
  }

  /** Starts a load frame: the table and the flag; rows follow after {@link #rowCountAt}. */
  static FrameWriter load(ProvenanceTable table, boolean fresh) {
    FrameWriter out = new FrameWriter(LOAD);
    out.putString(table.name()).putShort(table.columns().size());
    for (ProvenanceColumn column : table.columns()) {
      out.putString(column.name()).put((byte) column.type().ordinal());
    }
    out.putShort(table.key().size());
    table.key().forEach(out::putString);
    out.putShort(table.recordKey().size());
    table.recordKey().forEach(out::putString);
    out.put((byte) (fresh ? 1 : 0));
    out.putInt(0); // the row count, filled in when the frame is complete
    return out;
  }

  /** Writes one row's values. */
  static void putRow(FrameWriter out, ProvenanceRow row) {
    for (Object value : row.values()) {
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
        out.put((byte) 'N').putInt(v.scale()).putInt(unscaled.length).put(unscaled);
      } else if (value instanceof String v) {
        out.put((byte) 'V').putString(v);
      } else if (value instanceof byte[] v) {
        out.put((byte) 'X').putInt(v.length).put(v);
      } else if (value instanceof Instant v) {
        out.put((byte) 'T').putLong(v.getEpochSecond()).putInt(v.getNano());
      } else {
        throw new IllegalArgumentException("cannot send a value of type " + value.getClass().getName()
            + " of table " + row.table() + " to the loader");
      }
    }
  }

  // ---- reading

  /** A frame read whole: its type and the rest of its bytes. */
  record Frame(byte type, ByteBuffer body) {
    /** The frame's length, as its budget counted it. */
    int bytes() {
      return body.capacity() + 1;
    }
  }

  /** A frame that cannot be read as the protocol says: the loader answers it with an error and closes. */
  static final class MalformedFrameException extends Exception {
    MalformedFrameException(String message) {
      super(message);
    }
  }

  /** Bounds the reads of one frame: called before each read from the socket, it sets its timeout to the time left. */
  @FunctionalInterface
  interface ReadTimer {
    /** @throws java.net.SocketTimeoutException if no time is left */
    void beforeRead() throws IOException;

    /** For a socket whose own timeout bounds each read (a client waiting for an answer). */
    ReadTimer SOCKET_TIMEOUT = () -> {};
  }

  /**
   * Reads one frame of at most {@code maxBytes}; null at a clean end of stream (before a frame's first byte). The
   * frame's bytes are taken from {@code budget} before they are read; the caller gives them back
   * ({@link ByteBudget#release} of {@link Frame#bytes()}) once it is done with the frame and what it decoded.
   *
   * @throws MalformedFrameException if the length is not positive or exceeds {@code maxBytes} (nothing more is read)
   * @throws EOFException if the stream ends inside a frame
   */
  static Frame readFrame(DataInputStream in, int maxBytes, ByteBudget budget, ReadTimer timer)
      throws IOException, MalformedFrameException {
    timer.beforeRead();
    int first = in.read();
    if (first < 0) {
      return null;
    }
    byte[] header = new byte[3];
    readFully(in, header, timer);
    int length = (first << 24) | ((header[0] & 0xFF) << 16) | ((header[1] & 0xFF) << 8) | (header[2] & 0xFF);
    if (length <= 0 || length > maxBytes) {
      throw new MalformedFrameException("a frame of " + Integer.toUnsignedString(length) + " bytes: frames are 1 to "
          + maxBytes + " bytes");
    }
    budget.acquire(length);
    boolean read = false;
    try {
      byte[] bytes = new byte[length];
      readFully(in, bytes, timer);
      read = true;
      return new Frame(bytes[0], ByteBuffer.wrap(bytes, 1, length - 1).slice());
    } finally {
      if (!read) {
        budget.release(length);
      }
    }
  }

  private static void readFully(DataInputStream in, byte[] bytes, ReadTimer timer) throws IOException {
    for (int done = 0; done < bytes.length; ) {
      timer.beforeRead();
      int n = in.read(bytes, done, Math.min(bytes.length - done, 1 << 16));
      if (n < 0) {
        throw new EOFException("the connection ended inside a frame");
      }
      done += n;
    }
  }

  /** The bytes of frames held in memory at once, bounded so that many large frames cannot exhaust the heap. */
  interface ByteBudget {
    void acquire(int bytes) throws IOException;

    void release(int bytes);

    ByteBudget NONE = new ByteBudget() {
      @Override
      public void acquire(int bytes) {}

      @Override
      public void release(int bytes) {}
    };
  }

  static String readString(ByteBuffer in) throws MalformedFrameException {
    int length = in.getInt();
    if (length < 0 || length > in.remaining()) {
      throw new MalformedFrameException("a string of " + length + " bytes where " + in.remaining() + " remain");
    }
    String text = new String(in.array(), in.arrayOffset() + in.position(), length, StandardCharsets.UTF_8);
    in.position(in.position() + length);
    return text;
  }

  private static byte[] readBytes(ByteBuffer in) throws MalformedFrameException {
    int length = in.getInt();
    if (length < 0 || length > in.remaining()) {
      throw new MalformedFrameException("a value of " + length + " bytes where " + in.remaining() + " remain");
    }
    byte[] bytes = new byte[length];
    in.get(bytes);
    return bytes;
  }

  /** The client's identity and secret from a hello. */
  static Hello readHello(Frame frame) throws MalformedFrameException {
    if (frame.type() != HELLO) {
      throw new MalformedFrameException("the first frame is not a hello (type byte " + (frame.type() & 0xFF)
          + "): not an Apiary loader client");
    }
    ByteBuffer in = frame.body();
    try {
      byte[] magic = new byte[MAGIC.length];
      in.get(magic);
      if (!Arrays.equals(magic, MAGIC)) {
        throw new MalformedFrameException("the hello does not start with APIARY-LOADER: not an Apiary loader client");
      }
      int version = in.getShort() & 0xFFFF;
      if (version != VERSION) {
        throw new MalformedFrameException("protocol version " + version + " is not this loader's (" + VERSION
            + "): run the same Apiary version on the database servers and the loader");
      }
      String identity = readString(in);
      String secret = readString(in);
      if (in.hasRemaining() || identity.isBlank()) {
        throw new MalformedFrameException("a malformed hello");
      }
      return new Hello(identity, secret);
    } catch (BufferUnderflowException e) {
      throw new MalformedFrameException("a hello cut short");
    }
  }

  /** A load frame decoded: the table, whether the rows are fresh, and the rows. */
  record Load(ProvenanceTable table, boolean fresh, List<ProvenanceRow> rows) {}

  /** Decodes a load frame; the table and rows are checked against each other by the sink that loads them. */
  static Load readLoad(Frame frame) throws MalformedFrameException {
    ByteBuffer in = frame.body();
    try {
      String name = readString(in);
      int columnCount = in.getShort() & 0xFFFF;
      List<ProvenanceColumn> columns = new ArrayList<>(columnCount);
      ColumnType[] types = ColumnType.values();
      for (int i = 0; i < columnCount; i++) {
        String column = readString(in);
        int type = in.get() & 0xFF;
        if (type >= types.length) {
          throw new MalformedFrameException("column " + column + " of " + name + " has an unknown type " + type);
        }
        columns.add(new ProvenanceColumn(column, types[type]));
      }
      List<String> key = readNames(in);
      List<String> recordKey = readNames(in);
      ProvenanceTable table;
      try {
        table = new ProvenanceTable(name, columns, key, recordKey);
      } catch (IllegalArgumentException e) {
        throw new MalformedFrameException("a malformed table definition: " + e.getMessage());
      }
      boolean fresh = in.get() != 0;
      int rowCount = in.getInt();
      // Every value takes at least its tag byte: a count the frame cannot hold is refused before allocating.
      if (rowCount < 0 || (long) rowCount * Math.max(1, columnCount) > in.remaining()) {
        throw new MalformedFrameException(rowCount + " rows of " + columnCount + " values cannot fit in the "
            + in.remaining() + " bytes left of the frame");
      }
      List<ProvenanceRow> rows = new ArrayList<>(rowCount);
      Object[] values = new Object[columnCount];
      for (int r = 0; r < rowCount; r++) {
        for (int i = 0; i < columnCount; i++) {
          values[i] = readValue(in, name);
        }
        rows.add(new ProvenanceRow(name, Arrays.asList(values)));
      }
      if (in.hasRemaining()) {
        throw new MalformedFrameException("a load frame has " + in.remaining() + " bytes after its last row");
      }
      return new Load(table, fresh, rows);
    } catch (BufferUnderflowException e) {
      throw new MalformedFrameException("a load frame cut short");
    }
  }

  private static List<String> readNames(ByteBuffer in) throws MalformedFrameException {
    int count = in.getShort() & 0xFFFF;
    if (count > in.remaining() / 4) {
      throw new MalformedFrameException(count + " names cannot fit in the frame");
    }
    List<String> names = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      names.add(readString(in));
    }
    return names;
  }

  private static Object readValue(ByteBuffer in, String table) throws MalformedFrameException {
    byte tag = in.get();
    return switch (tag) {
      case 0 -> null;
      case 'L' -> in.getLong();
      case 'I' -> in.getInt();
      case 'S' -> in.getShort();
      case 'B' -> in.get();
      case 'D' -> Double.longBitsToDouble(in.getLong());
      case 'N' -> {
        int scale = in.getInt();
        byte[] unscaled = readBytes(in);
        if (unscaled.length == 0) {
          throw new MalformedFrameException("a decimal of table " + table + " without digits");
        }
        yield new BigDecimal(new BigInteger(unscaled), scale);
      }
      case 'V' -> readString(in);
      case 'X' -> readBytes(in);
      case 'T' -> {
        long seconds = in.getLong();
        int nanos = in.getInt();
        try {
          yield Instant.ofEpochSecond(seconds, nanos);
        } catch (java.time.DateTimeException | ArithmeticException e) {
          throw new MalformedFrameException("a timestamp of table " + table + " out of range");
        }
      }
      default -> throw new MalformedFrameException("unknown value tag " + (tag & 0xFF) + " in a row of " + table);
    };
  }
}
