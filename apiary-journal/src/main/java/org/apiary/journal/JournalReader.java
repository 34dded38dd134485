package org.apiary.journal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Reads a journal directory: checks every segment of every timeline and finds where each timeline's whole records
 * end. A torn tail (a partial or damaged last group, which a crash can leave since that group was never fsynced) is
 * cut and reported; damage anywhere else stops the read with {@link JournalCorruptException} naming the file and
 * offset, unless the caller accepts losing what follows it.
 */
public final class JournalReader {
  /**
   * What one timeline holds.
   *
   * @param firstSequence the first record's sequence, or -1 if the timeline holds none
   * @param lastSequence the last whole record's sequence, or -1
   * @param records how many whole records it holds
   * @param notes what was cut or dropped, one sentence each (empty when the journal was whole)
   * @param lastGroupDeclared the last sequence the last group read declared, or -1: more than {@code lastSequence}
   *     when that group's end never reached the disk whole (it was being written when the server stopped)
   */
  public record Timeline(long timeline, List<Path> segments, long firstSequence, long lastSequence, long records,
                         List<String> notes, List<Long> validBytes, long lastGroupDeclared) {}

  private JournalReader() {}

  /**
   * Scans {@code dir}.
   *
   * @param acceptLoss if true, damage before the tail ends its timeline there (and says what was dropped) instead
   *     of failing
   * @return every timeline found, by timeline
   * @throws JournalCorruptException on damage before a timeline's tail, unless {@code acceptLoss}
   */
  public static Map<Long, Timeline> scan(Path dir, boolean acceptLoss) {
    Map<Long, List<JournalDirectory.SegmentName>> byTimeline = new LinkedHashMap<>();
    for (JournalDirectory.SegmentName s : JournalDirectory.list(dir)) {
      byTimeline.computeIfAbsent(s.timeline(), t -> new ArrayList<>()).add(s);
    }
    Map<Long, Timeline> result = new LinkedHashMap<>();
    byTimeline.forEach((t, segs) -> result.put(t, scanTimeline(t, segs, acceptLoss)));
    return result;
  }

  /**
   * Hands every whole record of {@code timeline} (as {@link #scan} found it) to {@code consumer}, in sequence order.
   */
  public static void forEach(Timeline timeline, Consumer<JournalRecord> consumer) {
    List<Path> segments = timeline.segments();
    for (int i = 0; i < segments.size(); i++) {
      byte[] bytes = read(segments.get(i));
      int version = JournalFormat.parseHeader(bytes).version();
      long end = timeline.validBytes().get(i);
      int at = JournalFormat.HEADER_BYTES;
      while (at < end) {
        ByteBuffer b = ByteBuffer.wrap(bytes, at, JournalFormat.FRAME_PREFIX_BYTES);
        int length = b.getInt();
        Object frame = JournalFormat.decodeBody(bytes, at + JournalFormat.FRAME_PREFIX_BYTES, length, version);
        if (frame instanceof JournalRecord r) {
          consumer.accept(r);
        }
        at += JournalFormat.FRAME_PREFIX_BYTES + length;
      }
    }
  }

  private static Timeline scanTimeline(long timeline, List<JournalDirectory.SegmentName> segs, boolean acceptLoss) {
    List<Path> files = new ArrayList<>();
    List<Long> valid = new ArrayList<>();
    List<String> notes = new ArrayList<>();
    long first = -1;
    long last = -1;
    long count = 0;
    long groupDeclared = -1;
    for (int i = 0; i < segs.size(); i++) {
      JournalDirectory.SegmentName s = segs.get(i);
      boolean lastSegment = i == segs.size() - 1;
      if (i > 0 && s.segment() != segs.get(i - 1).segment() + 1) {
        String problem = "segment " + (segs.get(i - 1).segment() + 1) + " of timeline "
            + Long.toHexString(timeline) + " is missing (found " + s.file().getFileName() + " after "
            + segs.get(i - 1).file().getFileName() + ")";
        if (!acceptLoss) {
          throw new JournalCorruptException(problem + "; start with --accept-journal-loss to recover from what "
              + "precedes it", s.file(), 0);
        }
        notes.add(problem + ": dropped it and everything after it");
        break;
      }
      byte[] bytes = read(s.file());
      JournalFormat.Header header;
      try {
        header = JournalFormat.parseHeader(bytes);
      } catch (IllegalArgumentException e) {
        if (lastSegment && bytes.length < JournalFormat.HEADER_BYTES) {
          // A segment created just before a crash: its header was never fsynced, so no record in it was durable.
          notes.add("cut the torn tail of timeline " + Long.toHexString(timeline) + ": " + s.file().getFileName()
              + " holds only " + bytes.length + " bytes of its header");
          files.add(s.file());
          valid.add((long) JournalFormat.HEADER_BYTES);
          break;
        }
        String problem = s.file() + " is not a journal segment: " + e.getMessage();
        if (!acceptLoss) {
          throw new JournalCorruptException(problem, s.file(), 0);
        }
        notes.add(problem + ": dropped it and everything after it");
        break;
      }
      if (last >= 0 && header.firstSequence() != last + 1) {
        String problem = s.file().getFileName() + " starts at record " + header.firstSequence() + " but the segment "
            + "before it ends at " + last;
        if (!acceptLoss) {
          throw new JournalCorruptException(problem, s.file(), 0);
        }
        notes.add(problem + ": dropped it and everything after it");
        break;
      }
      Segment seg = scanSegment(s.file(), bytes, header.version(), lastSegment, header.firstSequence(), acceptLoss,
          notes);
      files.add(s.file());
      valid.add(seg.validEnd);
      if (seg.groupLast >= 0) {
        groupDeclared = seg.groupLast;
      }
      if (seg.records > 0) {
        if (first < 0) {
          first = seg.first;
        }
        last = seg.last;
        count += seg.records;
      }
      if (seg.stopped) {
        break;
      }
    }
    return new Timeline(timeline, List.copyOf(files), first, last, count, List.copyOf(notes), List.copyOf(valid),
        groupDeclared);
  }

