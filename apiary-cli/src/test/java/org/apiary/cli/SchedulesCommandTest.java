package org.apiary.cli;

import static org.apiary.cli.InProcessCli.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import org.apiary.cli.InProcessCli.Run;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.Registrar;
import org.apiary.frontend.schedule.ScheduleApp;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.Test;

/**
 * {@code apiary schedules list|pause|resume|trigger|backfill|delete} against the test database (issue 42, item 3).
 * Nothing runs the ticks here (no frontend): the command's effect is read from the schedule's queue items.
 */
@DatabaseTest
class SchedulesCommandTest {
  private static long items(ApiaryDatabase db, String queue) {
    return db.callAdmin("counting items", "@AdHoc", "SELECT COUNT(*) FROM APIARY_QUEUE_ITEMS WHERE queue_name = ?",
        queue).getResults()[0].asScalarLong();
  }

  @Test
  void schedulesAreListedPausedResumedTriggeredAndBackfilled(TestDatabase database) {
    ApiaryDatabase db = database.database();
    Registrar.register(db, ScheduleApp.APP);
    String address = String.join(",", db.clientAddresses());
    String queue = ScheduleApp.MINUTELY_SKIP.queueName();

    Run paused = run("schedules", "pause", "sMinuteSkip", "--database", address);
    assertEquals(0, paused.code(), paused.err());
    Run listed = run("schedules", "list", "--database", address);
    assertEquals(0, listed.code(), listed.err());
    assertTrue(listed.out().lines().anyMatch(l -> l.contains("sMinuteSkip") && l.contains("* * * * *")
        && l.contains("sTick") && l.contains("skip") && l.contains("yes") && l.contains("(paused)")), listed.out());
    assertTrue(listed.out().lines().anyMatch(l -> l.contains("sMinuteCatchUp") && l.contains("catch up 3")
        && l.contains("no")), listed.out());

    long before = items(db, queue);
    Run triggered = run("schedules", "trigger", "sMinuteSkip", "--database", address);
    assertEquals(0, triggered.code(), triggered.err());
    assertTrue(triggered.out().contains("invocation sMinuteSkip@"), triggered.out());
    assertEquals(before + 1, items(db, queue), "a trigger runs a paused schedule too");

    Instant from = Instant.now().minus(2, ChronoUnit.DAYS).truncatedTo(ChronoUnit.MINUTES);
    Instant to = from.plus(4, ChronoUnit.MINUTES);
    Run backfilled = run("schedules", "backfill", "sMinuteSkip", "--from", from.toString(), "--to", to.toString(),
        "--database", address);
    assertEquals(0, backfilled.code(), backfilled.err());
    assertTrue(backfilled.out().contains("5 tick(s)") && backfilled.out().contains("5 enqueued"), backfilled.out());
    Run again = run("schedules", "backfill", "sMinuteSkip", "--from", from.toString(), "--to", to.toString(),
        "--database", address);
    assertTrue(again.out().contains("0 enqueued") && again.out().contains("already there"), again.out());
    assertEquals(before + 6, items(db, queue));

    Run tooMany = run("schedules", "backfill", "sMinuteSkip", "--from", "30d", "--database", address);
    assertEquals(1, tooMany.code(), tooMany.out());
    assertTrue(tooMany.err().contains("more than 10000 ticks"), tooMany.err());

    assertEquals(0, run("schedules", "resume", "sMinuteSkip", "--database", address).code());
    assertTrue(run("schedules", "list", "--database", address).out().lines()
        .anyMatch(l -> l.contains("sMinuteSkip") && !l.contains("(paused)")));

    Run unknown = run("schedules", "pause", "noSuchSchedule", "--database", address);
    assertEquals(1, unknown.code(), unknown.out());
    assertTrue(unknown.err().contains("no schedule named 'noSuchSchedule'"), unknown.err());
    Run noFrom = run("schedules", "backfill", "sMinuteSkip", "--database", address);
    assertEquals(2, noFrom.code());
  }

  /**
   * Issue 42: {@code apiary schedules create} stores a schedule at run time, in a time zone; list shows it with its
   * zone; the database's own tick computation (a backfill, in the schedule's partition) follows the zone across a
   * daylight-saving change; a bad expression, zone or graph is refused naming it.
   */
  @Test
  void aScheduleCreatedAtRunTimeInAZoneIsListedAndTicksByItsWallClock(TestDatabase database) {
    ApiaryDatabase db = database.database();
    Registrar.register(db, ScheduleApp.APP);
    String address = String.join(",", db.clientAddresses());

    Run created = run("schedules", "create", "sParisNightly", "--cron", "30 2 * * *", "--zone", "Europe/Paris",
        "--graph", "sTick", "--key", "7", "--database", address);
    assertEquals(0, created.code(), created.err());
    assertTrue(created.out().contains("in Europe/Paris"), created.out());
    Run listed = run("schedules", "list", "--database", address);
    assertTrue(listed.out().lines().anyMatch(l -> l.contains("sParisNightly") && l.contains("30 2 * * *")
        && l.contains("Europe/Paris") && l.contains("sTick")), listed.out());
    assertTrue(listed.out().lines().anyMatch(l -> l.contains("sMinuteSkip") && l.contains("UTC")), listed.out());

    // 02:30 in Paris: 01:30 UTC in winter; on 2026-03-29 it does not occur (clocks go from 02:00 to 03:00): at the
    // change, 01:00 UTC; then 00:30 UTC in summer.
    Run backfilled = run("schedules", "backfill", "sParisNightly", "--from", "2026-03-27T00:00:00Z", "--to",
        "2026-03-31T00:00:00Z", "--database", address);
    assertEquals(0, backfilled.code(), backfilled.err());
    assertEquals(java.util.List.of("2026-03-27T01:30:00Z", "2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z",
        "2026-03-30T00:30:00Z"), backfilled.out().lines().filter(l -> l.startsWith("2026-")).map(l -> l.split(" ")[0])
        .toList(), backfilled.out());

    Run badCron = run("schedules", "create", "sBad", "--cron", "0 25 * * *", "--graph", "sTick", "--database",
        address);
    assertEquals(2, badCron.code(), badCron.out());
    assertTrue(badCron.err().contains("hour field's values are 0 to 23, not 25"), badCron.err());
    Run badZone = run("schedules", "create", "sBad", "--cron", "0 2 * * *", "--zone", "Europe/Atlantis", "--graph",
        "sTick", "--database", address);
    assertEquals(2, badZone.code(), badZone.out());
    assertTrue(badZone.err().contains("unknown time zone 'Europe/Atlantis'"), badZone.err());
    Run badGraph = run("schedules", "create", "sBad", "--cron", "0 2 * * *", "--graph", "noSuchGraph", "--database",
        address);
    assertEquals(1, badGraph.code(), badGraph.out());
    assertTrue(badGraph.err().contains("'noSuchGraph', which is not registered"), badGraph.err());
    assertTrue(run("schedules", "list", "--database", address).out().lines().noneMatch(l -> l.contains("sBad")));
  }
}
