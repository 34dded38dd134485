package org.apiary.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apiary.Schedule;
import org.junit.jupiter.api.Test;

/**
 * The cron evaluator that decides schedules' ticks (issue 42). The oracle is a brute-force walk over every second (or
 * minute) with the field rules written out separately, so it shares no code with {@link Cron#next}.
 */
class CronTest {
  private static Instant at(String utc) {
    return Instant.parse(utc);
  }

  private static List<String> ticks(String expression, String after, int n) {
    Cron cron = Cron.parse(expression);
    List<String> all = new ArrayList<>();
    Instant t = at(after);
    for (int i = 0; i < n; i++) {
      t = cron.next(t);
      all.add(t.toString());
    }
    return all;
  }

  @Test
  void commonExpressionsTickWhenTheyShould() {
    assertEquals(List.of("2026-11-30T02:00:00Z", "2026-12-01T02:00:00Z"), ticks("0 2 * * *", "2026-11-29T02:00:00Z", 2),
        "strictly after: a tick at the instant given is not next");
    assertEquals(List.of("2026-11-29T10:15:00Z", "2026-11-29T10:30:00Z", "2026-11-29T10:45:00Z", "2026-11-29T11:00:00Z"),
        ticks("*/15 * * * *", "2026-11-29T10:07:31Z", 4));
    assertEquals(List.of("2026-11-29T10:07:32Z", "2026-11-29T10:07:33Z"), ticks("* * * * * *", "2026-11-29T10:07:31.5Z", 2),
        "six fields: seconds first");
    assertEquals(List.of("2026-11-30T09:00:00Z", "2026-12-01T09:00:00Z", "2026-12-02T09:00:00Z",
        "2026-12-03T09:00:00Z", "2026-12-04T09:00:00Z", "2026-12-07T09:00:00Z"),
        ticks("0 9 * * MON-FRI", "2026-11-29T00:00:00Z", 6), "weekdays by name (29 Nov 2026 is a Sunday)");
    assertEquals(List.of("2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z"), ticks("0 0 1 jan *", "2026-11-29T00:00:00Z", 2));
    assertEquals(List.of("2028-02-29T12:00:00Z"), ticks("0 12 29 2 *", "2026-11-29T00:00:00Z", 1), "a leap day");
    assertEquals(List.of("2026-12-01T00:00:00Z", "2026-12-06T00:00:00Z"), ticks("0 0 1 * 0", "2026-11-29T00:00:00Z", 2),
        "day of month and day of week both restricted: either matches (Vixie cron)");
    assertEquals(ticks("0 0 * * 0", "2026-11-29T00:00:00Z", 3), ticks("0 0 * * 7", "2026-11-29T00:00:00Z", 3),
        "7 is Sunday too");
    assertEquals(List.of("2026-11-29T10:20:05Z", "2026-11-29T10:20:35Z", "2026-11-29T10:21:05Z"),
        ticks("5/30 20-22 10 * * *", "2026-11-29T10:20:00Z", 3), "a/n steps from a");
  }

  @Test
  void randomExpressionsAgreeWithABruteForceWalk() {
    Random random = new Random(42);
    String[] minutes = {"*", "*/7", "5", "0-10/3", "1,31,59"};
    String[] hours = {"*", "3", "*/5", "22-23"};
    String[] doms = {"*", "1", "13-15", "*/10"};
    String[] months = {"*", "2", "6-8", "*/4"};
    String[] dows = {"*", "0", "1-5", "SAT"};
    for (int round = 0; round < 40; round++) {
      String expression = pick(random, minutes) + " " + pick(random, hours) + " " + pick(random, doms) + " "
          + pick(random, months) + " " + pick(random, dows);
      Cron cron = Cron.parse(expression);
      LocalDateTime start = LocalDateTime.of(2026, 1, 1, 0, 0).plusMinutes(random.nextInt(500_000));
      Instant t = start.toInstant(ZoneOffset.UTC);
      Instant expected = bruteForce(expression, start);
      assertEquals(expected, cron.next(t), expression + " after " + t);
    }
  }

