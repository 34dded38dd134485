package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;
import org.voltdb.types.TimestampType;

/**
 * Moves retention's fence ({@code APIARY_RETENTION}) to a new cutoff before a retention pass deletes anything older,
 * never backwards: a recorded execution of an invocation that started before the fence refuses to run, because its
 * records may be gone. A multi-partition write of a replicated table, once per retention pass.
 */
public class AdvanceRetention extends JournaledProcedure {
  public final SQLStmt read = new SQLStmt("SELECT cutoff FROM APIARY_RETENTION WHERE id = 0;");
  public final SQLStmt insert = new SQLStmt("INSERT INTO APIARY_RETENTION (id, cutoff) VALUES (0, ?);");
  public final SQLStmt advance = new SQLStmt("UPDATE APIARY_RETENTION SET cutoff = ? WHERE id = 0;");

  /**
   * Advances the fence.
   *
   * @param cutoff the cutoff the coming retention pass applies
   * @return the fence after this call, in microseconds since the epoch: the later of {@code cutoff} and the one
   *     stored before
   */
  public long run(TimestampType cutoff) {
    voltQueueSQL(read);
    VoltTable stored = voltExecuteSQL()[0];
    if (!stored.advanceRow()) {
      voltQueueSQL(insert, cutoff);
    } else if (stored.getTimestampAsLong(0) < cutoff.getTime()) {
      voltQueueSQL(advance, cutoff);
    } else {
      return stored.getTimestampAsLong(0);
    }
    voltExecuteSQL(true);
    return committed(cutoff.getTime());
  }
}
