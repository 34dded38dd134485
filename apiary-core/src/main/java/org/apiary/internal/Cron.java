package org.apiary.internal;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.time.temporal.ChronoUnit;
import java.util.BitSet;
import java.util.Locale;
import java.util.Objects;

/**
 * A cron expression, evaluated in UTC or in the time zone it names: five fields ({@code minute hour day-of-month month day-of-week}) or six with
 * seconds first ({@code second minute hour day-of-month month day-of-week}). Each field is {@code *}, a value, a range
 * {@code a-b}, any of those with a step ({@code * / n}, {@code a-b/n}, {@code a/n}), or a comma-separated list of
 * them; months and days of the week may be named ({@code JAN}, {@code MON}); day of week 0 and 7 are Sunday. As in
 * Vixie cron, when both day of month and day of week are restricted a day matching either matches (a field that
 * starts with {@code *}, such as {@code * / 10} without the spaces, counts as unrestricted there).
 *
 * <p>A time zone is named as cronie does, before the fields: {@code CRON_TZ=Europe/Paris 0 2 * * *} (any region ID
 * or offset {@link ZoneId} knows; default UTC). The fields then match the zone's wall-clock time, and daylight-saving
 * changes are handled as cronie handles them. A schedule whose hour field is {@code *} (hourly, or more often) runs in
 * real time: every instant whose wall-clock time matches, so both occurrences of a repeated local time (clocks set
 * back) and none of a local time that does not occur (clocks set forward; the real hour is the next one). Any other
 * schedule never runs twice for one wall-clock time: a repeated local time matches once, at its first occurrence; a
 * local time that does not occur matches once, at the instant of the change (several such times, one tick).
 *
 * <p>Evaluation is deterministic (it depends only on the expression and the instant given), so the database's
 * procedures compute ticks with it inside a transaction. Not an API: applications use {@code org.apiary.Schedule}.
 */
