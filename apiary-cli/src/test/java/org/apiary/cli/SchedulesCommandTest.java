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
}
