package org.apiary.runtime.procedure;

import java.util.Arrays;
import java.util.List;
import org.apiary.provenance.ProvenanceRow;
import org.apiary.provenance.ProvenanceSchema;
import org.apiary.runtime.provenance.ServerProvenance;
import org.voltdb.VoltProcedure;

/**
 * Schema version 6's denial recorder, which version 14 drops: it recorded whatever row it was given, so whoever could
 * call it (every frontend's database user) could forge an audit row. {@link CheckAndRecordDenial} replaced it; the
 * class stays because the shipped migration 6 creates the procedure before 14 drops it.
 *
 * <p>Records a call a frontend refused by a graph's access policy in provenance ({@code DeniedCalls}). It hands the row
 * to this server's provenance spooler, the path every function execution's row takes to the sink, so a frontend
 * never opens a connection of its own to the analytical database. It runs no SQL (a read-only single-partition
 * transaction, routed by the invocation ID: it runs once, on one replica), and records nothing when the deployment
 * captures no provenance.
 */
public class RecordDenial extends VoltProcedure {
  /**
   * Offers the refusal's row to the spooler; loaded within the flush interval (or, with durable capture, on disk
   * when this returns).
   *
   * @param invocationId the invocation ID the client sent (routes the call)
   * @param denialId the frontend's unique ID for this refusal (the row's key, so a resent recording loads once)
   * @param caller who called, or {@code null}
   * @param callerRoles the caller's roles (sorted, comma-separated), or {@code null}
   * @param graph the graph called
   * @param purpose the purpose the call stated, or {@code null}
   * @param reason the refusal's message, as the client got it
   * @return 1 if the row was handed to the spooler, 0 if this deployment captures no provenance
   */
  public long run(String invocationId, String denialId, String caller, String callerRoles, String graph,
                  String purpose, String reason) {
    var provenance = ServerProvenance.active();
    if (provenance.isEmpty()) {
      return 0;
    }
    provenance.get().offer(List.of(new ProvenanceRow(ProvenanceSchema.DENIED_CALLS, Arrays.asList(
        getTransactionTime().toInstant(), denialId, invocationId, caller, graph, purpose, reason, callerRoles))));
    return 1;
  }
}
