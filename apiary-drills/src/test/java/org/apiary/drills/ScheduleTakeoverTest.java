package org.apiary.drills;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apiary.Schedule;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.Registrar;
import org.apiary.frontend.Schedules;
import org.apiary.frontend.schedule.ScheduleApp;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.voltdb.VoltTable;

/**
 * Issue 42's "a tick run twice across a frontend kill": a frontend process halts (exit 137, as under SIGKILL) in the
 * middle of a schedule's tick, after the tick's first function committed its write and before the second ran; two
 * live frontends take over and keep the schedule ticking every second. Read from the database's own rows afterwards:
 * every tick's item ended DONE, and each tick wrote its row exactly once (the table has no key, so a tick run twice
 * would be two rows), the halted one included.
 */
@DatabaseTest
class ScheduleTakeoverTest {
  private static final List<String> FAST_LEASE = List.of("--lease-ms", "2000", "--heartbeat-ms", "400");
  private static final Pattern HALTED = Pattern.compile("halting after function 'sTickMark' in graph 'sTick', "
      + "invocation (\\S+)");
  private static final String SCHEDULE = "sKill";

  @Test
  void aTickCutShortByAFrontendKillRunsOnceAndTheScheduleGoesOnOnTheOthers(TestDatabase database)
      throws InterruptedException {
    ApiaryDatabase db = database.database();
    Registrar.register(db, ScheduleApp.APP);
    Schedules.pause(db, "sMinuteSkip"); // the application's own schedules stay out of the way
    Schedules.pause(db, "sMinuteCatchUp");
    Schedule everySecond = Schedule.cron(SCHEDULE, "* * * * * *", ScheduleApp.TICK).key(20L);
    List<String> crashing = new ArrayList<>(FAST_LEASE);
    crashing.addAll(List.of("--crash-after", "sTickMark"));
    String halted;
    try (FrontendProcess doomed = FrontendProcess.start(db.clientAddresses(), crashing, Duration.ofSeconds(60))) {
      Schedules.create(db, everySecond);
      assertEquals(137, doomed.awaitExit(Duration.ofSeconds(60)), doomed.output());
      Matcher m = HALTED.matcher(doomed.output());
      assertTrue(m.find(), doomed.output());
      halted = m.group(1);
    }
    String haltedTick = halted.substring((SCHEDULE + "@").length());
    assertEquals(1, rows(db).getOrDefault(haltedTick, 0), "the halted tick's first function committed: " + rows(db));
    FrontendProcess[] pair = FrontendProcess.startTwo(db.clientAddresses(), FAST_LEASE, FAST_LEASE,
        Duration.ofSeconds(60));
    try (FrontendProcess a = pair[0]; FrontendProcess b = pair[1]) {
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (done(db) < 4) {
        assertTrue(System.nanoTime() < deadline, "the schedule did not go on after the kill: " + items(db) + "\n"
            + a.output() + "\n" + b.output());
        Thread.sleep(50);
      }
      Schedules.pause(db, SCHEDULE);
      while (waiting(db) > 0) {
        assertTrue(System.nanoTime() < deadline, "the ticks never finished: " + items(db));
        Thread.sleep(50);
      }
    } finally {
      Schedules.delete(db, SCHEDULE);
    }
    Map<String, String> items = items(db);
    Map<String, Integer> rows = rows(db);
    for (Map.Entry<String, String> item : items.entrySet()) {
      assertEquals("DONE", item.getValue(), "every tick ended: " + items);
      String tick = item.getKey().substring((SCHEDULE + "@").length());
      assertEquals(1, rows.getOrDefault(tick, 0), "tick " + tick + " ran " + rows.getOrDefault(tick, 0)
          + " times: " + rows);
    }
    assertEquals(items.size(), rows.size(), "no row without its tick's item: " + rows);
    assertEquals("DONE", items.get(halted), "the halted tick's item: " + items);
  }

  /** Per tick of key 20, how many rows it wrote. */
  private static Map<String, Integer> rows(ApiaryDatabase db) {
    VoltTable t = db.callAdmin("reading s_ticks", "@AdHoc", "SELECT tick, COUNT(*) FROM s_ticks WHERE k = 20 "
        + "GROUP BY tick ORDER BY tick").getResults()[0];
    Map<String, Integer> rows = new LinkedHashMap<>();
    while (t.advanceRow()) {
      rows.put(t.getString(0), (int) t.getLong(1));
    }
    return rows;
  }

  /** The schedule's items (invocation ID to status). */
  private static Map<String, String> items(ApiaryDatabase db) {
    VoltTable t = db.callAdmin("reading the items", "@AdHoc", "SELECT invocation_id, status FROM APIARY_QUEUE_ITEMS "
        + "WHERE queue_name = ? ORDER BY invocation_id", Schedule.queueName(SCHEDULE)).getResults()[0];
    Map<String, String> items = new LinkedHashMap<>();
    while (t.advanceRow()) {
      items.put(t.getString(0), t.getString(1));
    }
    return items;
  }

  private static long done(ApiaryDatabase db) {
    return items(db).values().stream().filter("DONE"::equals).count();
  }

  private static long waiting(ApiaryDatabase db) {
    return items(db).values().stream().filter(s -> s.equals("QUEUED") || s.equals("RUNNING")).count();
  }
}
