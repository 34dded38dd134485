package org.apiary.frontend;

import java.security.MessageDigest;
import java.util.HashMap;
import java.util.Map;
import org.apiary.database.ApiaryDatabase;
import org.apiary.runtime.SystemSchema;
import org.voltdb.VoltTable;

/**
 * A frontend's view of the live credentials: read from the database at start and again by {@link #reload} (every
 * second), so a new key works and a revoked one stops working within a second. {@link #verify} runs on the socket
 * thread and never waits for the database.
 */
final class CredentialCheck {
  private record Live(byte[] secretSha256, String identity, java.util.Set<String> roles) {}

  /** What a request's credential established: the identity and its roles, or why it was refused. */
  record Verdict(String identity, java.util.Set<String> roles, String refusal) {
    boolean accepted() {
      return identity != null;
    }
  }

  private final ApiaryDatabase db;
  private volatile Map<String, Live> live = Map.of();

  CredentialCheck(ApiaryDatabase db) {
    this.db = db;
    reload();
  }

  /** Reads the live credentials again. */
  void reload() {
    VoltTable t = db.callAdmin("reading credentials", "@AdHoc", "SELECT key_id, secret_sha256, identity, roles FROM "
        + SystemSchema.CREDENTIALS + " WHERE revoked_at IS NULL").getResults()[0];
    Map<String, Live> read = new HashMap<>();
    while (t.advanceRow()) {
      read.put(t.getString(0), new Live(t.getVarbinary(1), t.getString(2), Credentials.decodeRoles(t.getString(3))));
    }
    live = read;
  }

  Verdict verify(String apiKey) {
    if (apiKey == null) {
      return new Verdict(null, null, "this frontend requires a credential, and the request has none; configure the "
          + "client with an API key (ClientConfig.withCredential)");
    }
    Credentials.Parsed parsed = Credentials.parse(apiKey).orElse(null);
    if (parsed == null) {
      return new Verdict(null, null, "the credential is not an Apiary API key (apiary_<16 hex digits>_<43 characters>)");
    }
    Live known = live.get(parsed.keyId());
    // The same answer for an unknown and a wrong key, so the answer does not tell which key IDs exist.
    if (known == null || !MessageDigest.isEqual(known.secretSha256(), Credentials.sha256(parsed.secret()))) {
      return new Verdict(null, null, "API key " + parsed.keyId() + " is not valid here: unknown, revoked, or wrong "
          + "(a key created less than a second ago may not be known yet)");
    }
    return new Verdict(known.identity(), known.roles(), null);
  }
}
