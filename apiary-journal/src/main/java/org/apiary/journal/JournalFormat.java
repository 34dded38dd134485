package org.apiary.journal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The journal's file format, version {@value #VERSION} (docs/journal-format.md says the same for readers in other
 * languages; this code reads versions {@value #OLDEST_READABLE_VERSION} to {@value #VERSION}). All integers are
 * big-endian.
 *
 * <p>A journal is a directory of segment files named {@code journal-<timeline, 16 hex digits>-<segment number, 8
 * digits>.log}. A timeline is the run of transaction IDs between two restores: a start that restores a snapshot and
 * replays begins a new one. Each segment starts with a {@value #HEADER_BYTES}-byte header:
 * <pre>
 *   magic "APJOURNL" (8) | version u16 | reserved u16 | timeline i64 | segment number i64 | first sequence i64 |
 *   CRC32C of the preceding 36 bytes (4)
 * </pre>
 * then frames, each {@code length i32 | CRC32C of the body i32 | body (length bytes)}. A body starts with its type:
 * <pre>
 *   GROUP  (1): type u8 | first sequence i64 | last sequence i64 | record count i32 | written at, ms since epoch i64
 *   RECORD (2): type u8 | sequence i64 | partition i32 | transaction ID i64 | unique ID i64 | catalog version i32 |
 *               result hash i64 |
 *               procedure (u16 length, UTF-8) | invocation ID (i16 length, -1 for none, UTF-8) |
 *               graph (i16 length, -1 for none, UTF-8) | graph version i32 |       (version 3 on)
 *               parameters (i32 length, bytes)
 * </pre>
 * The graph and its version (version 3) are those of the graph invocation the transaction ran for, as the frontend
 * that dispatched it knew them ({@link JournalRecord#NO_GRAPH_VERSION} where it ran for none, or where the caller
 * did not say); a version 1 or 2 record reads as having neither.
 * A RECORD with an empty procedure name is a <em>mark</em> (version 2): the multi-partition transaction whose
 * transaction ID it holds executed at this place in {@code partition}'s order. A cluster's nodes write them, since a
 * multi-partition transaction's own record is written only by the node that coordinated it.
 * The writer writes one GROUP frame before the records of each group it fsyncs together. After a crash only the last
 * group can be torn (a later group is written only after the one before it is on disk), which is how the reader
 * tells a torn tail from a damaged journal.
 */
public final class JournalFormat {
  /** The format version this code writes and reads. */
  public static final int VERSION = 3;
  /**
   * The oldest format version this code reads (version 1 has no marks; versions 1 and 2 have no graph and graph
   * version in records; otherwise the same).
   */
  public static final int OLDEST_READABLE_VERSION = 1;
  /** The first format version whose records hold the graph and its version. */
  static final int FIRST_VERSION_WITH_GRAPH = 3;
  /** The bytes of a segment's header. */
  public static final int HEADER_BYTES = 40;
  /** The bytes before each frame's body: its length and its checksum. */
  public static final int FRAME_PREFIX_BYTES = 8;
  /** The largest body a frame may declare; longer declared lengths are damage, not data. */
  public static final int MAX_BODY_BYTES = 64 << 20;
  static final byte GROUP = 1;
  static final byte RECORD = 2;
  static final int GROUP_BODY_BYTES = 1 + 8 + 8 + 4 + 8;
  private static final byte[] MAGIC = "APJOURNL".getBytes(StandardCharsets.US_ASCII);

  private JournalFormat() {}

  /** A segment's file name. */
  public static String segmentName(long timeline, long segment) {
    return String.format("journal-%016x-%08d.log", timeline, segment);
  }

  /** The header of a segment. */
  static byte[] header(long timeline, long segment, long firstSequence) {
    ByteBuffer b = ByteBuffer.allocate(HEADER_BYTES);
    b.put(MAGIC).putShort((short) VERSION).putShort((short) 0).putLong(timeline).putLong(segment)
        .putLong(firstSequence);
    b.putInt((int) crc(b.array(), 0, HEADER_BYTES - 4));
    return b.array();
  }

  /** A segment's header as read: its format version, timeline, number and first sequence. */
  record Header(int version, long timeline, long segment, long firstSequence) {}

  /** Parses a header, or explains in {@code IllegalArgumentException} why it is not one. */
  static Header parseHeader(byte[] h) {
    if (h.length < HEADER_BYTES) {
      throw new IllegalArgumentException("the header is cut short (" + h.length + " of " + HEADER_BYTES + " bytes)");
    }
    ByteBuffer b = ByteBuffer.wrap(h);
    byte[] magic = new byte[8];
    b.get(magic);
    if (!java.util.Arrays.equals(magic, MAGIC)) {
      throw new IllegalArgumentException("it does not start with the journal's magic bytes APJOURNL");
    }
    int version = b.getShort() & 0xffff;
    b.getShort();
    long timeline = b.getLong();
    long segment = b.getLong();
    long first = b.getLong();
    int stored = b.getInt();
    if (stored != (int) crc(h, 0, HEADER_BYTES - 4)) {
      throw new IllegalArgumentException("its header's checksum does not match");
    }
    if (version < OLDEST_READABLE_VERSION || version > VERSION) {
      throw new IllegalArgumentException("it is in journal format version " + version + "; this Apiary reads versions "
          + OLDEST_READABLE_VERSION + " to " + VERSION);
    }
    return new Header(version, timeline, segment, first);
  }

  /** Appends a GROUP frame to {@code out}. */
  static void writeGroup(GrowableBuffer out, long first, long last, int count, long writtenAtMillis) {
    int start = out.reserveFramePrefix();
    out.put(GROUP).putLong(first).putLong(last).putInt(count).putLong(writtenAtMillis);
    out.finishFrame(start);
  }

  /** Appends a RECORD frame to {@code out}. */
  static void writeRecord(GrowableBuffer out, long sequence, int partition, long txnId, long uniqueId,
                          int catalogVersion, long resultHash, String procedure, String invocationId, String graph,
                          int graphVersion, byte[] parameters) {
    int start = out.reserveFramePrefix();
    byte[] name = procedure.getBytes(StandardCharsets.UTF_8);
    byte[] id = invocationId == null ? null : invocationId.getBytes(StandardCharsets.UTF_8);
    byte[] graphName = graph == null ? null : graph.getBytes(StandardCharsets.UTF_8);
    if (name.length > 0xffff || (id != null && id.length > Short.MAX_VALUE)
        || (graphName != null && graphName.length > Short.MAX_VALUE)) {
      throw new IllegalArgumentException("a journal record's procedure name, invocation ID or graph name is too long");
    }
    out.put(RECORD).putLong(sequence).putInt(partition).putLong(txnId).putLong(uniqueId).putInt(catalogVersion)
        .putLong(resultHash)
        .putShort((short) name.length).put(name);
    putNullable(out, id);
    putNullable(out, graphName);
    out.putInt(graphVersion);
    out.putInt(parameters.length).put(parameters);
    out.finishFrame(start);
  }

  private static void putNullable(GrowableBuffer out, byte[] text) {
    if (text == null) {
      out.putShort((short) -1);
    } else {
      out.putShort((short) text.length).put(text);
    }
  }

  private static String getNullable(ByteBuffer b) {
    short length = b.getShort();
    if (length < 0) {
      return null;
    }
    byte[] bytes = new byte[length];
    b.get(bytes);
    return new String(bytes, StandardCharsets.UTF_8);
  }

  /**
   * Encodes records as consecutive RECORD frames (the form a segment holds them in, without groups): how a recovery
   * hands a batch of records to the database servers that replay them.
   */
  public static byte[] encodeRecords(List<JournalRecord> records) {
    GrowableBuffer out = new GrowableBuffer(256);
    for (JournalRecord r : records) {
      writeRecord(out, r.sequence(), r.partition(), r.txnId(), r.uniqueId(), r.catalogVersion(), r.resultHash(),
          r.procedure(), r.invocationId(), r.graph(), r.graphVersion(), r.parameters());
    }
    return java.util.Arrays.copyOf(out.readable().array(), out.size());
  }

  /** Decodes what {@link #encodeRecords} encoded; frames are checksummed, and damage is an {@code IllegalArgumentException}. */
  public static List<JournalRecord> decodeRecords(byte[] bytes) {
    List<JournalRecord> records = new java.util.ArrayList<>();
    ByteBuffer b = ByteBuffer.wrap(bytes);
    while (b.hasRemaining()) {
      if (b.remaining() < FRAME_PREFIX_BYTES) {
        throw new IllegalArgumentException("a record batch ends inside a frame's prefix");
      }
      int length = b.getInt();
      int crc = b.getInt();
      if (length < 1 || length > b.remaining()) {
        throw new IllegalArgumentException("a record batch holds a frame of " + length + " bytes where "
            + b.remaining() + " remain");
      }
      if ((int) crc(bytes, b.position(), length) != crc) {
        throw new IllegalArgumentException("a record in a batch fails its checksum");
      }
      if (!(decodeBody(bytes, b.position(), length, VERSION) instanceof JournalRecord r)) {
        throw new IllegalArgumentException("a record batch holds a frame that is not a record");
      }
      records.add(r);
      b.position(b.position() + length);
    }
    return records;
  }

  /** A GROUP frame's contents. */
  record Group(long first, long last, int count, long writtenAtMillis) {}

  /** Decodes a frame body of a segment in format {@code version}: a {@link Group} or a {@link JournalRecord}. */
  static Object decodeBody(byte[] body, int offset, int length, int version) {
    ByteBuffer b = ByteBuffer.wrap(body, offset, length);
    byte type = b.get();
    if (type == GROUP) {
      return new Group(b.getLong(), b.getLong(), b.getInt(), b.getLong());
    }
    if (type != RECORD) {
      throw new IllegalArgumentException("unknown frame type " + type);
    }
    long sequence = b.getLong();
    int partition = b.getInt();
    long txnId = b.getLong();
    long uniqueId = b.getLong();
    int catalogVersion = b.getInt();
    long resultHash = b.getLong();
    byte[] name = new byte[b.getShort() & 0xffff];
    b.get(name);
    String id = getNullable(b);
    String graph = null;
    int graphVersion = JournalRecord.NO_GRAPH_VERSION;
    if (version >= FIRST_VERSION_WITH_GRAPH) {
      graph = getNullable(b);
      graphVersion = b.getInt();
    }
    byte[] parameters = new byte[b.getInt()];
    b.get(parameters);
    if (b.hasRemaining()) {
      throw new IllegalArgumentException(b.remaining() + " bytes after the record's last field");
    }
    return new JournalRecord(sequence, partition, txnId, uniqueId, catalogVersion, resultHash,
        new String(name, StandardCharsets.UTF_8), id, graph, graphVersion, parameters);
  }

  static long crc(byte[] bytes, int offset, int length) {
    CRC32C c = new CRC32C();
    c.update(bytes, offset, length);
    return c.getValue();
  }

  /**
   * A short hash of a transaction's result (FNV-1a, 64 bits) for {@link JournalRecord#resultHash()}: stable across
   * JVMs and versions, unlike {@code Arrays.hashCode}.
   */
  public static long hash(byte[] bytes) {
    long h = 0xcbf29ce484222325L;
    for (byte x : bytes) {
      h ^= x & 0xff;
      h *= 0x100000001b3L;
    }
    return h;
  }
}
