package org.apiary.runtime.procedure;

import org.voltdb.SQLStmt;
import org.voltdb.types.TimestampType;

/**
 * Revokes an API key at this transaction's time: a write to a replicated table (a multi-partition transaction),
 * journaled, so a revocation from any process survives a crash of the server. The administrator's alone (schema
 * version 14): the frontends' database user may not call it.
 */
public class RevokeCredential extends JournaledProcedure {
  public final SQLStmt revoke = new SQLStmt("UPDATE APIARY_CREDENTIALS SET revoked_at = ? WHERE key_id = ? "
      + "AND revoked_at IS NULL;");

  /** @return 1 if the key was live and is revoked now, 0 if there is no live key with that ID */
  public long run(String keyId) {
    voltQueueSQL(revoke, new TimestampType(getTransactionTime().getTime() * 1000L), keyId);
    long revoked = voltExecuteSQL(true)[0].asScalarLong();
    return revoked == 0 ? 0 : committed(revoked);
  }
}