  private static String pick(Random r, String[] from) {
    return from[r.nextInt(from.length)];
  }

  /** The next matching minute after {@code after}, by trying each one (5-field expressions). */
  private static Instant bruteForce(String expression, LocalDateTime after) {
    String[] f = expression.split(" ");
    boolean[] minute = table(f[0], 0, 59);
    boolean[] hour = table(f[1], 0, 23);
    boolean[] dom = table(f[2], 1, 31);
    boolean[] month = table(f[3], 1, 12);
    boolean[] dow = table(f[4].replace("SAT", "6"), 0, 6);
    boolean either = !f[2].startsWith("*") && !f[4].startsWith("*"); // Vixie: "*/n" is unrestricted
    LocalDateTime t = after.plusMinutes(1).truncatedTo(ChronoUnit.MINUTES);
    for (int i = 0; i < 3 * 366 * 24 * 60; i++, t = t.plusMinutes(1)) {
      boolean d = dom[t.getDayOfMonth()];
      boolean w = dow[t.getDayOfWeek().getValue() % 7];
      if (!(either ? d || w : d && w) || !month[t.getMonthValue()]) {
        t = t.truncatedTo(ChronoUnit.DAYS).plusDays(1).minusMinutes(1); // not this day: on to the next
        continue;
      }
      if (minute[t.getMinute()] && hour[t.getHour()]) {
        return t.toInstant(ZoneOffset.UTC);
      }
    }
    throw new AssertionError("nothing matches " + expression);
  }

  private static boolean[] table(String field, int min, int max) {
    boolean[] all = new boolean[max + 1];
    for (int v = min; v <= max; v++) {
      all[v] = matches(field, v, min, max);
    }
    return all;
  }

  private static boolean matches(String field, int v, int min, int max) {
    for (String part : field.split(",")) {
      String[] stepped = part.split("/");
      int step = stepped.length == 2 ? Integer.parseInt(stepped[1]) : 1;
      int lo;
      int hi;
      if (stepped[0].equals("*")) {
        lo = min;
        hi = max;
      } else if (stepped[0].contains("-")) {
        lo = Integer.parseInt(stepped[0].split("-")[0]);
        hi = Integer.parseInt(stepped[0].split("-")[1]);
      } else {
        lo = Integer.parseInt(stepped[0]);
        hi = stepped.length == 2 ? max : lo;
      }
      if (v >= lo && v <= hi && (v - lo) % step == 0) {
        return true;
      }
    }
    return false;
  }

  @Test
  void badExpressionsAreRefusedNamingTheField() {
    assertTrue(assertThrows(IllegalArgumentException.class, () -> Cron.parse("* * * *")).getMessage()
        .contains("5 fields"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> Cron.parse("60 * * * *")).getMessage()
        .contains("minute field's values are 0 to 59, not 60"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> Cron.parse("* * * FOO *")).getMessage()
        .contains("month field has 'FOO'"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> Cron.parse("* 5-2 * * *")).getMessage()
        .contains("ends before it starts"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> Schedule.cron("x", "0 0 30 2 *", "g"))
        .getMessage().contains("matches no time"), "a schedule that would never tick is refused");
    assertThrows(IllegalArgumentException.class, () -> Schedule.cron("has space", "* * * * *", "g"));
    assertThrows(IllegalArgumentException.class, () -> Schedule.catchUp(0));
    assertFalse(Cron.parse("0 * * * *").hasSeconds());
    assertTrue(Cron.parse("*/5 * * * * *").hasSeconds());
  }

