package org.apiary.cli;

import static org.apiary.cli.InProcessCli.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.apiary.cli.InProcessCli.Run;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code apiary provenance}: a sink password never comes from the command line (issue 14). */
class ProvenanceCommandTest {
  private static final String POSTGRES = "jdbc:postgresql://127.0.0.1:5432/postgres";

  @Test
  void aPasswordOnTheCommandLineIsRefused() {
    Run r = run("provenance", "sql", "--sink", POSTGRES, "--user", "postgres", "--password", "secret", "SELECT 1");
    assertEquals(2, r.code(), r.err());
    assertTrue(r.err().contains("--password"), r.err());
  }

  @Test
  void thePasswordComesFromAFile(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("sink-password");
    Files.writeString(file, "secret\n");
    Run r = run("provenance", "sql", "--sink", POSTGRES, "--user", "postgres", "--password-file", file.toString(),
        "SELECT 41 + 1 AS answer");
    assertEquals(0, r.code(), r.err());
    assertTrue(r.out().contains("42"), r.out());
  }

  @Test
  void aMissingOrEmptyPasswordFileIsNamed(@TempDir Path dir) throws Exception {
    Run missing = run("provenance", "sql", "--sink", POSTGRES, "--password-file", dir.resolve("nope").toString(),
        "SELECT 1");
    assertEquals(2, missing.code(), missing.err());
    assertTrue(missing.err().contains("cannot read --password-file"), missing.err());
    Path empty = Files.createFile(dir.resolve("empty"));
    Run blank = run("provenance", "sql", "--sink", POSTGRES, "--password-file", empty.toString(), "SELECT 1");
    assertEquals(2, blank.code(), blank.err());
    assertTrue(blank.err().contains("is empty"), blank.err());
  }

  /** The access-control audits on a DuckDB sink: who read a record for which purpose, refusals, reads outside. */
  @Test
  void theAuditCommandsAnswerFromTheSink(@TempDir Path dir) throws Exception {
    String url = "jdbc:duckdb:" + dir.resolve("audit.duckdb");
    java.time.Instant t = java.time.Instant.parse("2026-11-25T12:00:00Z");
    org.apiary.provenance.ProvenanceTable invocations = org.apiary.provenance.ProvenanceSchema.functionInvocations();
    org.apiary.provenance.ProvenanceTable events = org.apiary.provenance.ProvenanceSchema.eventsTable("records",
        java.util.List.of(new org.apiary.provenance.ProvenanceColumn("id", org.apiary.provenance.ColumnType.BIGINT)),
        java.util.List.of("id"));
    org.apiary.provenance.ProvenanceTable denied = org.apiary.provenance.ProvenanceSchema.deniedCalls();
    try (org.apiary.provenance.ProvenanceSink sink = org.apiary.provenance.ProvenanceSink.open(url,
        new java.util.Properties())) {
      sink.ensureTable(invocations);
      sink.ensureTable(events);
      sink.ensureTable(denied);
      sink.load(invocations, java.util.List.of(
          new org.apiary.provenance.ProvenanceRow(invocations.name(), java.util.List.of(t, "10", 10L, 0L, 0, "read",
              "readRecord", "inv-a", "7", "alice", 3L, "treatment", "nurse", "ran")),
          new org.apiary.provenance.ProvenanceRow(invocations.name(), java.util.List.of(t.plusSeconds(1), "11", 11L,
              0L, 0, "read", "readRecord", "inv-b", "7", "bob", 3L, "marketing", "clerk", "ran"))));
      sink.load(events, java.util.List.of(
          new org.apiary.provenance.ProvenanceRow(events.name(), java.util.List.of(t, "10", 10L, 0L, 0, "read", 0L,
              7L)),
          new org.apiary.provenance.ProvenanceRow(events.name(), java.util.List.of(t.plusSeconds(1), "11", 11L, 0L, 0,
              "read", 0L, 7L))));
      sink.load(denied, java.util.List.of(new org.apiary.provenance.ProvenanceRow(denied.name(), java.util.Arrays.asList(
          t.plusSeconds(2), "d-1", "inv-c", "mallory", "readRecord", null, "no roles", null))));
    }
    Run reads = run("provenance", "reads", "--sink", url, "--table", "records", "--key", "id=7");
    assertEquals(0, reads.code(), reads.err());
    String[] lines = reads.out().split("\n");
    assertTrue(lines[1].contains("inv-a") && lines[1].contains("alice") && lines[1].contains("treatment"),
        reads.out());
    assertTrue(lines[2].contains("inv-b") && lines[2].contains("bob") && lines[2].contains("marketing"), reads.out());
    Run refused = run("provenance", "denied", "--sink", url, "--from", "2026-11-25T12:00:00Z", "--to",
        "2026-11-25T13:00:00Z");
    assertEquals(0, refused.code(), refused.err());
    assertTrue(refused.out().contains("inv-c") && refused.out().contains("mallory") && refused.out().contains("(1 row)"),
        refused.out());
    Run none = run("provenance", "denied", "--sink", url, "--to", "2026-11-25T12:00:00Z");
    assertTrue(none.out().contains("(no rows)"), none.out());
    Run outside = run("provenance", "outside-purpose", "--sink", url, "--table", "records", "--key-columns", "id",
        "--allowed-purposes", "treatment,billing");
    assertEquals(0, outside.code(), outside.err());
    assertTrue(outside.out().contains("inv-b") && !outside.out().contains("inv-a") && outside.out().contains("(1 row)"),
        outside.out());
    Run alice = run("provenance", "outside-purpose", "--sink", url, "--table", "records", "--key-columns", "id",
        "--allowed-purposes", "treatment", "--caller", "alice");
    assertTrue(alice.out().contains("(no rows)"), alice.out());
    Run clerks = run("provenance", "outside-purpose", "--sink", url, "--table", "records", "--key-columns", "id",
        "--allowed-purposes", "treatment", "--role", "clerk");
    assertTrue(clerks.out().contains("inv-b") && clerks.out().contains("(1 row)"), clerks.out());
    Run nurses = run("provenance", "outside-purpose", "--sink", url, "--table", "records", "--key-columns", "id",
        "--allowed-purposes", "treatment", "--role", "nurse");
    assertTrue(nurses.out().contains("(no rows)"), nurses.out());
  }
}
