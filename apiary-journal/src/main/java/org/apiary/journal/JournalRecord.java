package org.apiary.journal;

import java.util.Arrays;
import java.util.Objects;

/**
 * One committed write transaction as its partition executed it: enough to run it again in its place.
 *
 * @param sequence the journal's position: strictly increasing, in an order consistent with the execution order of
 *     every two transactions that touched a common partition
 * @param partition the partition that executed it ({@link #MULTI_PARTITION} for a multi-partition transaction)
 * @param txnId the database's transaction ID (for a single-partition transaction, its position in the partition)
 * @param uniqueId the unique ID the transaction drew; its time and seeded random numbers derive from it, so a re-run
 *     handed this value draws the same
 * @param catalogVersion the version of the database's catalog (schema and procedures) it ran under; a record under a
 *     catalog newer than the restored checkpoint's ran after a catalog change no checkpoint holds
 * @param resultHash a short hash of the transaction's result, to tell a re-run that diverged
 * @param procedure the stored procedure that ran
 * @param invocationId the Apiary invocation it executed for, or {@code null} if none
 * @param graph the graph that invocation ran, or {@code null} if none (or the record predates format version 3)
 * @param graphVersion the version of {@code graph} the invocation ran under, as the frontend that dispatched it knew
 *     it, or {@link #NO_GRAPH_VERSION}
 * @param parameters the procedure's parameters as they arrived, in the database's own serialization
 */
public record JournalRecord(long sequence, int partition, long txnId, long uniqueId, int catalogVersion, long resultHash,
                            String procedure, String invocationId, String graph, int graphVersion, byte[] parameters) {
  /** The partition number of multi-partition transactions (VoltDB's multi-partition initiator). */
  public static final int MULTI_PARTITION = 16383;
  /** The {@link #graphVersion} of a transaction that ran for no graph (or whose caller did not say which version). */
  public static final int NO_GRAPH_VERSION = 0;

  /** A record of a transaction that ran for no graph (as every record before format version 3 reads). */
  public JournalRecord(long sequence, int partition, long txnId, long uniqueId, int catalogVersion, long resultHash,
                       String procedure, String invocationId, byte[] parameters) {
    this(sequence, partition, txnId, uniqueId, catalogVersion, resultHash, procedure, invocationId, null,
        NO_GRAPH_VERSION, parameters);
  }

  public JournalRecord {
    Objects.requireNonNull(procedure, "procedure");
    Objects.requireNonNull(parameters, "parameters");
  }

  /**
   * A mark: the multi-partition transaction {@code multiPartitionTxnId} executed at this place in {@code partition}'s
   * order (its own record, with its procedure and parameters, is written by the node that coordinated it).
   */
  public static JournalRecord mark(long sequence, int partition, long multiPartitionTxnId, int catalogVersion) {
    return new JournalRecord(sequence, partition, multiPartitionTxnId, 0, catalogVersion, 0, "", null, new byte[0]);
  }

  /** Whether this is a {@link #mark} rather than a transaction to run. */
  public boolean isMark() {
    return procedure.isEmpty();
  }

  /** Whether this is a multi-partition transaction (a barrier on replay). */
  public boolean multiPartition() {
    return partition == MULTI_PARTITION;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof JournalRecord r && sequence == r.sequence && partition == r.partition && txnId == r.txnId
        && uniqueId == r.uniqueId && catalogVersion == r.catalogVersion && resultHash == r.resultHash && procedure.equals(r.procedure)
        && Objects.equals(invocationId, r.invocationId) && Objects.equals(graph, r.graph)
        && graphVersion == r.graphVersion && Arrays.equals(parameters, r.parameters);
  }

  @Override
  public int hashCode() {
    return Long.hashCode(sequence) * 31 + Arrays.hashCode(parameters);
  }

  @Override
  public String toString() {
    if (isMark()) {
      return "journal mark " + sequence + " (multi-partition transaction " + txnId + " on partition " + partition + ")";
    }
    return "journal record " + sequence + " (" + procedure + ", partition " + partition + ", transaction " + txnId
        + (invocationId == null ? "" : ", invocation " + invocationId)
        + (graph == null ? "" : ", graph " + graph + " version " + graphVersion) + ")";
  }
}