  /**
   * Issue 42: a schedule's time zone. Ticks follow the zone's wall clock across daylight-saving changes: Paris moves
   * from 02:00 CET to 03:00 CEST on 2026-03-29 (01:00 UTC) and back from 03:00 CEST to 02:00 CET on 2026-10-25
   * (01:00 UTC); New York from 02:00 EST to 03:00 EDT on 2026-03-08 (07:00 UTC).
   */
  @Test
  void aZonedExpressionFollowsTheZonesWallClockAcrossDaylightSavingChanges() {
    // 09:00 in New York: 14:00 UTC in winter, 13:00 UTC from the change on.
    assertEquals(List.of("2026-03-07T14:00:00Z", "2026-03-08T13:00:00Z", "2026-03-09T13:00:00Z"),
        ticks("CRON_TZ=America/New_York 0 9 * * *", "2026-03-07T00:00:00Z", 3));
    // 02:30 in Paris does not occur on 2026-03-29: that day's tick is at the change, once.
    assertEquals(List.of("2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"),
        ticks("CRON_TZ=Europe/Paris 30 2 * * *", "2026-03-28T00:00:00Z", 3));
    // Every 30 minutes across the spring change: 02:00 and 02:30 (skipped) and 03:00 are one tick, at the change.
    assertEquals(List.of("2026-03-29T00:30:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:30:00Z"),
        ticks("CRON_TZ=Europe/Paris */30 * * * *", "2026-03-29T00:00:00Z", 3));
    // 02:30 in Paris occurs twice on 2026-10-25: it runs once, at the first (00:30 UTC), not again at 01:30 UTC.
    assertEquals(List.of("2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"),
        ticks("CRON_TZ=Europe/Paris 30 2 * * *", "2026-10-24T12:00:00Z", 2));
    // Asked from inside the repeated hour (02:10 CET, the second time), the 02:30 that already ran is passed over.
    assertEquals(List.of("2026-10-26T01:30:00Z"), ticks("CRON_TZ=Europe/Paris 30 2 * * *", "2026-10-25T01:10:00Z",
        1));
    // Without a zone, and with CRON_TZ=UTC: UTC, as before.
    assertEquals(ticks("0 2 * * *", "2026-03-28T00:00:00Z", 3), ticks("CRON_TZ=UTC 0 2 * * *",
        "2026-03-28T00:00:00Z", 3));
    assertEquals(java.time.ZoneId.of("Europe/Paris"), Cron.parse("CRON_TZ=Europe/Paris 0 2 * * *").zone());
    assertEquals("0 2 * * *", Cron.parse("CRON_TZ=Europe/Paris  0 2  * * *").fields());

    Schedule paris = Schedule.cron("nightly", "0 2 * * *", "g").zone("Europe/Paris");
    assertEquals("CRON_TZ=Europe/Paris 0 2 * * *", paris.storedExpression());
    assertEquals(paris, Schedule.cron("nightly", "CRON_TZ=Europe/Paris 0 2 * * *", "g"));
    assertEquals("0 2 * * *", Schedule.cron("n", "0 2 * * *", "g").storedExpression(), "UTC is stored as before");
    assertEquals(ZoneOffset.UTC, Schedule.cron("n", "0 2 * * *", "g").zone(), "the default zone is UTC");

    IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
        () -> Schedule.cron("n", "0 2 * * *", "g").zone("Europe/Atlantis"));
    assertTrue(unknown.getMessage().contains("unknown time zone 'Europe/Atlantis'"), unknown.getMessage());
    IllegalArgumentException inExpression = assertThrows(IllegalArgumentException.class,
        () -> Cron.parse("CRON_TZ=Mars/Base 0 2 * * *"));
    assertTrue(inExpression.getMessage().contains("unknown time zone 'Mars/Base'"), inExpression.getMessage());
  }

  /**
   * Issue 42: a zoned schedule that runs every hour (or more often) runs in real time across daylight-saving changes,
   * as cronie runs such jobs: Paris repeats 02:00-03:00 on 2026-10-25 (00:00-01:00 UTC as CEST, 01:00-02:00 UTC as
   * CET), and skips 02:00-03:00 on 2026-03-29 (01:00 UTC).
   */
  @Test
  void aZonedHourlyScheduleRunsEveryRealHourAcrossDaylightSavingChanges() {
    // Both 02:00s of the repeated hour: every real hour, none missing.
    assertEquals(List.of("2026-10-25T00:00:00Z", "2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z"),
        ticks("CRON_TZ=Europe/Paris 0 * * * *", "2026-10-24T23:30:00Z", 3));
    // Asked from inside the first 02:xx (CEST): the 02:30 of the second (CET) is next, an hour later.
    assertEquals(List.of("2026-10-25T01:30:00Z"), ticks("CRON_TZ=Europe/Paris 30 * * * *", "2026-10-25T00:45:00Z", 1));
    // Every 30 minutes through the repeated hour: every real half hour.
    assertEquals(List.of("2026-10-25T00:30:00Z", "2026-10-25T01:00:00Z", "2026-10-25T01:30:00Z",
        "2026-10-25T02:00:00Z"), ticks("CRON_TZ=Europe/Paris */30 * * * *", "2026-10-25T00:00:00Z", 4));
    // The skipped hour: 02:00 does not occur; the real hours go on (03:00 CEST is 01:00 UTC).
    assertEquals(List.of("2026-03-29T00:00:00Z", "2026-03-29T01:00:00Z", "2026-03-29T02:00:00Z"),
        ticks("CRON_TZ=Europe/Paris 0 * * * *", "2026-03-28T23:30:00Z", 3));
    // A schedule at a given hour keeps the once-per-wall-clock-time rule (the test above).
    assertEquals(List.of("2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"),
        ticks("CRON_TZ=Europe/Paris 30 2 * * *", "2026-10-24T12:00:00Z", 2));
  }

  /** Every-hour zoned expressions agree with a walk over real minutes, near the changes of two zones. */
  @Test
  void zonedEveryHourExpressionsAgreeWithAWalkOverRealTime() {
    Random random = new Random(7);
    String[] minutes = {"*", "*/7", "5", "0-10/3", "1,31,59", "0", "30"};
    String[] doms = {"*", "25", "24-26", "*/10"};
    String[] zones = {"Europe/Paris", "America/New_York", "Australia/Lord_Howe"};
    String[] changes = {"2026-10-25T01:00:00Z", "2026-03-29T01:00:00Z", "2026-11-01T06:00:00Z",
        "2026-03-08T07:00:00Z", "2026-04-04T15:00:00Z", "2026-10-03T15:30:00Z"};
    for (int round = 0; round < 60; round++) {
      String fields = pick(random, minutes) + " * " + pick(random, doms) + " * *";
      java.time.ZoneId zone = java.time.ZoneId.of(pick(random, zones));
      Cron cron = Cron.parse("CRON_TZ=" + zone.getId() + " " + fields);
      Instant after = Instant.parse(pick(random, changes)).plusSeconds(60L * (random.nextInt(360) - 180));
      Instant expected = realTimeWalk(fields, zone, after);
      assertEquals(expected, cron.next(after), fields + " in " + zone + " after " + after);
    }
  }

  /** The first real minute after {@code after} whose wall-clock time in {@code zone} matches {@code fields}. */
  private static Instant realTimeWalk(String fields, java.time.ZoneId zone, Instant after) {
    String[] f = fields.split(" ");
    boolean[] minute = table(f[0], 0, 59);
    boolean[] dom = table(f[2], 1, 31);
    Instant t = after.truncatedTo(ChronoUnit.MINUTES).plus(1, ChronoUnit.MINUTES);
    for (int i = 0; i < 3 * 366 * 24 * 60; i++, t = t.plus(1, ChronoUnit.MINUTES)) {
      LocalDateTime local = LocalDateTime.ofInstant(t, zone);
      if (minute[local.getMinute()] && dom[local.getDayOfMonth()]) {
        return t;
      }
    }
    throw new AssertionError("nothing matches " + fields);
  }
}
