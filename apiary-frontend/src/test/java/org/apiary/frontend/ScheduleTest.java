package org.apiary.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import org.apiary.InvalidRequestException;
import org.apiary.Schedule;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.InvocationHandle;
import org.apiary.client.InvocationRequest;
import org.apiary.client.InvocationStatus;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.schedule.ScheduleApp;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.voltdb.VoltTable;

/**
 * Issue 42, item 3: schedules and delayed starts. What ran is read from the application's own table, {@code s_ticks}
 * (one row per run of a tick, no key, so a tick run twice is two rows), and the queue's rows, with plain SQL.
 */
@DatabaseTest
class ScheduleTest {
  private static boolean registered;
  private static final FrontendConfig CONFIG = FrontendConfig.defaults();
  private static final Duration WAIT = Duration.ofSeconds(60);
  private ApiaryDatabase db;

  @BeforeEach
  void setUp(TestDatabase database) {
    db = database.database();
    synchronized (ScheduleTest.class) {
      if (!registered) {
        Registrar.register(db, ScheduleApp.APP);
        registered = true;
      }
    }
    db.callAdmin("clearing s_ticks", "@AdHoc", "DELETE FROM s_ticks");
    db.callAdmin("clearing the schedules' items", "@AdHoc", "DELETE FROM APIARY_QUEUE_ITEMS WHERE queue_name LIKE "
        + "'schedule.%'");
    // Paused between tests: a regular tick run in one test stays in the invocation log, and the same tick put on
    // the queue again in a later test (a backfill) would, rightly, answer with that stored outcome instead of running.
    Schedules.pause(db, "sMinuteSkip");
    Schedules.pause(db, "sMinuteCatchUp");
  }

  private long count(String sql, Object... params) {
    Object[] all = new Object[params.length + 1];
    all[0] = sql;
    System.arraycopy(params, 0, all, 1, params.length);
    return db.callAdmin("reading test data", "@AdHoc", all).getResults()[0].asScalarLong();
  }

  /** The ticks of key k in s_ticks, one entry per row, oldest first. */
  private List<String> ran(long k) {
    VoltTable t = db.callAdmin("reading s_ticks", "@AdHoc", "SELECT tick FROM s_ticks WHERE k = ? ORDER BY tick", k)
        .getResults()[0];
    List<String> ticks = new ArrayList<>();
    while (t.advanceRow()) {
      ticks.add(t.getString(0));
    }
    return ticks;
  }

  /** A queue's items: invocation ID, status, and when each was enqueued, started and finished. */
  private List<String> items(String queue) {
    VoltTable t = db.callAdmin("reading the items", "@AdHoc", "SELECT invocation_id, status, enqueued_at, started_at, "
        + "finished_at FROM APIARY_QUEUE_ITEMS WHERE queue_name = ? ORDER BY invocation_id", queue).getResults()[0];
    List<String> all = new ArrayList<>();
    while (t.advanceRow()) {
      all.add(t.getString(0) + " " + t.getString(1) + " " + t.getTimestampAsTimestamp(2) + " "
          + t.getTimestampAsTimestamp(3) + " " + t.getTimestampAsTimestamp(4));
    }
    return all;
  }

