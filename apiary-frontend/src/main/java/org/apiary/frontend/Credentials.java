package org.apiary.frontend;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apiary.database.ApiaryDatabase;
import org.apiary.runtime.SystemSchema;
import org.voltdb.VoltTable;
import org.voltdb.types.TimestampType;

/**
 * API keys: who may call a frontend that requires credentials ({@link FrontendConfig#credentialsRequired()}), and
 * the identity recorded in provenance for each call.
 *
 * <p>A key is {@code apiary_<key ID>_<secret>}: a 16-hex-digit ID and 32 random bytes. The database keeps the ID,
 * the SHA-256 hash of the secret and the identity, never the key itself, so reading the system tables does not give
 * anyone a key. (A fast hash is enough: the secret is random, not a password a person chose, so it cannot be
 * guessed from its hash.) The key is shown once, when it is created; a lost key is revoked and replaced.
 *
 * <p>A key has roles, which graphs' {@link org.apiary.AccessPolicy access policies} name; the role
 * {@value #ADMIN_ROLE} may call every graph. Roles are fixed when the key is created (to change them, create a new key
 * and revoke the old one), so what a key could do is in the table for as long as the key is. Keys stored before
 * roles existed have none.
 *
 * <p>Invocation IDs are scoped by identity: where credentials are required, the ID a client sends names an
 * invocation of its key's identity only, stored as {@link #invocationId(String, String) IDENTITY/ID}. Another
 * identity's request with the same ID is another invocation (it runs as an unknown ID would, and its
 * {@code result(id)} is answered as for an unknown ID); its outcome is never told to anyone else, except to keys with
 * the role {@value #ADMIN_ROLE}, which name it as {@code IDENTITY/ID}.
 *
 * <p>A key may expire ({@link #create(ApiaryDatabase, String, Set, Duration)}): its expiry is the database's clock
 * ({@code NOW}) when it is created plus the given duration, stored with the key, and the database's clock decides
 * when it has passed (see {@link CredentialCheck}). An expired key is refused like a revoked one. Keys created without
 * an expiry, and keys stored before expiry existed, never expire.
 */
public final class Credentials {
  private static final Pattern KEY = Pattern.compile("apiary_([0-9a-f]{16})_([A-Za-z0-9_-]{43})");
  private static final Pattern IDENTITY = Pattern.compile("[A-Za-z0-9_.@:-]{1,128}");
  private static final SecureRandom RANDOM = new SecureRandom();
  /** The role that may call every graph, for any purpose: {@code apiary start}'s admin key has it. */
  public static final String ADMIN_ROLE = org.apiary.AccessPolicy.ADMIN_ROLE;
  /** The shortest expiry a key may be created with. */
  public static final Duration MIN_EXPIRY = Duration.ofSeconds(1);
  /** The longest expiry a key may be created with (100 years; for a key that never expires, give none). */
  public static final Duration MAX_EXPIRY = Duration.ofDays(36_525);

  /**
   * A new credential.
   *
   * @param keyId the key's public part, by which it is listed and revoked
   * @param identity who calls with it
   * @param apiKey the whole key, to give to the client; not stored anywhere, so keep it now
   */
  public record Issued(String keyId, String identity, String apiKey) {
    /** Everything but the key. */
    @Override
    public String toString() {
      return "Issued[keyId=" + keyId + ", identity=" + identity + "]";
    }
  }

  /**
   * A stored credential.
   *
   * @param keyId the key's public part
   * @param identity who calls with it
   * @param roles its roles
   * @param revoked whether it was revoked
   * @param expiresAt when it expires, by the database's clock; {@code null} if it never does
   * @param expired whether its expiry had passed, by the database's clock, when it was read
   */
  public record Stored(String keyId, String identity, Set<String> roles, boolean revoked, Instant expiresAt,
                       boolean expired) {
    public Stored {
      roles = Set.copyOf(roles);
    }

    /** A credential that never expires. */
    public Stored(String keyId, String identity, Set<String> roles, boolean revoked) {
      this(keyId, identity, roles, revoked, null, false);
    }
  }

  private Credentials() {}

  /** Creates a key without roles for {@code identity} (1 to 128 letters, digits or {@code _ . @ : -}). */
  public static Issued create(ApiaryDatabase db, String identity) {
    return create(db, identity, Set.of());
  }

  /**
   * Creates a key for {@code identity} (1 to 128 letters, digits or {@code _ . @ : -}) with roles (each 1 to 64
   * letters, digits or {@code _ . : -}; at most 1,024 characters together).
   */
  public static Issued create(ApiaryDatabase db, String identity, Set<String> roles) {
    return create(db, identity, roles, null);
  }

