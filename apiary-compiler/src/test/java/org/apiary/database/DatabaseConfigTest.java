package org.apiary.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.time.Duration;
import org.apiary.DatabaseException;
import org.junit.jupiter.api.Test;

class DatabaseConfigTest {
  /** Issue 44: the sink's password, given apart or in its URL, is never in a configuration's text. */
  @Test
  void aProvenanceConfigurationNeverShowsTheSinkPassword() {
    ProvenanceConfig config = ProvenanceConfig.sink("jdbc:postgresql://127.0.0.1/apiary?user=a&password=url-secret-1")
        .withCredentials("apiary", "given-secret-2");
    for (String text : java.util.List.of(config.toString(), DatabaseConfig.embedded(2).withProvenance(config)
        .toString())) {
      assertFalse(text.contains("url-secret-1") || text.contains("given-secret-2"), text);
      assertTrue(text.contains("jdbc:postgresql://127.0.0.1/apiary") && text.contains("apiary"), text);
    }
  }

  @Test
  void defaultsAreDocumentedValues() {
    DatabaseConfig c = DatabaseConfig.embedded();
    assertTrue(c.isEmbedded());
    assertEquals(DatabaseConfig.DEFAULT_PARTITIONS, c.partitions());
    assertEquals(0, c.clientPort());
    assertEquals(Duration.ofSeconds(30), c.callTimeout());
  }

  @Test
  void invalidConfigurationsNameTheProblem() {
    assertTrue(assertThrows(IllegalArgumentException.class, () -> DatabaseConfig.embedded(0))
        .getMessage().contains("at least 1 partition"));
    assertTrue(assertThrows(IllegalArgumentException.class, DatabaseConfig::external)
        .getMessage().contains("at least one host:port"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> DatabaseConfig.external("db:notaport"))
        .getMessage().contains("'db:notaport'"));
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> DatabaseConfig.embedded().withTimeouts(Duration.ZERO, Duration.ofSeconds(1)))
        .getMessage().contains("connectTimeout"));
    assertEquals(21212, DatabaseConfig.parseHost("db.example").port());
  }

  @Test
  void unreachableDatabaseFailsWithinTheTimeoutNamingTheAddress() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort(); // closed again: nothing listens there
    }
    DatabaseConfig config = DatabaseConfig.external("127.0.0.1:" + port)
        .withTimeouts(Duration.ofSeconds(1), Duration.ofSeconds(1));
    long t0 = System.nanoTime();
    DatabaseException e = assertThrows(DatabaseException.class, () -> ApiaryDatabase.open(config));
    assertTrue(e.getMessage().contains("cannot reach VoltDB at 127.0.0.1:" + port), e.getMessage());
    assertTrue(System.nanoTime() - t0 < Duration.ofSeconds(20).toNanos(), "open() ignored its timeout");
  }
}