  private static final class Segment {
    long validEnd;
    long first = -1;
    long last = -1;
    long records;
    long groupLast = -1;
    boolean stopped;
  }

  private static Segment scanSegment(Path file, byte[] bytes, int version, boolean lastSegment, long expectedFirst,
                                     boolean acceptLoss, List<String> notes) {
    Segment seg = new Segment();
    int at = JournalFormat.HEADER_BYTES;
    long expected = expectedFirst;
    long groupLast = -1; // the last sequence of the group being read, -1 if unknown
    long groupRemaining = 0; // records of that group not read yet
    while (at < bytes.length) {
      Object frame = frameAt(bytes, at, version);
      String problem = null;
      if (frame == null) {
        problem = "a damaged frame";
      } else if (frame instanceof JournalFormat.Group g) {
        if (g.first() != expected) {
          problem = "a group starting at record " + g.first() + " where record " + expected + " was expected";
        } else {
          groupLast = g.last();
          groupRemaining = g.count();
          seg.groupLast = groupLast;
        }
      } else if (frame instanceof JournalRecord r && r.sequence() != expected) {
        problem = "record " + r.sequence() + " where record " + expected + " was expected";
      }
      if (problem != null) {
        // Damage where a group's records are done is the next group's header: that group's range is unknown.
        boolean torn = lastSegment && onlyTheSameGroupFollows(bytes, version, at + 1,
            groupRemaining > 0 ? groupLast : -1);
        if (torn) {
          notes.add("cut the torn tail of " + file.getFileName() + " at offset " + at + " (" + problem + " in the last "
              + "group written, whose fsync had not returned; unless the disk acknowledged what it did not store, none "
              + "of them was acknowledged): " + (bytes.length - at) + " bytes dropped" + (groupRemaining > 0 ? "; that group declared records through " + groupLast + ", of "
              + "which " + groupRemaining + " were not whole" : ""));
          seg.validEnd = at;
          seg.stopped = true;
          return seg;
        }
        if (!acceptLoss) {
          throw new JournalCorruptException(file + " is damaged at offset " + at + ": " + problem + ", and whole "
              + "records follow it, so this is not a torn tail; start with --accept-journal-loss to recover from what "
              + "precedes it", file, at);
        }
        notes.add(file + " is damaged at offset " + at + " (" + problem + "): dropped it and everything after it "
            + "(" + (bytes.length - at) + " bytes of this segment, and any later segment)");
        seg.validEnd = at;
        seg.stopped = true;
        return seg;
      }
      int length = ByteBuffer.wrap(bytes, at, 4).getInt();
      if (frame instanceof JournalRecord r) {
        if (seg.first < 0) {
          seg.first = r.sequence();
        }
        seg.last = r.sequence();
        seg.records++;
        groupRemaining--;
        expected = r.sequence() + 1;
      }
      at += JournalFormat.FRAME_PREFIX_BYTES + length;
    }
    seg.validEnd = at;
    return seg;
  }

  /**
   * Whether every whole frame after a damaged one could belong to the same (last, unsynced) group: no GROUP frame (a
   * later group is written only after this one was fsynced) and no record past the group's last sequence.
   */
  private static boolean onlyTheSameGroupFollows(byte[] bytes, int version, int from, long groupLast) {
    for (int at = from; at + JournalFormat.FRAME_PREFIX_BYTES <= bytes.length; at++) {
      Object frame = frameAt(bytes, at, version);
      if (frame instanceof JournalFormat.Group) {
        return false;
      }
      if (frame instanceof JournalRecord r && groupLast >= 0 && r.sequence() > groupLast) {
        return false;
      }
    }
    return true;
  }

  /** The frame at {@code at} if one whole, checksummed frame is there, else {@code null}. */
  private static Object frameAt(byte[] bytes, int at, int version) {
    if (at + JournalFormat.FRAME_PREFIX_BYTES > bytes.length) {
      return null;
    }
    ByteBuffer b = ByteBuffer.wrap(bytes, at, JournalFormat.FRAME_PREFIX_BYTES);
    int length = b.getInt();
    int crc = b.getInt();
    if (length < 1 || length > JournalFormat.MAX_BODY_BYTES
        || at + JournalFormat.FRAME_PREFIX_BYTES + (long) length > bytes.length) {
      return null;
    }
    int body = at + JournalFormat.FRAME_PREFIX_BYTES;
    if ((int) JournalFormat.crc(bytes, body, length) != crc) {
      return null;
    }
    try {
      return JournalFormat.decodeBody(bytes, body, length, version);
    } catch (RuntimeException e) {
      return null; // a checksum that matches by chance over bytes that are not a frame
    }
  }

  private static byte[] read(Path file) {
    try {
      return Files.readAllBytes(file);
    } catch (IOException e) {
      throw new JournalException("cannot read the journal segment " + file + ": " + JournalDirectory.describe(e), e);
    }
  }
}
