package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;
import org.voltdb.types.TimestampType;

/**
 * Stores a new API key (its ID, the SHA-256 hash of its secret, never the secret), created at this transaction's time:
 * a write to a replicated table (a multi-partition transaction), journaled, so a key created from any process
 * survives a crash of the server (an ad-hoc insert from another process was durable only at the next checkpoint). The
 * administrator's alone (schema version 14): the frontends' database user may not call it.
 */
public class StoreCredential extends JournaledProcedure {
  public final SQLStmt insert = new SQLStmt("INSERT INTO APIARY_CREDENTIALS (key_id, secret_sha256, identity, "
      + "created_at, revoked_at, roles, expires_at) VALUES (?, ?, ?, ?, NULL, ?, ?);");

  /**
   * @param keyId the key's public part
   * @param secretSha256 the SHA-256 hash of its secret
   * @param identity who calls with it
   * @param roles its roles (sorted, comma-separated), or {@code null} for none
   * @param expiresInMillis how long after this transaction's time it expires; 0: never
   * @return 1
   */
  public long run(String keyId, byte[] secretSha256, String identity, String roles, long expiresInMillis) {
    if (expiresInMillis < 0) {
      throw new VoltAbortException("a key's expiry is 0 (never) or a positive number of milliseconds, not "
          + expiresInMillis);
    }
    long now = getTransactionTime().getTime();
    TimestampType expires = expiresInMillis == 0 ? null
        : new TimestampType(Math.multiplyExact(Math.addExact(now, expiresInMillis), 1000L));
    voltQueueSQL(insert, keyId, secretSha256, identity, new TimestampType(now * 1000L), roles, expires);
    return committed(voltExecuteSQL(true)[0].asScalarLong());
  }
}
