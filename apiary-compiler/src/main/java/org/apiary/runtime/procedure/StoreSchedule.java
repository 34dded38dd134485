package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;

/**
 * Stores a schedule (issue 42), declared with an application or created at run time: single-partition in the
 * partition of its queue ({@code schedule.NAME}, stored first with {@code StoreQueue}), journaled; the
 * administrator's. A new schedule's first tick is the first after this transaction's time; one stored again takes
 * the expression, graph, key and policy given and keeps its last tick and whether it is paused.
 */
public class StoreSchedule extends JournaledProcedure {
  public final SQLStmt existing = new SQLStmt("SELECT name FROM APIARY_SCHEDULES WHERE queue_name = ?;");
  public final SQLStmt insert = new SQLStmt("INSERT INTO APIARY_SCHEDULES (queue_name, name, graph, cron, key_json, "
      + "catch_up, paused, last_tick, declared_at) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?);");
  public final SQLStmt update = new SQLStmt("UPDATE APIARY_SCHEDULES SET graph = ?, cron = ?, key_json = ?, "
      + "catch_up = ?, declared_at = ? WHERE queue_name = ?;");

  /**
   * @param keyJson the partition key its ticks run under, as JSON, or {@code null}
   * @return 1 if the schedule is new, 0 if it was there and is updated
   */
  public long run(String queueName, String name, String graph, String cron, String keyJson, int catchUp) {
    voltQueueSQL(existing, queueName);
    VoltTable found = voltExecuteSQL()[0];
    boolean fresh = found.getRowCount() == 0;
    if (fresh) {
      voltQueueSQL(insert, queueName, name, graph, cron, keyJson, catchUp, getTransactionTime(), getTransactionTime());
    } else {
      voltQueueSQL(update, graph, cron, keyJson, catchUp, getTransactionTime(), queueName);
    }
    voltExecuteSQL(true);
    return committed(fresh ? 1L : 0L);
  }
}
