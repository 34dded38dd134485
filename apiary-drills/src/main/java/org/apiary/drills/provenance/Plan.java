package org.apiary.drills.provenance;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What the functions of {@link ProvDrillApp} do, spelled out by the caller: a plan is one segment per function of the
 * graph, in the order they run, separated by {@code |}. A segment is {@code tag@key;op;op...}: the tag every row the
 * function writes carries, the partition key of a local function ({@code *} for a global one), and its operations,
 * each {@code I,p,k,v} (insert), {@code U,p,k,v} (update), {@code D,p,k} (delete) or {@code R,p,k} (read). A function
 * runs the first segment and hands the rest on. The functions derive everything they write from the plan, so whoever
 * wrote the plan knows every row each execution reads and writes without asking Apiary.
 */
public final class Plan {
  /** An operation's kind. */
  public enum Kind {
    INSERT('I'), UPDATE('U'), DELETE('D'), READ('R');

    private final char letter;

    Kind(char letter) {
      this.letter = letter;
    }

    static Kind of(char letter) {
      for (Kind k : values()) {
        if (k.letter == letter) {
          return k;
        }
      }
      throw new IllegalArgumentException("no operation '" + letter + "'");
    }
  }

  /**
   * One operation on the row {@code (p, k)}.
   *
   * @param v the value written (insert and update), 0 otherwise
   */
  public record Op(Kind kind, long p, long k, long v) {
    @Override
    public String toString() {
      return kind.letter + "," + p + "," + k + (kind == Kind.INSERT || kind == Kind.UPDATE ? "," + v : "");
    }
  }

  /**
   * One function's part of a plan.
   *
   * @param key the partition key of a local function, {@code null} for a global one
   */
  public record Segment(String tag, Long key, List<Op> ops) {
    public Segment {
      Objects.requireNonNull(tag, "tag");
      if (tag.isEmpty() || !tag.matches("[A-Za-z0-9._-]+")) {
        throw new IllegalArgumentException("a tag is letters, digits, '.', '_' and '-', not '" + tag + "'");
      }
      ops = List.copyOf(ops);
    }

    @Override
    public String toString() {
      StringBuilder b = new StringBuilder(tag).append('@').append(key == null ? "*" : key.toString());
      ops.forEach(op -> b.append(';').append(op));
      return b.toString();
    }
  }

  private Plan() {}

  /** The plan of segments, in the order their functions run. */
  public static String encode(List<Segment> segments) {
    return String.join("|", segments.stream().map(Segment::toString).toList());
  }

  /** The segments of a plan. */
  public static List<Segment> decode(String plan) {
    List<Segment> segments = new ArrayList<>();
    for (String text : plan.split("\\|")) {
      String[] parts = text.split(";");
      int at = parts[0].indexOf('@');
      if (at < 0) {
        throw new IllegalArgumentException("segment '" + text + "' has no '@key'");
      }
      String key = parts[0].substring(at + 1);
      List<Op> ops = new ArrayList<>();
      for (int i = 1; i < parts.length; i++) {
        String[] f = parts[i].split(",");
        Kind kind = Kind.of(f[0].charAt(0));
        long v = kind == Kind.INSERT || kind == Kind.UPDATE ? Long.parseLong(f[3]) : 0L;
        ops.add(new Op(kind, Long.parseLong(f[1]), Long.parseLong(f[2]), v));
      }
      segments.add(new Segment(parts[0].substring(0, at), key.equals("*") ? null : Long.parseLong(key), ops));
    }
    return segments;
  }

  /** The plan without its first segment, or {@code null} if it has only one. */
  public static String rest(String plan) {
    int bar = plan.indexOf('|');
    return bar < 0 ? null : plan.substring(bar + 1);
  }

  /** What a function returns for one row it read: {@code p:k=tag:v}, or {@code p:k=-} if there is no such row. */
  public static String readToken(long p, long k, String tag, Long v) {
    return p + ":" + k + "=" + (tag == null ? "-" : tag + ":" + v);
  }
}