  /**
   * Creates a key for {@code identity} with roles (as {@link #create(ApiaryDatabase, String, Set)}) that expires
   * {@code expiresIn} after the database's clock at its creation; {@code null}: it never expires.
   *
   * @throws IllegalArgumentException if the identity or a role is malformed, or {@code expiresIn} is not between
   *     {@link #MIN_EXPIRY} and {@link #MAX_EXPIRY}
   */
  public static Issued create(ApiaryDatabase db, String identity, Set<String> roles, Duration expiresIn) {
    Objects.requireNonNull(identity, "identity");
    String encodedRoles = encodeRoles(roles);
    if (expiresIn != null && (expiresIn.compareTo(MIN_EXPIRY) < 0 || expiresIn.compareTo(MAX_EXPIRY) > 0)) {
      throw new IllegalArgumentException("a key's expiry is between " + MIN_EXPIRY.toSeconds() + " second and "
          + MAX_EXPIRY.toDays() + " days, not " + expiresIn);
    }
    if (!IDENTITY.matcher(identity).matches()) {
      throw new IllegalArgumentException("an identity is 1 to 128 letters, digits, '_', '.', '@', ':' or '-', not '"
          + identity + "'");
    }
    SystemSchema.ensure(db);
    byte[] id = new byte[8];
    byte[] secret = new byte[32];
    RANDOM.nextBytes(id);
    RANDOM.nextBytes(secret);
    String keyId = HexFormat.of().formatHex(id);
    String secretText = Base64.getUrlEncoder().withoutPadding().encodeToString(secret);
    // A journaled procedure of the administrator's (an ad-hoc insert from another process than the server's was
    // durable only at the server's next checkpoint).
    db.callAdmin("storing a credential for " + identity, SystemSchema.STORE_CREDENTIAL, keyId, sha256(secretText),
        identity, encodedRoles, expiresIn == null ? 0L : expiresIn.toMillis());
    db.awaitDurable("storing a credential for " + identity); // a synchronously journaled cluster: on every disk
    return new Issued(keyId, identity, "apiary_" + keyId + "_" + secretText);
  }

  /**
   * The ID under which a frontend that requires credentials stores the invocation {@code identity} started with
   * the client's invocation ID {@code id}: {@code identity + "/" + id} (an identity has no '/', so the first one
   * ends it). It is the invocation's ID in the invocation log, the recorded outputs, provenance and
   * {@code apiary executions}, and the name by which a key with the role {@value #ADMIN_ROLE} fetches another
   * identity's result. A frontend that does not require credentials stores the client's ID as it is.
   *
   * @throws IllegalArgumentException if {@code identity} is not a valid identity or {@code id} is empty
   */
  public static String invocationId(String identity, String id) {
    Objects.requireNonNull(identity, "identity");
    Objects.requireNonNull(id, "id");
    if (!IDENTITY.matcher(identity).matches()) {
      throw new IllegalArgumentException("an identity is 1 to 128 letters, digits, '_', '.', '@', ':' or '-', not '"
          + identity + "'");
    }
    if (id.isEmpty()) {
      throw new IllegalArgumentException("an invocation ID is not empty");
    }
    return identity + "/" + id;
  }

  /** Revokes a key: frontends refuse it within a second. Returns whether a key with that ID was live. */
  public static boolean revoke(ApiaryDatabase db, String keyId) {
    SystemSchema.ensure(db);
    boolean live = db.callAdmin("revoking credential " + keyId, SystemSchema.REVOKE_CREDENTIAL, keyId).getResults()[0]
        .asScalarLong() > 0;
    db.awaitDurable("revoking credential " + keyId);
    return live;
  }

  /** Every stored credential (never the keys). */
  public static List<Stored> list(ApiaryDatabase db) {
    List<Stored> all = new ArrayList<>();
    if (!SystemSchema.tables(db).contains(SystemSchema.CREDENTIALS)) {
      return all;
    }
    SystemSchema.ensure(db); // a table from before roles or expiry gains its columns
    VoltTable t = db.callAdmin("listing credentials", "@AdHoc", "SELECT key_id, identity, revoked_at, roles, "
        + "expires_at, CASE WHEN expires_at <= NOW THEN 1 ELSE 0 END FROM " + SystemSchema.CREDENTIALS
        + " ORDER BY key_id").getResults()[0];
    while (t.advanceRow()) {
      String keyId = t.getString(0);
      String identity = t.getString(1);
      t.getTimestampAsTimestamp(2);
      boolean revoked = !t.wasNull();
      String roles = t.getString(3);
      TimestampType expiry = t.getTimestampAsTimestamp(4);
      Instant expiresAt = t.wasNull() ? null : Instant.EPOCH.plus(expiry.getTime(), ChronoUnit.MICROS);
      all.add(new Stored(keyId, identity, decodeRoles(roles), revoked, expiresAt, t.getLong(5) == 1));
    }
    return all;
  }

  /** Roles as stored: sorted, comma-separated; {@code null} for none. */
  static String encodeRoles(Set<String> roles) {
    Objects.requireNonNull(roles, "roles");
    for (String role : roles) {
      if (!org.apiary.AccessPolicy.validName(role)) {
        throw new IllegalArgumentException("a role is 1 to 64 letters, digits, '_', '.', ':' or '-', not '" + role
            + "'");
      }
    }
    String encoded = String.join(",", new TreeSet<>(roles));
    if (encoded.length() > 1024) {
      throw new IllegalArgumentException("a key's roles may take 1,024 characters together, not " + encoded.length());
    }
    return encoded.isEmpty() ? null : encoded;
  }

  /** The roles {@link #encodeRoles} stored ({@code null}: none). */
  static Set<String> decodeRoles(String stored) {
    return stored == null || stored.isEmpty() ? Set.of() : Set.of(stored.split(","));
  }

  /** The key ID and secret of a well-formed key. */
  record Parsed(String keyId, String secret) {}

  static Optional<Parsed> parse(String apiKey) {
    if (apiKey == null) {
      return Optional.empty();
    }
    Matcher m = KEY.matcher(apiKey);
    return m.matches() ? Optional.of(new Parsed(m.group(1), m.group(2))) : Optional.empty();
  }

  static byte[] sha256(String secret) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.US_ASCII));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("this JVM has no SHA-256", e);
    }
  }
}
