package org.apiary.runtime.procedure;

import java.lang.reflect.Field;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.TimeUnit;
import org.voltdb.TheHashinator;
import org.voltdb.VoltDB;
import org.voltdb.VoltProcedure;
import org.voltdb.VoltType;
import org.voltdb.catalog.Column;
import org.voltdb.catalog.Table;
import org.voltdb.dtxn.TransactionState;
import org.voltdb.iv2.MpTransactionState;
import org.voltdb.iv2.TxnEgo;
import org.voltdb.messaging.FragmentResponseMessage;

/**
 * The positions a multi-partition transaction has in the serial orders of the partitions it reaches, as its
 * coordinator learns them. Each partition's leader gives the transaction's first fragment there a position (SP handle)
 * of the partition's order, and the partition's site runs all of the transaction's fragments under that one position
 * (VoltDB's {@code TransactionState.m_spHandle} is final): its exported writes carry it, and a single-partition
 * transaction before or after it on that partition has a smaller or greater one. Every fragment's response carries the
 * position, and the coordinator takes the responses from one queue ({@code MpTransactionState.m_newDeps}, on the
 * procedure's own thread): this replaces that queue with one that notes each response's partition and position. Call
 * {@link #of} from the procedure's thread, at the start of its run, before its first batch.
 */
final class PartitionPositions extends LinkedBlockingDeque<FragmentResponseMessage> {
  private static final long serialVersionUID = 1L;
  private static final Field NEW_DEPS;

  static {
    try {
      NEW_DEPS = MpTransactionState.class.getDeclaredField("m_newDeps");
      NEW_DEPS.setAccessible(true);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError("this VoltDB version has no MpTransactionState.m_newDeps; Apiary cannot "
          + "place multi-partition transactions in the partitions' orders: " + e);
    }
  }

  /** Partition to the position the first response from it carried. */
  private final transient Map<Integer, Long> positions = new HashMap<>();

  private PartitionPositions() {}

  /**
   * The recorder of the running multi-partition transaction, installed if need be and emptied for this run (VoltDB
   * runs a restarted transaction's procedure again from its start); {@code null} for a single-partition one.
   */
  static PartitionPositions of(VoltProcedure procedure) {
    TransactionState txn = RunningTransaction.of(procedure);
    if (!(txn instanceof MpTransactionState mp)) {
      return null;
    }
    try {
      Object queue = NEW_DEPS.get(mp);
      if (queue instanceof PartitionPositions p) {
        p.positions.clear();
        return p;
      }
      PartitionPositions p = new PartitionPositions();
      @SuppressWarnings("unchecked")
      LinkedBlockingDeque<FragmentResponseMessage> old = (LinkedBlockingDeque<FragmentResponseMessage>) queue;
      old.drainTo(p);
      NEW_DEPS.set(mp, p);
      old.drainTo(p); // nothing should arrive before the first batch is sent; should anything have, it is kept
      return p;
    } catch (IllegalAccessException e) {
      throw new IllegalStateException("cannot follow the running transaction's responses: " + e.getMessage(), e);
    }
  }

  @Override
  public FragmentResponseMessage poll(long timeout, TimeUnit unit) throws InterruptedException {
    FragmentResponseMessage m = super.poll(timeout, unit);
    // A response names its partition only by its position (a TxnEgo: the partition is in its low bits); the
    // coordinator's own collecting fragment answers without one (Long.MIN_VALUE). Measured (embedded, 2 partitions):
    // a writing transaction's batches get a new position each, but the partition runs (and exports) them all under
    // the first; a read-only one is given the partition's last position.
    if (m != null && m.getSpHandle() >= 0) {
      positions.putIfAbsent(TxnEgo.getPartitionId(m.getSpHandle()), m.getSpHandle());
    }
    return m;
  }

  /** The transaction's position on each partition it reached so far. */
  Map<Integer, Long> positions() {
    return positions;
  }

  /**
   * The partition holding a row of {@code table} with these primary-key values (the partition column is part of
   * every partitioned table's primary key), or -1 for a replicated table or a key without its partition column.
   */
  static int partitionOf(String table, List<String> keyColumns, List<Object> keyValues) {
    Table t = VoltDB.instance().getCatalogContext().database.getTables().getIgnoreCase(table);
    if (t == null || t.getIsreplicated() || t.getPartitioncolumn() == null) {
      return -1;
    }
    Column column = t.getPartitioncolumn();
    for (int i = 0; i < keyColumns.size(); i++) {
      if (keyColumns.get(i).equalsIgnoreCase(column.getTypeName()) && keyValues.get(i) != null) {
        return TheHashinator.getPartitionForParameter(VoltType.get((byte) column.getType()), keyValues.get(i));
      }
    }
    return -1;
  }
}
