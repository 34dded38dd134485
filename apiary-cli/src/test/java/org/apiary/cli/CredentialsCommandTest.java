package org.apiary.cli;

import static org.apiary.cli.InProcessCli.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import org.apiary.cli.InProcessCli.Run;
import org.apiary.frontend.Credentials;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code apiary credentials create|list|revoke} against the test database (issue 14: keys with roles, keys that
 * expire).
 */
@DatabaseTest
class CredentialsCommandTest {
  @Test
  void aKeyWithRolesIsCreatedListedAndRevoked(TestDatabase database, @TempDir Path dir) throws Exception {
    String address = String.join(",", database.database().clientAddresses());
    Path keyFile = dir.resolve("ward.key");
    Run created = run("credentials", "create", "--identity", "cli-ward", "--role", "nurse,clerk", "--key-file",
        keyFile.toString(), "--database", address);
    assertEquals(0, created.code(), created.err());
    String key = Files.readString(keyFile).strip();
    assertTrue(key.matches("apiary_[0-9a-f]{16}_[A-Za-z0-9_-]{43}"), key);
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(keyFile)));
    assertTrue(!created.out().contains(key.substring(24)), "the key was printed: " + created.out());
    String keyId = key.substring("apiary_".length(), "apiary_".length() + 16);
    assertTrue(Credentials.list(database.database()).stream().anyMatch(c -> c.keyId().equals(keyId)
        && c.identity().equals("cli-ward") && c.roles().equals(Set.of("clerk", "nurse")) && !c.revoked()));

    Run listed = run("credentials", "list", "--database", address);
    assertEquals(0, listed.code(), listed.err());
    assertTrue(listed.out().lines().anyMatch(l -> l.contains(keyId) && l.contains("cli-ward")
        && l.contains("clerk,nurse") && l.contains("no")), listed.out());

    assertEquals(0, run("credentials", "revoke", keyId, "--database", address).code());
    Run again = run("credentials", "revoke", keyId, "--database", address);
    assertEquals(1, again.code(), again.out());
    assertTrue(again.err().contains("no live key with ID " + keyId), again.err());

    Run badRole = run("credentials", "create", "--identity", "cli-x", "--role", "no spaces", "--database", address);
    assertEquals(2, badRole.code(), badRole.err());
    assertTrue(badRole.err().contains("'no spaces'"), badRole.err());
  }

  @Test
  void aKeyWithAnExpiryIsListedWithItAndABadExpiryIsRefusedNamingTheOption(TestDatabase database) {
    String address = String.join(",", database.database().clientAddresses());
    Instant before = Instant.now();
    Run created = run("credentials", "create", "--identity", "cli-temp", "--expires-in", "30d", "--database",
        address);
    assertEquals(0, created.code(), created.err());
    assertTrue(created.out().contains("expiring in 30d"), created.out());
    String keyId = created.out().substring("created key ".length(), "created key ".length() + 16);
    Credentials.Stored stored = Credentials.list(database.database()).stream()
        .filter(c -> c.keyId().equals(keyId)).findFirst().orElseThrow();
    assertTrue(stored.expiresAt() != null && !stored.expired(), stored.toString());
    // The database's clock set it; this machine's clock agrees with it to well within a day.
    assertTrue(Duration.between(before, stored.expiresAt()).minus(Duration.ofDays(30)).abs()
        .compareTo(Duration.ofDays(1)) < 0, stored.expiresAt().toString());

    Run iso = run("credentials", "create", "--identity", "cli-temp", "--expires-in", "PT12H", "--database", address);
    assertEquals(0, iso.code(), iso.err());
    assertTrue(iso.out().contains("expiring in 12h"), iso.out());

    String lasting = Credentials.create(database.database(), "cli-lasting").keyId();
    Run listed = run("credentials", "list", "--database", address);
    assertEquals(0, listed.code(), listed.err());
    assertTrue(listed.out().lines().anyMatch(l -> l.contains(keyId) && l.contains(stored.expiresAt().toString())),
        listed.out());
    assertTrue(listed.out().lines().anyMatch(l -> l.contains(lasting) && l.contains("never")), listed.out());

    for (String bad : new String[] {"30x", "soon", "P30", "0d", "-5h", "PT0.5S"}) {
      Run refused = run("credentials", "create", "--identity", "cli-bad", "--expires-in", bad, "--database", address);
      assertEquals(2, refused.code(), bad + ": " + refused.err());
      assertTrue(refused.err().contains("--expires-in") && refused.err().contains("'" + bad + "'"),
          bad + ": " + refused.err());
    }
    assertTrue(Credentials.list(database.database()).stream().noneMatch(c -> c.identity().equals("cli-bad")),
        "a refused create stored a key");
  }
}