  /** Waits until no item of the queue waits or runs. */
  private void drained(String queue) throws InterruptedException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (count("SELECT COUNT(*) FROM APIARY_QUEUE_ITEMS WHERE queue_name = ? AND status IN ('QUEUED', 'RUNNING')",
        queue) > 0) {
      assertTrue(System.nanoTime() < deadline, "queue " + queue + " never drained");
      Thread.sleep(50);
    }
  }

  /** Moves a schedule's last tick back, as if no frontend had run it for that long (an outage). */
  private void outage(String schedule, Duration length) {
    db.callAdmin("moving the last tick back", "@AdHoc", "UPDATE APIARY_SCHEDULES SET last_tick = "
        + "DATEADD(MILLISECOND, ?, NOW) WHERE name = ?", -length.toMillis(), schedule);
  }

  private static List<String> minutesBefore(Instant latest, int n) {
    List<String> all = new ArrayList<>();
    for (int i = n - 1; i >= 0; i--) {
      all.add(latest.minus(i, ChronoUnit.MINUTES).toString());
    }
    return all;
  }

  @Test
  void eachTickRunsOnceAcrossTwoFrontendsWithItsTimeAsItsArgument() throws InterruptedException {
    Schedule everySecond = Schedule.cron("sEverySecond", "* * * * * *", ScheduleApp.TICK).key(10L);
    Schedules.create(db, everySecond);
    try (FrontendServer a = FrontendServer.start(db, CONFIG); FrontendServer b = FrontendServer.start(db, CONFIG)) {
      long deadline = System.nanoTime() + WAIT.toNanos();
      while (ran(10L).size() < 4) {
        assertTrue(System.nanoTime() < deadline, "the schedule never ticked 4 times: " + ran(10L));
        Thread.sleep(50);
      }
      Schedules.pause(db, "sEverySecond");
      drained(everySecond.queueName());
    } finally {
      Schedules.delete(db, "sEverySecond");
    }
    List<String> ticks = ran(10L);
    assertEquals(ticks.stream().distinct().toList(), ticks, "a tick ran more than once");
    Instant first = Instant.parse(ticks.get(0));
    for (int i = 0; i < ticks.size(); i++) {
      assertEquals(first.plusSeconds(i).toString(), ticks.get(i), "every second ticked once, in order: " + ticks);
    }
    assertEquals(ticks.size(), count("SELECT COUNT(*) FROM APIARY_QUEUE_ITEMS WHERE queue_name = ? "
        + "AND status = 'DONE'", everySecond.queueName()), "one item per tick, each done");
    VoltTable ids = db.callAdmin("reading the items", "@AdHoc", "SELECT invocation_id FROM APIARY_QUEUE_ITEMS WHERE "
        + "queue_name = ? ORDER BY invocation_id", everySecond.queueName()).getResults()[0];
    List<String> items = new ArrayList<>();
    while (ids.advanceRow()) {
      items.add(ids.getString(0));
    }
    assertEquals(ticks.stream().map(t -> "sEverySecond@" + t).toList(), items, "each item named by its tick");
  }

  @Test
  void afterAnOutageMissedTicksAreSkippedOrCaughtUpAtMostNAsDeclared() throws InterruptedException {
    // Schedules of this test alone (keys 3 and 4): no tick of theirs ran before, in this database.
    Schedule catchUp = Schedule.cron("sOutageCatchUp", "* * * * *", ScheduleApp.TICK).key(3L)
        .missed(Schedule.catchUp(3));
    Schedule skip = Schedule.cron("sOutageSkip", "* * * * *", ScheduleApp.TICK).key(4L).missed(Schedule.skip());
    Schedules.create(db, catchUp);
    Schedules.create(db, skip);
    outage("sOutageCatchUp", Duration.ofMinutes(10));
    outage("sOutageSkip", Duration.ofMinutes(10));
    Instant before = Instant.now().truncatedTo(ChronoUnit.MINUTES);
    try (FrontendServer a = FrontendServer.start(db, CONFIG)) {
      long deadline = System.nanoTime() + WAIT.toNanos();
      while (ran(3L).size() < 4 || ran(4L).isEmpty()) {
        assertTrue(System.nanoTime() < deadline, "the outage's ticks never ran: " + ran(3L) + " " + ran(4L));
        Thread.sleep(50);
      }
      Schedules.pause(db, "sOutageCatchUp");
      Schedules.pause(db, "sOutageSkip");
      drained(catchUp.queueName());
      drained(skip.queueName());
    } finally {
      Schedules.delete(db, "sOutageCatchUp");
      Schedules.delete(db, "sOutageSkip");
    }
    // The latest due tick is this minute's start (or the next one's, if a minute began meanwhile).
    List<String> caughtUp = ran(3L);
    Instant latest = Instant.parse(caughtUp.get(caughtUp.size() - 1));
    assertTrue(latest.equals(before) || latest.equals(before.plus(1, ChronoUnit.MINUTES)), latest + " vs " + before);
    assertEquals(minutesBefore(latest, 4), caughtUp, "catchUp(3): the latest due tick and the 3 missed before it; "
        + "items: " + items(catchUp.queueName()));
    List<String> skipped = ran(4L);
    assertEquals(1, skipped.size(), "skip: only the latest due tick ran: " + skipped);
    assertTrue(skipped.get(0).equals(latest.toString()) || skipped.get(0).equals(before.toString()), skipped + "");
  }

  @Test
  void aPausedScheduleDoesNotTickAndTriggerAndBackfillRunEachTickOnce() throws InterruptedException {
    outage("sMinuteSkip", Duration.ofMinutes(5)); // paused (setUp) through it: nothing of it may run
    Instant now = Instant.now();
    Instant from = now.minus(1, ChronoUnit.HOURS).truncatedTo(ChronoUnit.MINUTES);
    try (FrontendServer a = FrontendServer.start(db, CONFIG)) {
      Schedules.Tick triggered = Schedules.trigger(db, "sMinuteSkip");
      assertTrue(triggered.enqueued());
      List<Schedules.Tick> backfilled = Schedules.backfill(db, "sMinuteSkip", from, from.plus(2, ChronoUnit.MINUTES));
      assertEquals(minutesBefore(from.plus(2, ChronoUnit.MINUTES), 3),
          backfilled.stream().map(t -> t.time().toString()).toList(), "both ends of the range are in it");
      assertTrue(backfilled.stream().allMatch(Schedules.Tick::enqueued));
      drained(ScheduleApp.MINUTELY_SKIP.queueName());
      // Again over the same range, and overlapping: the ticks there are found, not run again.
      List<Schedules.Tick> again = Schedules.backfill(db, "sMinuteSkip", from.plus(1, ChronoUnit.MINUTES),
          from.plus(3, ChronoUnit.MINUTES));
      assertEquals(List.of(false, false, true), again.stream().map(Schedules.Tick::enqueued).toList());
      drained(ScheduleApp.MINUTELY_SKIP.queueName());
      Thread.sleep(3 * ScheduleRunner.ROUND_MS + 1_000); // rounds that would tick, were it not paused
      List<String> expected = new ArrayList<>(minutesBefore(from.plus(3, ChronoUnit.MINUTES), 4));
      expected.add(triggered.time().toString());
      assertEquals(expected, ran(2L), "the backfilled ticks and the triggered one, each once; nothing of the pause");

      Instant resumed = Instant.now().truncatedTo(ChronoUnit.SECONDS);
      Schedules.resume(db, "sMinuteSkip");
      Thread.sleep(3 * ScheduleRunner.ROUND_MS + 1_000);
      List<String> after = new ArrayList<>(ran(2L));
      after.removeAll(expected);
      assertTrue(after.stream().allMatch(t -> !Instant.parse(t).isBefore(resumed)), "a resumed schedule starts at "
          + "its next tick; the pause's are not run: " + after);
    }
    assertThrows(InvalidRequestException.class, () -> Schedules.trigger(db, "noSuchSchedule"));
    assertThrows(InvalidRequestException.class, () -> Schedules.pause(db, "noSuchSchedule"));
    assertThrows(InvalidRequestException.class, () -> Schedules.backfill(db, "sMinuteSkip", now, from));
    assertThrows(InvalidRequestException.class, () -> Schedules.create(db,
        Schedule.cron("sNoGraph", "* * * * *", "noSuchGraph")));
  }

  @Test
  void aDelayedStartDoesNotRunBeforeItsTime() throws InterruptedException {
    InvocationHandle later;
    try (FrontendServer a = FrontendServer.start(db, CONFIG);
         ApiaryClient client = ApiaryClient.connect(ClientConfig.of(a.endpoint())
             .withAttemptTimeout(Duration.ofSeconds(5)))) {
      later = client.enqueue("s_later", null, InvocationRequest.of("sTick", 30L, "delayed"),
          Duration.ofMillis(1_500));
      InvocationHandle now = client.enqueue("s_later", null, InvocationRequest.of("sTick", 31L, "at once"),
          Duration.ZERO);
      assertEquals(List.of("at once"), now.await(WAIT).values(String.class));
      assertEquals(InvocationStatus.QUEUED, later.status(), "waiting for its time");
      assertEquals(List.of(), ran(30L), "not run before its time");
      assertEquals(List.of("delayed"), later.await(WAIT).values(String.class));
      assertThrows(IllegalArgumentException.class, () -> client.enqueue("s_later", null,
          InvocationRequest.of("sTick", 32L, "x"), Duration.ofMillis(-1)));
    }
    // By the database's own clock: the item was due 1.5 s after it was stored, and started no sooner.
    assertEquals(1, count("SELECT COUNT(*) FROM APIARY_QUEUE_ITEMS WHERE queue_name = 's_later' AND "
        + "invocation_id = ? AND SINCE_EPOCH(MILLISECOND, not_before) - SINCE_EPOCH(MILLISECOND, enqueued_at) = 1500 "
        + "AND started_at >= not_before", later.id()));
    assertEquals(1, ran(30L).size());
  }
}
