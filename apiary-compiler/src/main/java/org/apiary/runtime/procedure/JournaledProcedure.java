package org.apiary.runtime.procedure;

import java.nio.ByteBuffer;
import java.util.Date;
import java.util.Random;
import org.apiary.journal.JournalFormat;
import org.apiary.journal.JournalRecord;
import org.apiary.journal.JournalUnavailableException;
import org.apiary.runtime.journal.ServerJournal;
import org.voltdb.ParameterSet;
import org.voltdb.VoltProcedure;
import org.voltdb.VoltTable;
import org.voltdb.dtxn.TransactionState;
import org.voltdb.iv2.UniqueIdGenerator;

/**
 * The base of every Apiary procedure that writes: at the end of a committed run it hands its transaction to the
 * server's journal ({@link ServerJournal}), and the values it draws from VoltDB (unique ID, transaction time, seeded
 * random numbers) are, when the journal replays it after a crash, the ones its first run drew. A subclass returns
 * through one of the {@code committed} methods, as the very last thing it does: a transaction that returns normally
 * commits, so its record must be handed over only then, and a refusal by the journal rolls it back.
 */
public abstract class JournaledProcedure extends VoltProcedure {
  /** VoltDB's own unique ID of the transaction the fields below describe. */
  private long drawnFor = Long.MIN_VALUE;
  private long drawn;
  private Random random;
  private JournalRecord replaying;
  /** The unique ID of the transaction whose partitions were last marked (see {@link MarksPartitions}). */
  private long markedFor = Long.MIN_VALUE;

  /** Sets the drawn values up once per transaction (VoltDB reuses a procedure instance across transactions). */
  private void begin() {
    long real = super.getUniqueId();
    if (real == drawnFor) {
      return;
    }
    drawnFor = real;
    random = null;
    ServerJournal journal = ServerJournal.current();
    replaying = journal != null && journal.replaying() ? journal.expect(partition(), procedureName(), parameters())
        : null;
    drawn = replaying != null ? replaying.uniqueId() : real;
  }

  /**
   * Runs a batch; a multi-partition procedure that {@link MarksPartitions marks partitions} adds its mark to its final
   * batch (the transaction's last, so every partition's site is blocked in it), and the mark's result is not
   * returned. A batch cannot follow a final one, so this is where the mark goes.
   */
  @Override
  public VoltTable[] voltExecuteSQL(boolean isFinalSQL) {
    if (!isFinalSQL || !needsMark()) {
      return super.voltExecuteSQL(isFinalSQL);
    }
    voltQueueSQL(((MarksPartitions) this).partitionMark(), transaction().txnId, ServerJournal.current().secret());
    VoltTable[] all = super.voltExecuteSQL(true);
    markedFor = drawnFor;
    return java.util.Arrays.copyOf(all, all.length - 1);
  }

  private boolean needsMark() {
    ServerJournal journal = ServerJournal.current();
    if (!(this instanceof MarksPartitions) || journal == null || !journal.marksPartitions()
        || transaction().isSinglePartition() || !journalsThisTransaction()) {
      return false;
    }
    begin();
    return markedFor != drawnFor;
  }

  /**
   * Whether this transaction will be journaled (it writes): only then does a multi-partition one mark partitions.
   * Procedures that always write need not override it.
   */
  protected boolean journalsThisTransaction() {
    return true;
  }

  /** The unique ID this transaction draws: VoltDB's, or on replay the first run's. */
  @Override
  public long getUniqueId() {
    begin();
    return drawn;
  }

  /** The transaction's time, derived from {@link #getUniqueId()} exactly as VoltDB derives it. */
  @Override
  public Date getTransactionTime() {
    return new Date(UniqueIdGenerator.getTimestampFromUniqueId(getUniqueId()));
  }

  /** Random numbers seeded with {@link #getUniqueId()}, as VoltDB seeds them; the same generator for the whole run. */
  @Override
  public Random getSeededRandomNumberGenerator() {
    begin();
    if (random == null) {
      random = new Random(drawn);
    }
    return random;
  }

  /** Journals this committed transaction (see the class comment) and returns {@code result}. */
  protected final long committed(long result) {
    journal(null, result);
    return result;
  }

  /** Journals this committed transaction and returns {@code result}. */
  protected final VoltTable committed(VoltTable result) {
    journal(null, hash(new VoltTable[] {result}));
    return result;
  }

  /** Journals this committed transaction and returns {@code result}. */
  protected final VoltTable[] committed(VoltTable[] result) {
    journal(null, hash(result));
    return result;
  }

  /** Journals this committed transaction of {@code invocationId}, whose result hashes to {@code resultHash}. */
  protected final void journal(String invocationId, long resultHash) {
    journal(invocationId, null, null, resultHash);
  }

  /**
   * Journals this committed transaction of {@code invocationId}, an invocation of version {@code graphVersion} of
   * {@code graph} (either {@code null}: not known), whose result hashes to {@code resultHash}.
   */
  protected final void journal(String invocationId, String graph, Integer graphVersion, long resultHash) {
    ServerJournal journal = ServerJournal.current();
    if (journal == null) {
      return;
    }
    begin();
    if (replaying != null) {
      journal.replayed(replaying, resultHash);
      return;
    }
    if (journal.replaying()) {
      return; // a transaction recovery runs besides the replay (none do): nothing to compare it with
    }
    if (needsMark()) { // it ran no final batch: the mark is one of its own
      voltExecuteSQL(true);
    }
    TransactionState txn = transaction();
    try {
      journal.append(partition(), txn.txnId, drawn, ServerJournal.catalogVersion(), resultHash, procedureName(),
          invocationId, graph, graphVersion == null ? JournalRecord.NO_GRAPH_VERSION : graphVersion, parameters());
    } catch (JournalUnavailableException e) {
      throw new VoltAbortException("the write was refused and rolled back: " + e.getMessage());
    }
  }

  /** The hash the journal keeps of a result. */
  static long hash(VoltTable[] tables) {
    long h = 0;
    for (VoltTable t : tables) {
      ByteBuffer b = ByteBuffer.allocate(t.getSerializedSize());
      t.flattenToBuffer(b);
      h = h * 31 + JournalFormat.hash(b.array());
    }
    return h;
  }

  private TransactionState transaction() {
    return RunningTransaction.of(this);
  }

  private int partition() {
    return transaction().isSinglePartition() ? RunningTransaction.sitePartition(this) : JournalRecord.MULTI_PARTITION;
  }

  private String procedureName() {
    return transaction().getInvocation().getProcName();
  }

  private byte[] parameters() {
    ParameterSet params = transaction().getInvocation().getParams();
    ByteBuffer b = ByteBuffer.allocate(params.getSerializedSize());
    try {
      params.flattenToBuffer(b);
    } catch (java.io.IOException e) {
      throw new IllegalStateException("cannot serialize the transaction's parameters for the journal: "
          + e.getMessage(), e);
    }
    return b.array();
  }
}
