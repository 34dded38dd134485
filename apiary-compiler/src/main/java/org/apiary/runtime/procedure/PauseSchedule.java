package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;

/**
 * Pauses or resumes a schedule (issue 42): single-partition in its partition, journaled; the administrator's. A resumed
 * schedule's next tick is the first after the resume (its last tick moves to this transaction's time), so the ticks
 * of the pause are not run; a backfill runs them if they should be.
 */
public class PauseSchedule extends JournaledProcedure {
  public final SQLStmt pause = new SQLStmt("UPDATE APIARY_SCHEDULES SET paused = 1 WHERE queue_name = ?;");
  public final SQLStmt resume = new SQLStmt("UPDATE APIARY_SCHEDULES SET paused = 0, last_tick = ? "
      + "WHERE queue_name = ? AND paused = 1;");
  public final SQLStmt exists = new SQLStmt("SELECT paused FROM APIARY_SCHEDULES WHERE queue_name = ?;");

  /**
   * @param queueName the schedule's queue (the partitioning parameter)
   * @param paused 1 to pause, 0 to resume
   * @return 1 if the schedule exists (paused or resumed now, or already so), 0 if there is no such schedule
   */
  public long run(String queueName, int paused) {
    voltQueueSQL(exists, queueName);
    if (voltExecuteSQL()[0].getRowCount() == 0) {
      return committed(0L);
    }
    if (paused != 0) {
      voltQueueSQL(pause, queueName);
    } else {
      voltQueueSQL(resume, getTransactionTime(), queueName);
    }
    voltExecuteSQL(true);
    return committed(1L);
  }
}
