package org.apiary.runtime.procedure;

import org.apiary.runtime.SystemSchema;
import org.apiary.runtime.journal.ServerJournal;
import org.voltdb.SQLStmt;
import org.voltdb.VoltProcedure;

/**
 * The durable watermark of a synchronously journaled cluster, as a reply holder in another process reaches it:
 * returns once every node that holds the partition has on disk every journal record it appended before this call
 * reached it ({@link ServerJournal#awaitDurable}). A write of the partition's row of {@value SystemSchema#PARTITIONS}
 * through {@code apiary_journal_control}, so that every replica runs it and VoltDB answers only once all of them
 * have; it changes nothing and is not journaled. See {@code org.apiary.database.ClusterDurability}.
 */
public class JournalSync extends VoltProcedure {
  public final SQLStmt sync = new SQLStmt("UPDATE " + SystemSchema.PARTITIONS
      + " SET mark = apiary_journal_control(?, 0, partition_id, ?) WHERE pkey = ?;");

  /**
   * @return the version of the catalog it ran under (the same on every replica): the records before it are
   *     replayable only on a checkpoint that holds that catalog, which the caller waits for
   */
  public long run(int partitionKey) {
    ServerJournal journal = ServerJournal.current();
    voltQueueSQL(sync, ServerJournal.SYNC, journal == null ? 0L : journal.secret(), partitionKey);
    voltExecuteSQL(true);
    return ServerJournal.catalogVersion();
  }
}
