package org.apiary.frontend.schedule;

import org.apiary.ApiaryFunction;
import org.apiary.Application;
import org.apiary.Graph;
import org.apiary.Queue;
import org.apiary.Schedule;

/**
 * Issue 42, item 3: graphs run by schedules. {@code sTick} [tick] appends a row (k, tick, the transaction's time) to
 * {@code s_ticks}, which has no key, so a tick run twice shows as two rows, then a second function answers the tick:
 * a frontend halted between the two leaves a committed write behind for the takeover.
 */
public final class ScheduleApp {
  public static final String SCHEMA = """
      CREATE TABLE s_ticks (k BIGINT NOT NULL, tick VARCHAR(64) NOT NULL, ran_at TIMESTAMP NOT NULL);
      PARTITION TABLE s_ticks ON COLUMN k;
      CREATE INDEX s_ticks_by_tick ON s_ticks (k, tick);
      """;

  public static final Graph TICK = Graph.named("sTick")
      .addLocalFunction("sTickMark", TickMark.class)
      .addLocalFunction("sTickDone", TickDone.class)
      .addEdge(Graph.SOURCE, "sTickMark", ApiaryFunction.SOURCE)
      .addEdge("sTickMark", "sTickDone", "tick")
      .addEdge("sTickDone", Graph.SINK, ApiaryFunction.SINK);

  /** Every minute, catching up at most 3 missed ticks (key 1). */
  public static final Schedule MINUTELY_CATCH_UP = Schedule.cron("sMinuteCatchUp", "* * * * *", TICK).key(1L)
      .missed(Schedule.catchUp(3));
  /** Every minute, skipping missed ticks (key 2). */
  public static final Schedule MINUTELY_SKIP = Schedule.cron("sMinuteSkip", "* * * * *", TICK).key(2L);

  /** For delayed starts. */
  public static final Queue LATER = Queue.named("s_later");

  public static final Application APP = Application.of(SCHEMA, TICK).withQueues(LATER)
      .withSchedules(MINUTELY_CATCH_UP, MINUTELY_SKIP);

  private ScheduleApp() {}
}