public final class Cron {
  private static final String[] MONTHS = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT",
      "NOV", "DEC"};
  private static final String[] DAYS = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};
  /** How far ahead {@link #next} looks before concluding that no instant matches (e.g. 30 February). */
  private static final int MAX_YEARS = 5;

  /** How a time zone is named before the fields (cronie's form). */
  public static final String ZONE_PREFIX = "CRON_TZ=";

  private final String expression;
  private final ZoneId zone;
  private final String fields;
  private final BitSet seconds;
  private final BitSet minutes;
  private final BitSet hours;
  private final BitSet daysOfMonth;
  private final BitSet months;
  private final BitSet daysOfWeek;
  private final boolean domRestricted;
  private final boolean dowRestricted;

  private Cron(String expression, ZoneId zone, String fields, BitSet seconds, BitSet minutes, BitSet hours,
               BitSet daysOfMonth, BitSet months, BitSet daysOfWeek, boolean domRestricted, boolean dowRestricted) {
    this.expression = expression;
    this.zone = zone;
    this.fields = fields;
    this.seconds = seconds;
    this.minutes = minutes;
    this.hours = hours;
    this.daysOfMonth = daysOfMonth;
    this.months = months;
    this.daysOfWeek = daysOfWeek;
    this.domRestricted = domRestricted;
    this.dowRestricted = dowRestricted;
  }

  /**
   * Parses an expression.
   *
   * @throws IllegalArgumentException naming the field and what is wrong with it
   */
  public static Cron parse(String expression) {
    Objects.requireNonNull(expression, "expression");
    String text = expression.trim();
    ZoneId zone = ZoneOffset.UTC;
    if (text.startsWith(ZONE_PREFIX)) {
      int space = text.indexOf(' ');
      String id = space < 0 ? text.substring(ZONE_PREFIX.length()) : text.substring(ZONE_PREFIX.length(), space);
      zone = zone(expression, id);
      text = space < 0 ? "" : text.substring(space + 1).trim();
    }
    String[] f = text.split("\\s+");
    if (f.length != 5 && f.length != 6) {
      throw new IllegalArgumentException("a cron expression has 5 fields (minute hour day-of-month month "
          + "day-of-week) or 6 (second first), not " + f.length + ": '" + expression + "'");
    }
    int o = f.length - 5;
    BitSet seconds = o == 1 ? field(expression, "second", f[0], 0, 59, null) : bits(0, 0);
    BitSet dow = field(expression, "day-of-week", f[o + 4], 0, 7, DAYS);
    if (dow.get(7)) {
      dow.set(0);
      dow.clear(7);
    }
    return new Cron(expression.trim(), zone, String.join(" ", f), seconds,
        field(expression, "minute", f[o], 0, 59, null), field(expression, "hour", f[o + 1], 0, 23, null), field(expression, "day-of-month", f[o + 2], 1, 31, null),
        field(expression, "month", f[o + 3], 1, 12, MONTHS), dow, !f[o + 2].startsWith("*"),
        !f[o + 4].startsWith("*"));
  }

  /**
   * A time zone by its ID (a region such as {@code Europe/Paris}, {@code UTC}, or an offset such as {@code +02:00}).
   *
   * @throws IllegalArgumentException naming the zone (and the expression, if not {@code null}) if it is unknown
   */
  public static ZoneId zone(String expression, String id) {
    try {
      ZoneId z = ZoneId.of(id);
      return z.getId().equals("Z") ? ZoneOffset.UTC : z;
    } catch (DateTimeException e) {
      throw new IllegalArgumentException((expression == null ? "" : "cron expression '" + expression + "': ")
          + "unknown time zone '" + id + "' (give a region such as Europe/Paris or America/New_York, UTC, or an "
          + "offset such as +02:00)", e);
    }
  }

  /** The expression as stored: the fields, preceded by {@link #ZONE_PREFIX} and the zone unless it is UTC. */
  public static String stored(String fields, ZoneId zone) {
    return isUtc(zone) ? fields.trim() : ZONE_PREFIX + zone.getId() + " " + fields.trim();
  }

  private static boolean isUtc(ZoneId zone) {
    return zone.normalized().equals(ZoneOffset.UTC);
  }

  /** The time zone the fields are matched in (UTC unless named). */
  public ZoneId zone() {
    return zone;
  }

  /** The fields alone, without the zone, separated by single spaces. */
  public String fields() {
    return fields;
  }

  private static BitSet bits(int from, int to) {
    BitSet b = new BitSet();
    b.set(from, to + 1);
    return b;
  }

  private static BitSet field(String expression, String name, String text, int min, int max, String[] names) {
    BitSet b = new BitSet();
    for (String part : text.split(",", -1)) {
      String range = part;
      int step = 1;
      int slash = part.indexOf('/');
      if (slash >= 0) {
        range = part.substring(0, slash);
        step = number(expression, name, part.substring(slash + 1), 1, max - min + 1, null);
      }
      int from;
      int to;
      if (range.equals("*")) {
        from = min;
        to = max;
      } else {
        int dash = range.indexOf('-');
        if (dash > 0) {
          from = number(expression, name, range.substring(0, dash), min, max, names);
          to = number(expression, name, range.substring(dash + 1), min, max, names);
          if (to < from) {
            throw new IllegalArgumentException("cron expression '" + expression + "': the " + name + " range '"
                + range + "' ends before it starts");
          }
        } else {
          from = number(expression, name, range, min, max, names);
          to = slash >= 0 ? max : from;
        }
      }
      for (int v = from; v <= to; v += step) {
        b.set(v);
      }
    }
    return b;
  }

  private static int number(String expression, String name, String text, int min, int max, String[] names) {
    if (names != null) {
      for (int i = 0; i < names.length; i++) {
        if (names[i].equals(text.toUpperCase(Locale.ROOT))) {
          return i + (min == 1 ? 1 : 0);
        }
      }
    }
    int v;
    try {
      v = Integer.parseInt(text);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("cron expression '" + expression + "': the " + name + " field has '" + text
          + "', which is not a number" + (names != null ? " or a name" : ""), e);
    }
    if (v < min || v > max) {
      throw new IllegalArgumentException("cron expression '" + expression + "': the " + name + " field's values are "
          + min + " to " + max + ", not " + v);
    }
    return v;
  }

  /** Whether this expression has a seconds field (its ticks may be less than a minute apart). */
  public boolean hasSeconds() {
    return seconds.cardinality() != 1 || !seconds.get(0);
  }

  /**
   * The first instant after {@code after} (strictly; whole seconds) that matches, in the expression's zone.
   *
   * @throws IllegalArgumentException if nothing matches within {@value #MAX_YEARS} years (e.g. '0 0 30 2 *')
   */
  public Instant next(Instant after) {
    if (isUtc(zone)) {
      return localNext(after, LocalDateTime.ofInstant(after, ZoneOffset.UTC)).toInstant(ZoneOffset.UTC);
    }
    if (hours.cardinality() == 24) {
      return everyHourNext(after);
    }
    ZoneRules rules = zone.getRules();
    LocalDateTime from = LocalDateTime.ofInstant(after, zone);
    // A local time whose first occurrence is not after 'after' (it was in the repeated hour) is passed over.
    for (int i = 0; i < 100_000; i++) {
      LocalDateTime local = localNext(after, from);
      Instant at;
      if (rules.getValidOffsets(local).isEmpty()) {
        ZoneOffsetTransition gap = rules.getTransition(local);
        at = gap.getInstant(); // skipped by clocks set forward: at the change
      } else {
        at = ZonedDateTime.ofLocal(local, zone, null).toInstant(); // the earlier offset: the first occurrence
      }
      if (at.isAfter(after)) {
        return at;
      }
      from = local;
    }
    throw new IllegalArgumentException("cron expression '" + expression + "' found no time after " + after);
  }

  /**
   * {@link #next} for an expression that runs every hour (its hour field matches all 24) in a zone with daylight-saving
   * changes: cronie's rule for hourly and more frequent jobs, which run in real time, unaffected by a change. Every
   * instant whose wall-clock time matches counts, both occurrences of a repeated local time included; a local time
   * that does not occur has no tick (the real hour it would have named matches as the next one).
   */
  private Instant everyHourNext(Instant after) {
    ZoneRules rules = zone.getRules();
    // Changes are less than a day apart from no instant's neighbours, so the offsets around 'after' are these.
    int low = Integer.MAX_VALUE;
    int high = Integer.MIN_VALUE;
    for (Instant near : new Instant[] {after.minus(1, ChronoUnit.DAYS), after, after.plus(1, ChronoUnit.DAYS)}) {
      int seconds = rules.getOffset(near).getTotalSeconds();
      low = Math.min(low, seconds);
      high = Math.max(high, seconds);
    }
    // A local time after this one, at the smallest offset, is an instant after 'after'; none before it can be.
    LocalDateTime local = LocalDateTime.ofInstant(after, ZoneOffset.ofTotalSeconds(low));
    Instant best = null;
    LocalDateTime bestLocal = null;
    for (int i = 0; i < 100_000; i++) {
      local = localNext(after, local);
      if (best != null && local.isAfter(bestLocal.plusSeconds(high - low))) {
        return best; // later local times are later instants at every offset in the window
      }
      for (ZoneOffset offset : rules.getValidOffsets(local)) {
        Instant at = local.toInstant(offset);
        if (at.isAfter(after) && (best == null || at.isBefore(best))) {
          best = at;
          bestLocal = local;
        }
      }
      if (best != null && high == low) {
        return best;
      }
    }
    throw new IllegalArgumentException("cron expression '" + expression + "' found no time after " + after);
  }

  /** The first local time after {@code from} (strictly; whole seconds) whose fields match. */
  private LocalDateTime localNext(Instant after, LocalDateTime from) {
    LocalDateTime t = from.truncatedTo(ChronoUnit.SECONDS).plusSeconds(1);
    LocalDateTime limit = t.plusYears(MAX_YEARS);
    while (t.isBefore(limit)) {
      if (!months.get(t.getMonthValue())) {
        t = t.withDayOfMonth(1).truncatedTo(ChronoUnit.DAYS).plusMonths(1);
      } else if (!dayMatches(t)) {
        t = t.truncatedTo(ChronoUnit.DAYS).plusDays(1);
      } else if (!hours.get(t.getHour())) {
        t = t.truncatedTo(ChronoUnit.HOURS).plusHours(1);
      } else if (!minutes.get(t.getMinute())) {
        t = t.truncatedTo(ChronoUnit.MINUTES).plusMinutes(1);
      } else if (!seconds.get(t.getSecond())) {
        int s = seconds.nextSetBit(t.getSecond());
        t = s < 0 ? t.truncatedTo(ChronoUnit.MINUTES).plusMinutes(1) : t.withSecond(s);
      } else {
        return t;
      }
    }
    throw new IllegalArgumentException("cron expression '" + expression + "' matches no time in the " + MAX_YEARS
        + " years after " + after);
  }

  private boolean dayMatches(LocalDateTime t) {
    boolean dom = daysOfMonth.get(t.getDayOfMonth());
    boolean dow = daysOfWeek.get(t.getDayOfWeek().getValue() % 7);
    if (domRestricted && dowRestricted) {
      return dom || dow;
    }
    return dom && dow;
  }

  @Override
  public String toString() {
    return expression;
  }
}
