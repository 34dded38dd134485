package org.apiary.runtime.procedure;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.apiary.provenance.ProvenanceRow;
import org.apiary.provenance.ProvenanceSchema;
import org.apiary.runtime.GraphAccess;
import org.apiary.runtime.provenance.ServerProvenance;
import org.voltdb.SQLStmt;
import org.voltdb.VoltProcedure;
import org.voltdb.VoltTable;

/**
 * Records a call a frontend refused by a graph's access policy in provenance ({@code DeniedCalls}), after checking,
 * inside the database, that the refusal is real: the row exists only for a check that the database itself ran and
 * that refused. Given the API key the caller presented (its ID and secret, never a hash: the frontends' user reads the
 * stored hashes, so a hash would prove nothing), it finds the key live by the transaction's clock (neither revoked nor
 * expired) and its secret's SHA-256 equal to the stored one, takes the caller's identity and roles from the key, and
 * runs the graph's access check ({@link GraphAccess}) on the graph version the frontend checked. It records a row only
 * if that check refuses, with the database's own message; otherwise it aborts and nothing is recorded. So the holder
 * of the frontends' database login cannot write a row naming a caller whose key it was not given, nor a refusal that
 * the graph's policy would not make, nor a reason of its own.
 *
 * <p>A call without a key (a frontend that requires none) is checked as an anonymous caller: such a row names no
 * caller, since nothing proves who called. The audit names only callers whose keys the database verified.
 *
 * <p>It hands the row to this server's provenance spooler, the path every function execution's row takes to the sink,
 * and records nothing when the deployment captures no provenance. It writes no table (a read-only single-partition
 * transaction, routed by the invocation ID: it runs once, on one replica), so the journal does not see it, and the
 * secret is never stored. This replaced {@code RecordDenial} (schema version 14), which recorded whatever it was given.
 */
public class CheckAndRecordDenial extends VoltProcedure {
  private static final Pattern KEY_ID = Pattern.compile("[0-9a-f]{16}");
  private static final Pattern SECRET = Pattern.compile("[A-Za-z0-9_-]{43}");

  public final SQLStmt key = new SQLStmt("SELECT secret_sha256, identity, roles FROM APIARY_CREDENTIALS "
      + "WHERE key_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > NOW);");
  public final SQLStmt graph = new SQLStmt("SELECT definition FROM APIARY_GRAPHS WHERE name = ? AND version = ?;");

  /**
   * Checks the refusal and offers its row to the spooler; loaded within the flush interval (or, with durable capture,
   * on disk when this returns).
   *
   * @param invocationId the invocation ID the client sent (routes the call)
   * @param denialId the frontend's unique ID for this refusal (the row's key, so a resent recording loads once)
   * @param keyId the ID of the API key the caller presented, or {@code null} for a call without one
   * @param secret that key's secret, or {@code null} for a call without one
   * @param graphName the graph called
   * @param graphVersion the version of it whose policy the frontend checked
   * @param purpose the purpose the call stated, or {@code null}
   * @return 1 if the row was handed to the spooler, 0 if this deployment captures no provenance
   * @throws VoltAbortException (nothing recorded) if the key is not a live key with that secret, the graph version does
   *     not exist, or its policy allows the call
   */
  public long run(String invocationId, String denialId, String keyId, String secret, String graphName,
                  long graphVersion, String purpose) {
    boolean keyed = keyId != null || secret != null;
    if (keyed && (keyId == null || secret == null || !KEY_ID.matcher(keyId).matches()
        || !SECRET.matcher(secret).matches())) {
      throw new VoltAbortException(noValidKey(keyId));
    }
    if (keyed) {
      voltQueueSQL(key, keyId);
    }
    voltQueueSQL(graph, graphName, graphVersion);
    VoltTable[] read = voltExecuteSQL(true);
    String caller = null;
    String roles = null;
    if (keyed) {
      VoltTable k = read[0];
      if (!k.advanceRow() || !MessageDigest.isEqual(k.getVarbinary(0), sha256(secret))) {
        throw new VoltAbortException(noValidKey(keyId));
      }
      caller = k.getString(1);
      roles = k.getString(2);
      if (roles != null && roles.isEmpty()) {
        roles = null;
      }
    }
    VoltTable g = read[read.length - 1];
    if (!g.advanceRow()) {
      throw new VoltAbortException("there is no graph '" + graphName + "' version " + graphVersion + ": no denial "
          + "recorded");
    }
    String reason;
    try {
      reason = GraphAccess.refusal(g.getVarbinary(0), caller, roles == null ? Set.of() : Set.of(roles.split(",")),
          purpose);
    } catch (RuntimeException e) {
      throw new VoltAbortException("graph '" + graphName + "' version " + graphVersion + " is stored in a form this "
          + "release cannot check (" + e.getMessage() + "): no denial recorded");
    }
    if (reason == null) {
      throw new VoltAbortException("graph '" + graphName + "' version " + graphVersion + " allows this call (caller "
          + (caller == null ? "anonymous" : "'" + caller + "'") + ", purpose " + purpose + "): there is no denial to "
          + "record");
    }
    var provenance = ServerProvenance.active();
    if (provenance.isEmpty()) {
      return 0;
    }
    provenance.get().offer(List.of(new ProvenanceRow(ProvenanceSchema.DENIED_CALLS, Arrays.asList(
        getTransactionTime().toInstant(), denialId, invocationId, caller, graphName, purpose, reason, roles))));
    return 1;
  }

  /** The refusal for a bad key, the same for every way it is bad, so it tells nothing about which keys exist. */
  private static String noValidKey(String keyId) {
    return "no valid API key " + (keyId != null && KEY_ID.matcher(keyId).matches() ? keyId + " " : "")
        + "with that secret (unknown, revoked, expired or wrong): no denial recorded";
  }

  /** SHA-256 of the secret's characters, as {@code Credentials} stores it. */
  private static byte[] sha256(String secret) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.US_ASCII));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("this JVM has no SHA-256", e);
    }
  }
}
