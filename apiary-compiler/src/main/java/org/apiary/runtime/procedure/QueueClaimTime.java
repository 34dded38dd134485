package org.apiary.runtime.procedure;

import java.util.Date;
import org.voltdb.VoltTable;
import org.voltdb.VoltType;

/**
 * The second table that a claim, a takeover or a confirmation of queue items returns (issue 42): the database time
 * of that transaction in milliseconds since the epoch, one row. A frontend may start a claimed item's invocation only
 * within the retention of that time (less the clock skew), which bounds how late a frontend paused after the claim can
 * start it: by then any other run of the item is still in the invocation log, where the start finds it.
 */
public final class QueueClaimTime {
  private QueueClaimTime() {}

  /** The table holding {@code at}. */
  public static VoltTable of(Date at) {
    VoltTable t = new VoltTable(new VoltTable.ColumnInfo("at_ms", VoltType.BIGINT));
    t.addRow(at.getTime());
    return t;
  }
}
