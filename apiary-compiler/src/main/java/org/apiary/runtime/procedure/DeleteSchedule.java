package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;

/**
 * Deletes a schedule (issue 42): no tick of it is put on its queue after this; ticks already there still run.
 * Single-partition in its partition, journaled; the administrator's.
 */
public class DeleteSchedule extends JournaledProcedure {
  public final SQLStmt delete = new SQLStmt("DELETE FROM APIARY_SCHEDULES WHERE queue_name = ?;");

  /** @return 1 if it was there, else 0 */
  public long run(String queueName) {
    voltQueueSQL(delete, queueName);
    return committed(voltExecuteSQL(true)[0].asScalarLong());
  }
}
