package org.apiary.database;

import org.apiary.DatabaseException;
import org.apiary.runtime.SystemSchema;
import org.apiary.runtime.journal.ServerJournal;
import org.voltdb.VoltTable;
import org.voltdb.client.Client;

/**
 * A journaled cluster's checkpoint, told to every node through {@code JournalControl} (a multi-partition transaction
 * that reaches every site): each node notes its last record, the marker names the snapshot, the snapshot is taken
 * on every node, then each node deletes the journal segments and the snapshots it made redundant. One checkpointer
 * at a time: recovery's, before the cluster opens, and then the cluster's own ({@link NodeCheckpointer}, in the
 * node with the lowest live host ID); anyone else asks that one ({@link #request}).
 */
final class ClusterCheckpoints {
  private static long lastId;

  private ClusterCheckpoints() {}

  /**
   * Takes a checkpoint of timeline {@code timeline}.
   *
   * @param start whether this is recovery's checkpoint, after which every node writes {@code timeline}
   * @return its snapshot's nonce
   */
  static String take(Client admin, long timeline, boolean start) {
    long id = nextId();
    VoltTable begun = control(admin, start ? ServerJournal.NOTHING : ServerJournal.CHECKPOINT_BEGINS, id);
    int catalog = (int) begun.getLong("catalog_version");
    String nonce = nonce(timeline, id);
    DatabaseJournal.call(admin, "marking the journal's checkpoint", "@AdHoc", "UPSERT INTO "
        + DatabaseJournal.CHECKPOINT + " (id, timeline, nonce, catalog_version) VALUES (0, " + timeline + ", '"
        + nonce + "', " + catalog + ");");
    VoltTable result = DatabaseJournal.call(admin, "the journal's checkpoint snapshot", "@SnapshotSave",
        "{nonce:\"" + nonce + "\",block:true,format:\"native\"}").getResults()[0];
    StringBuilder failures = new StringBuilder();
    while (result.advanceRow()) {
      if (!"SUCCESS".equals(result.getString("RESULT"))) {
        failures.append("\n  host ").append(result.getLong("HOST_ID")).append(": ")
            .append(result.getString("ERR_MSG"));
      }
    }
    if (failures.length() > 0) {
      throw new DatabaseException("the checkpoint snapshot " + nonce + " failed:" + failures);
    }
    if (start) {
      control(admin, ServerJournal.START_WRITING, timeline);
    }
    control(admin, ServerJournal.CHECKPOINT_DONE, id);
    return nonce;
  }

  /** The snapshot nonce of checkpoint {@code id} of {@code timeline}. */
  static String nonce(long timeline, long id) {
    return DatabaseJournal.CHECKPOINT_PREFIX + Long.toHexString(timeline) + "_" + id;
  }

  /** A checkpoint ID: the time in milliseconds, more than the last one this process used. */
  private static synchronized long nextId() {
    lastId = Math.max(lastId + 1, System.currentTimeMillis());
    return lastId;
  }

  /**
   * Asks the cluster's checkpointer for a checkpoint and waits until one that started after the request completed,
   * at most {@code timeout}: the way a process other than the checkpointer's (a clean stop) makes everything so far
   * part of a checkpoint.
   */
  static void request(Client admin, java.time.Duration timeout) {
    long asked = System.currentTimeMillis();
    control(admin, ServerJournal.CHECKPOINT_REQUESTED, 0);
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      VoltTable t = DatabaseJournal.call(admin, "reading the journal's checkpoint", "@AdHoc", "SELECT nonce FROM "
          + DatabaseJournal.CHECKPOINT + " WHERE id = 0;").getResults()[0];
      if (t.advanceRow() && completedSince(admin, t.getString(0), asked)) {
        return;
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new DatabaseException("interrupted while waiting for a checkpoint", e);
      }
    }
    throw new DatabaseException("the cluster's checkpointer took no checkpoint within " + timeout + " of the request");
  }

  /** Whether the snapshot {@code nonce} started at or after {@code sinceMillis} and completed on every node. */
  private static boolean completedSince(Client admin, String nonce, long sinceMillis) {
    VoltTable t = DatabaseJournal.call(admin, "reading the snapshots' status", "@Statistics", "SNAPSHOTSTATUS", 0)
        .getResults()[0];
    boolean found = false;
    while (t.advanceRow()) {
      if (!nonce.equals(t.getString("NONCE"))) {
        continue;
      }
      if (t.getLong("START_TIME") < sinceMillis || t.getLong("END_TIME") <= 0
          || !"SUCCESS".equals(t.getString("RESULT"))) {
        return false;
      }
      found = true;
    }
    return found;
  }

  /** Runs {@code JournalControl}; its one row says how many partitions it reached and the catalog's version. */
  static VoltTable control(Client admin, int operation, long arg) {
    VoltTable t = DatabaseJournal.call(admin, "the journal's control operation " + operation,
        SystemSchema.JOURNAL_CONTROL, operation, arg).getResults()[0];
    t.advanceRow();
    return t;
  }
}
