package org.apiary.internal;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.BitSet;
import java.util.Locale;
import java.util.Objects;

/**
 * A cron expression, evaluated in UTC: five fields ({@code minute hour day-of-month month day-of-week}) or six with
 * seconds first ({@code second minute hour day-of-month month day-of-week}). Each field is {@code *}, a value, a range
 * {@code a-b}, any of those with a step ({@code * / n}, {@code a-b/n}, {@code a/n}), or a comma-separated list of
 * them; months and days of the week may be named ({@code JAN}, {@code MON}); day of week 0 and 7 are Sunday. As in
 * Vixie cron, when both day of month and day of week are restricted a day matching either matches (a field that
 * starts with {@code *}, such as {@code * / 10} without the spaces, counts as unrestricted there).
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

  private final String expression;
  private final BitSet seconds;
  private final BitSet minutes;
  private final BitSet hours;
  private final BitSet daysOfMonth;
  private final BitSet months;
  private final BitSet daysOfWeek;
  private final boolean domRestricted;
  private final boolean dowRestricted;

  private Cron(String expression, BitSet seconds, BitSet minutes, BitSet hours, BitSet daysOfMonth, BitSet months,
               BitSet daysOfWeek, boolean domRestricted, boolean dowRestricted) {
    this.expression = expression;
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
    String[] f = expression.trim().split("\\s+");
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
    return new Cron(expression.trim(), seconds, field(expression, "minute", f[o], 0, 59, null),
        field(expression, "hour", f[o + 1], 0, 23, null), field(expression, "day-of-month", f[o + 2], 1, 31, null),
        field(expression, "month", f[o + 3], 1, 12, MONTHS), dow, !f[o + 2].startsWith("*"),
        !f[o + 4].startsWith("*"));
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
   * The first instant after {@code after} (strictly; whole seconds, UTC) that matches.
   *
   * @throws IllegalArgumentException if nothing matches within {@value #MAX_YEARS} years (e.g. '0 0 30 2 *')
   */
  public Instant next(Instant after) {
    LocalDateTime t = LocalDateTime.ofInstant(after, ZoneOffset.UTC).truncatedTo(ChronoUnit.SECONDS).plusSeconds(1);
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
        return t.toInstant(ZoneOffset.UTC);
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
