package org.apiary.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The access-control audit queries (issue 14, item 2) on DuckDB and PostgreSQL, over a sink whose FunctionInvocations
 * was created before the purpose and caller_roles columns and gained them: who read a record for which purpose,
 * refusals in a period, and reads outside allowed purposes by callers or by a role.
 */
class AuditQueriesTest {
  private static final Instant T = Instant.parse("2026-11-25T12:00:00Z");
  private static final ProvenanceTable EVENTS = ProvenanceSchema.eventsTable("patients",
      List.of(new ProvenanceColumn("id", ColumnType.BIGINT)), List.of("id"));

  @TempDir
  Path dir;

  @Test
  void onDuckDb() throws Exception {
    try (ProvenanceSink sink = ProvenanceSink.open("jdbc:duckdb:" + dir.resolve("audit.duckdb"), new Properties())) {
      check(sink);
    }
  }

  @Test
  void onPostgres() throws Exception {
    try (PostgresTestSchema schema = new PostgresTestSchema();
         ProvenanceSink sink = ProvenanceSink.open(schema.url(), PostgresTestSchema.props())) {
      check(sink);
    }
  }

  private static void check(ProvenanceSink sink) throws SQLException {
    ProvenanceTable current = ProvenanceSchema.functionInvocations();
    ProvenanceTable old = new ProvenanceTable(current.name(), current.columns().subList(0, current.indexOf("purpose")),
        current.key(), List.of());
    sink.ensureTable(old);
    // Before the upgrade: a read without purpose or roles.
    sink.load(old, List.of(row(old, "1", 1L, "inv-old", "alice")));
    sink.ensureTable(current);
    sink.ensureTable(EVENTS);
    sink.ensureTable(ProvenanceSchema.deniedCalls());
    sink.load(current, List.of(
        row(current, "2", 2L, "inv-treat", "alice", "treatment", "nurse"),
        row(current, "3", 3L, "inv-bill", "alice", "billing", "nurse"),
        row(current, "4", 4L, "inv-snoop", "root", "curiosity", "admin"),
        row(current, "5", 5L, "inv-axb", "carl", "research", "axb")));
    sink.load(EVENTS, List.of(read("1", 1L, 7L), read("2", 2L, 7L), read("3", 3L, 7L), read("4", 4L, 7L),
        read("5", 5L, 8L)));
    sink.load(ProvenanceSchema.deniedCalls(), List.of(
        new ProvenanceRow(ProvenanceSchema.DENIED_CALLS, Arrays.asList(T.plusSeconds(10), "d1", "inv-d1", "bob",
            "patientRecord", "marketing", "purpose not allowed", "clerk")),
        new ProvenanceRow(ProvenanceSchema.DENIED_CALLS, Arrays.asList(T.plusSeconds(20), "d2", "inv-d2", null,
            "patientRecord", null, "no roles", null))));
    sink.connection().commit();

    ProvenanceQueries q = new ProvenanceQueries(sink.connection());
    List<ProvenanceQueries.RecordRead> reads = q.readsOfRecord(EVENTS, Map.of("id", 7L));
    assertEquals(List.of("inv-old|alice|null|null", "inv-treat|alice|treatment|nurse", "inv-bill|alice|billing|nurse",
        "inv-snoop|root|curiosity|admin"), reads.stream().map(r -> r.executionId() + "|" + r.caller() + "|"
        + r.purpose() + "|" + r.callerRoles()).toList(), "in the record's order");
    assertEquals(T.plusSeconds(2), reads.get(1).eventTime());
    assertEquals("f", reads.get(1).function());
    assertEquals("g", reads.get(1).graph());

    assertEquals(List.of("inv-d1", "inv-d2"), q.deniedCalls(T, T.plusSeconds(21)).stream()
        .map(ProvenanceQueries.DeniedCall::invocationId).toList());
    ProvenanceQueries.DeniedCall first = q.deniedCalls(T, T.plusSeconds(20)).get(0);
    assertEquals(new ProvenanceQueries.DeniedCall(T.plusSeconds(10), "inv-d1", "bob", "patientRecord", "marketing",
        "purpose not allowed", "clerk"), first);
    assertEquals(1, q.deniedCalls(T, T.plusSeconds(20)).size(), "the end is exclusive");

    assertEquals(List.of("inv-old", "inv-bill"), ids(q.readsOutsidePurposes(EVENTS, List.of("alice"),
        List.of("treatment"))), "no purpose counts as outside");
    assertEquals(List.of("inv-old", "inv-bill", "inv-snoop", "inv-axb"), ids(q.readsOutsidePurposes(EVENTS, List.of(),
        List.of("treatment"))), "every caller, by key then order");
    assertEquals(List.of("inv-bill"), ids(q.readsByRoleOutsidePurposes(EVENTS, "nurse", List.of("treatment"))));
    assertEquals(List.of("inv-snoop"), ids(q.readsByRoleOutsidePurposes(EVENTS, "admin", List.of("treatment",
        "billing"))));
    assertEquals(List.of(), ids(q.readsByRoleOutsidePurposes(EVENTS, "a_b", List.of())), "'_' is no wildcard");
    assertEquals(List.of("inv-axb"), ids(q.readsByRoleOutsidePurposes(EVENTS, "axb", List.of())));
    assertThrows(IllegalArgumentException.class, () -> q.readsByRoleOutsidePurposes(EVENTS, "a,b", List.of()));
    sink.connection().rollback();
  }

  private static List<String> ids(List<ProvenanceQueries.RecordRead> reads) {
    return reads.stream().map(ProvenanceQueries.RecordRead::executionId).toList();
  }

  private static ProvenanceRow row(ProvenanceTable table, String execId, long txId, String invocation, String caller,
                                   Object... purposeAndRoles) {
    List<Object> values = new java.util.ArrayList<>(Arrays.asList(T.plusSeconds(txId), execId, txId, 0L, 0, "f", "g",
        invocation, "7", caller, 5L));
    values.addAll(Arrays.asList(purposeAndRoles));
    if (values.size() == table.columns().size() - 1) {
      values.add(ProvenanceSchema.MODE_RAN);
    }
    return new ProvenanceRow(table.name(), values);
  }

  private static ProvenanceRow read(String execId, long txId, long id) {
    return new ProvenanceRow(EVENTS.name(), Arrays.asList(T.plusSeconds(txId), execId, txId, 0L, 0,
        ProvenanceSchema.READ, 0L, id));
  }
}
