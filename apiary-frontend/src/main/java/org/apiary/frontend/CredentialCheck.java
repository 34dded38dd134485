package org.apiary.frontend;

import java.security.MessageDigest;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apiary.database.ApiaryDatabase;
import org.apiary.runtime.SystemSchema;
import org.voltdb.VoltTable;

/**
 * A frontend's view of the live credentials: read from the database at start and again by {@link #reload} (every
 * second), so a new key works and a revoked one stops working within a second. {@link #verify} runs on the socket
 * thread and never waits for the database.
 *
 * <p>Expiry is decided by the database's clock: a read skips keys whose {@code expires_at} has passed by the
 * database's {@code NOW}, and gets from the database how many milliseconds each other key has left. The console
 * (apiary-console) checks its callers' keys with it too, so a key means the same there as here. {@link #verify}
 * counts those down on this JVM's monotonic clock ({@link System#nanoTime}) from the moment before the read was sent,
 * so a key is refused once its expiry passes whether or not the keys were read again since, at most a round trip to
 * the database early, and the frontend's wall clock plays no part.
 */
public final class CredentialCheck {
  /** A live key; {@code expiresNanos} is on {@link System#nanoTime}'s scale, meaningful only if {@code expires}. */
  private record Live(byte[] secretSha256, String identity, java.util.Set<String> roles, boolean expires,
                      long expiresNanos) {
    boolean expiredAt(long nanoTime) {
      return expires && nanoTime - expiresNanos >= 0;
    }
  }

  /** What a request's credential established: the identity and its roles, or why it was refused. */
  public record Verdict(String identity, java.util.Set<String> roles, String refusal) {
    public boolean accepted() {
      return identity != null;
    }
  }

  private final ApiaryDatabase db;
  private volatile Map<String, Live> live = Map.of();

  /** Reads the live credentials of {@code db}. */
  public CredentialCheck(ApiaryDatabase db) {
    this.db = db;
    reload();
  }

  /** Reads the live credentials again: neither revoked nor expired, and the time each has left. */
  public void reload() {
    long asked = System.nanoTime(); // the database's NOW is later, so the deadlines below err early, never late
    VoltTable t = db.callAdmin("reading credentials", "@AdHoc", "SELECT key_id, secret_sha256, identity, roles, "
        + "SINCE_EPOCH(MILLISECOND, expires_at) - SINCE_EPOCH(MILLISECOND, NOW) FROM " + SystemSchema.CREDENTIALS
        + " WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > NOW)").getResults()[0];
    Map<String, Live> read = new HashMap<>();
    while (t.advanceRow()) {
      String keyId = t.getString(0);
      byte[] secretSha256 = t.getVarbinary(1);
      String identity = t.getString(2);
      java.util.Set<String> roles = Credentials.decodeRoles(t.getString(3));
      long leftMillis = t.getLong(4);
      boolean expires = !t.wasNull();
      long expiresNanos = expires ? asked + TimeUnit.MILLISECONDS.toNanos(leftMillis) : 0L;
      read.put(keyId, new Live(secretSha256, identity, roles, expires, expiresNanos));
    }
    live = read;
  }

  /** The identity and roles {@code apiKey} (or {@code null}: none given) establishes, or why it is refused. */
  public Verdict verify(String apiKey) {
    if (apiKey == null) {
      return new Verdict(null, null, "this frontend requires a credential, and the request has none; configure the "
          + "client with an API key (ClientConfig.withCredential)");
    }
    Credentials.Parsed parsed = Credentials.parse(apiKey).orElse(null);
    if (parsed == null) {
      return new Verdict(null, null, "the credential is not an Apiary API key (apiary_<16 hex digits>_<43 characters>)");
    }
    Live known = live.get(parsed.keyId());
    // The same answer for an unknown, expired and wrong key, so the answer does not tell which key IDs exist.
    if (known == null || known.expiredAt(System.nanoTime())
        || !MessageDigest.isEqual(known.secretSha256(), Credentials.sha256(parsed.secret()))) {
      return new Verdict(null, null, "API key " + parsed.keyId() + " is not valid here: unknown, revoked, expired or "
          + "wrong (a key created less than a second ago may not be known yet)");
    }
    return new Verdict(known.identity(), known.roles(), null);
  }
}
