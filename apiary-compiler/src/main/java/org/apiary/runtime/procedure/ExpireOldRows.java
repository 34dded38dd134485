package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;
import org.voltdb.types.TimestampType;

/**
 * One step of retention in one partition: deletes at most {@code limit} of the partition's rows older than a cutoff,
 * oldest first, as a single-partition transaction. A frontend runs it for every partition (a key from
 * {@code @GetPartitionKeys} routes it) until a step deletes fewer than {@code limit}, so a retention pass never holds
 * every partition for as long as a whole interval's rows take to delete. One subclass per table, because a
 * partitioned procedure's routing parameter has its table's column type. Public, as are its members: VoltDB loads
 * the subclasses with its own class loader, which cannot reach package-private members of a class the application's
 * loader defined.
 */
public abstract class ExpireOldRows extends JournaledProcedure {
  /** Runs {@code expire} (parameters: cutoff, limit) and returns how many rows it deleted. */
  protected final long expire(SQLStmt expire, TimestampType cutoff, long limit) {
    voltQueueSQL(expire, cutoff, limit);
    return committed(voltExecuteSQL(true)[0].asScalarLong());
  }

  /** The statement of a subclass: its table's rows with {@code time} before the cutoff, oldest first, at most LIMIT. */
  protected static String sql(String table, String time, String filter, String order) {
    return "DELETE FROM " + table + " WHERE " + time + " < ?" + filter + " ORDER BY " + time + ", " + order
        + " LIMIT ?;";
  }
}
