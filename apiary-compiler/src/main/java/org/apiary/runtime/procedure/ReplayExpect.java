package org.apiary.runtime.procedure;

import org.apiary.runtime.SystemSchema;
import org.apiary.runtime.journal.ServerJournal;
import org.voltdb.SQLStmt;
import org.voltdb.VoltProcedure;

/**
 * Tells every replica of one partition which journal records it replays next (the journal's
 * {@code encodeRecords}): a cluster's recovery sends it before those records, on the same connection, so each node
 * running the partition hands the replayed transactions the values their first run drew. A write (of the
 * partition's row of {@value SystemSchema#PARTITIONS}), so that every replica runs it, not only one.
 */
public class ReplayExpect extends VoltProcedure {
  public final SQLStmt touch = new SQLStmt("UPDATE " + SystemSchema.PARTITIONS + " SET mark = 0 WHERE pkey = ?;");

  /** @return how many records were queued */
  public long run(int partitionKey, byte[] records) {
    ServerJournal journal = ServerJournal.current();
    if (journal == null || !journal.replaying()) {
      throw new VoltAbortException("no journal replay is in progress on this node");
    }
    journal.expectBatch(records);
    voltQueueSQL(touch, partitionKey);
    voltExecuteSQL(true);
    return org.apiary.journal.JournalFormat.decodeRecords(records).size();
  }
}
