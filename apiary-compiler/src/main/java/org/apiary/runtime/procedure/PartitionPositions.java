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
  /** VoltDB's queue of the responses to a multi-partition transaction's fragments, or null if it has none. */
  private static final Field NEW_DEPS;
  /** Why {@link #NEW_DEPS} is null. */
  private static final String MISSING;

  static {
    Field field = null;
    String missing = null;
    try {
      field = MpTransactionState.class.getDeclaredField("m_newDeps");
      if (field.getType() != LinkedBlockingDeque.class) {
        missing = "its type is " + field.getType().getName() + ", not " + LinkedBlockingDeque.class.getName();
        field = null;
      } else {
        field.setAccessible(true);
      }
    } catch (ReflectiveOperationException | RuntimeException e) {
      missing = e.toString();
      field = null;
    }
    NEW_DEPS = field;
    MISSING = missing;
  }

  /** Partition to the position the first response from it carried. */
  private final transient Map<Integer, Long> positions = new HashMap<>();

  /** An empty recorder, not installed in any transaction (tests; {@link #of} installs one). */
  PartitionPositions() {}

  /**
   * The recorder of the running multi-partition transaction, installed at its first run; {@code null} for a
   * single-partition one. A restarted transaction (VoltDB runs its procedure again from the start, with the same
   * state, after a partition's leader failed) keeps what its earlier runs noted: each partition kept its part of the
   * transaction, and with it the position of its first fragment, which its writes carry (the drill saw the
   * restarted run's new positions miss them).
   */
  static PartitionPositions of(VoltProcedure procedure) {
    TransactionState txn = RunningTransaction.of(procedure);
    if (!(txn instanceof MpTransactionState mp)) {
      return null;
    }
    if (NEW_DEPS == null) {
      throw new IllegalStateException("Apiary cannot place this multi-partition transaction in the partitions' orders "
          + "for its provenance: it relies on VoltDB 9.3's MpTransactionState.m_newDeps (a LinkedBlockingDeque of "
          + "fragment responses), which this VoltDB (" + voltVersion() + ") does not have as such: " + MISSING);
    }
    try {
      Object queue = NEW_DEPS.get(mp);
      if (queue instanceof PartitionPositions p) {
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
    if (m != null) {
      note(m);
    }
    return m;
  }

  /**
   * Notes a response's position, if it reports a fragment the partition ran: a failed one (above all a misrouted one
   * that VoltDB sends again to the partition's new leader, as after a node rejoined and leadership moved back) names
   * no position the partition's writes carry, and noted first it would hide the one that does.
   */
  void note(FragmentResponseMessage m) {
    if (m.getStatusCode() == FragmentResponseMessage.SUCCESS && m.getSpHandle() >= 0) {
      positions.putIfAbsent(TxnEgo.getPartitionId(m.getSpHandle()), m.getSpHandle());
    }
  }

  private static String voltVersion() {
    try {
      return "version " + VoltDB.instance().getVersionString();
    } catch (RuntimeException e) {
      return "version unknown: " + e;
    }
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
