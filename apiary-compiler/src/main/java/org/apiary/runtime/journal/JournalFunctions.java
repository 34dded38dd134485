package org.apiary.runtime.journal;

/**
 * The SQL functions through which a cluster's multi-partition transactions reach each node's journal: VoltDB calls
 * a function of a row on the site that holds the row, so an {@code UPDATE} of {@code APIARY_PARTITIONS} (one row per
 * partition) calls it once on every site of every node (replicas included), while that site is blocked in the
 * transaction. Each returns 0, the same on every replica, as VoltDB requires of what a write stores.
 */
public class JournalFunctions {
  /** VoltDB instantiates the class. */
  public JournalFunctions() {}

  /** {@code apiary_journal_mark(partition, txnId, secret)}: see {@link ServerJournal#mark}. */
  public int mark(int partition, long txnId, long secret) {
    ServerJournal j = ServerJournal.current();
    if (j != null) {
      j.checkCaller(secret);
      j.mark(partition, txnId);
    }
    return 0;
  }

  /**
   * {@code apiary_journal_control(operation, arg, partition, secret)}: see {@link ServerJournal#control} (the
   * partition only makes the call depend on the row, so that it is made on every site); with
   * {@link ServerJournal#SYNC}, {@link ServerJournal#awaitDurable} instead.
   */
  public int control(int operation, long arg, int partition, long secret) {
    ServerJournal j = ServerJournal.current();
    if (j != null) {
      j.checkCaller(secret);
      if (operation == ServerJournal.SYNC) {
        j.awaitDurable();
      } else {
        j.control(operation, arg);
      }
    }
    return 0;
  }
}
