package org.apiary.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apiary.Application;
import org.apiary.database.DatabaseConfig;
import org.apiary.database.ProvenanceConfig;
import org.apiary.examples.bank.BankApp;
import org.apiary.provenance.ProvenanceQueries;
import org.apiary.provenance.ProvenanceTable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The front door: one call starts a database, a frontend and a client; deploy, invoke, query, provenance, close.
 * One embedded VoltDB per test class (each runs in a JVM of its own: see this module's build).
 */
class ApiaryTest {
  @TempDir
  Path dir;

  @Test
  void startsDeploysInvokesQueriesAndAnswersProvenanceThenCloses() throws Exception {
    DatabaseConfig config = DatabaseConfig.embedded(2).withProvenance(
        ProvenanceConfig.duckdb(dir.resolve("provenance.duckdb")).withWriteCaptureOnly("accounts"));
    Apiary apiary = Apiary.start(config);
    try {
      apiary.deploy(Application.of(BankApp.SCHEMA, BankApp.PAYDAY));
      assertEquals(1, apiary.query("INSERT INTO accounts VALUES (?, ?, ?)", 1L, "ann", 100L).modifiedRowCount());
      apiary.query("INSERT INTO accounts VALUES (?, ?, ?)", 2L, "bob", 50L);

      var paid = apiary.invoke("payday", null, 10L);
      assertEquals(List.of(110L, 60L), paid.values(Long.class).stream().sorted((a, b) -> Long.compare(b, a)).toList());
      assertEquals(110L, apiary.query("SELECT balance FROM accounts WHERE id = ?", 1L).rows().get(0).getLong("balance"));
      assertTrue(apiary.endpoint().startsWith("tcp://"), apiary.endpoint());

      assertTrue(apiary.awaitProvenance(Duration.ofSeconds(30)), "provenance was not loaded within 30 s");
      ProvenanceQueries provenance = apiary.provenance();
      ProvenanceTable events = provenance.describeEventsTable("accounts", List.of("id"));
      List<ProvenanceQueries.RecordRead> reads = provenance.readsOfRecord(events, Map.of("id", 1L));
      // payroll read every account, then deposit read the new balance of its own
      assertEquals(List.of("payday|payroll", "payday|deposit"),
          reads.stream().map(r -> r.graph() + "|" + r.function()).toList(), reads.toString());
    } finally {
      apiary.close();
    }
    apiary.close(); // idempotent
    IllegalStateException closed = assertThrows(IllegalStateException.class, apiary::client);
    assertEquals("this Apiary is closed", closed.getMessage());
  }
}
