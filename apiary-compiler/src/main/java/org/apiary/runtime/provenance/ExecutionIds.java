package org.apiary.runtime.provenance;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apiary.provenance.ProvenanceSchema;

/**
 * Apiary's identity of a function execution ({@code exec_id}) and its place in its partition's order
 * ({@code tx_id}, {@code exec_seq}, {@code partition_id}); see {@link ProvenanceSchema}.
 *
 * <p>What VoltDB 9.3 gives a procedure (verified against the embedded server): a writing single-partition transaction
 * gets a new transaction ID, which is also its position in the partition's serial order (its "SP handle") and the ID
 * VoltDB's export stamps on its writes; its replicas run it with the same ID. A read-only single-partition
 * transaction gets no ID of its own: it is handed the partition's last SP handle (that of the writer before it, or of
 * a multi-partition transaction's part on the partition), shared by every read-only transaction until the next
 * write, and its unique ID is only a millisecond time with a zero counter. It runs once, on one replica. A
 * multi-partition transaction gets a new transaction ID from the multi-partition initiator (partition
 * {@value ProvenanceSchema#MULTI_PARTITION}), but its writes are exported with the SP handle each partition gave it.
 *
 * <p>So a transaction with an ID of its own is identified by that ID, deterministically on every replica, and a
 * read-only single-partition transaction by the ID it follows, its number among the read-only transactions that
 * followed it on this server, and this server process's random identity: unique, since the partition's SP handle
 * never goes back within a process, and counting restarts only in another process.
 */
public final class ExecutionIds {
  /** This server process's identity in the {@code exec_id} of read-only executions. */
  private static final String SERVER = HexFormat.of().toHexDigits(new SecureRandom().nextLong());
  private static final Map<Integer, ReadCounter> READS = new ConcurrentHashMap<>();

  private ExecutionIds() {}

  /**
   * An execution's identity and position.
   *
   * @param execId the {@code exec_id}
   * @param txId VoltDB's transaction ID: the partition's position for single-partition transactions and exported
   *     writes, the multi-partition transaction ID for a multi-partition execution's own row and reads
   * @param execSeq 0, or for a read-only single-partition execution its number after {@code txId}, from 1
   * @param partitionId the partition, or {@value ProvenanceSchema#MULTI_PARTITION} for a multi-partition execution
   */
  public record ExecutionId(String execId, long txId, long execSeq, int partitionId) {}

  /**
   * The identity of the running transaction.
   *
   * @param txId the transaction ID VoltDB gave it
   * @param readOnly whether VoltDB runs it as a read-only transaction
   * @param singlePartition whether it is single-partition
   * @param partitionId the partition of the site running the procedure
   */
  public static ExecutionId of(long txId, boolean readOnly, boolean singlePartition, int partitionId) {
    if (!readOnly || !singlePartition) {
      return new ExecutionId(Long.toString(txId), txId, 0, partitionId);
    }
    long seq = READS.computeIfAbsent(partitionId, p -> new ReadCounter()).next(txId);
    return new ExecutionId(txId + "r" + seq + "@" + SERVER, txId, seq, partitionId);
  }

  /** The identity of the transaction that made an exported write: the ID export carries. */
  public static ExecutionId ofExportedWrite(long txId, int partitionId) {
    return new ExecutionId(Long.toString(txId), txId, 0, partitionId);
  }

  /** Numbers the read-only transactions that follow one transaction on a partition. */
  private static final class ReadCounter {
    private long after;
    private long count;

    synchronized long next(long txId) {
      if (count == 0 || txId != after) {
        after = txId;
        count = 0;
      }
      return ++count;
    }
  }
}
