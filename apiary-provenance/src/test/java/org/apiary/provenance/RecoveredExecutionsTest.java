package org.apiary.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Spill files a dead server left hold the rows of every execution it offered, including one whose transaction never
 * committed (the server died between the offer and the commit, or, on a k-safe cluster, before a replica received the
 * transaction). Recovery must not load those (issue 11, item 3; found by the provenance drill: a writer's execution
 * loaded twice, once from the dead node's spill of a transaction that never committed).
 */
class RecoveredExecutionsTest {
  private static final int MP = ProvenanceSchema.MULTI_PARTITION;

  @TempDir
  Path dir;

  private final ProvenanceTable invocations = ProvenanceSchema.functionInvocations();
  private final ProvenanceTable kvEvents = ProvenanceSchema.eventsTable("kv",
      List.of(new ProvenanceColumn("k", ColumnType.BIGINT)), List.of("k"));

  /** One execution's unit, as a function offers it: its FunctionInvocations row and one read. */
  private List<ProvenanceRow> execution(String execId, long txId, long execSeq, int partition, long key) {
    Instant time = Instant.parse("2026-11-25T12:00:00Z");
    return List.of(
        new ProvenanceRow(invocations.name(), Arrays.asList(time, execId, txId, execSeq, partition, "f", "g",
            "inv-" + execId, Long.toString(key), "test", 5L, null, null, "ran")),
        new ProvenanceRow(kvEvents.name(), Arrays.asList(time, execId, txId, execSeq, partition, ProvenanceSchema.READ,
            0L, key)));
  }

  /**
   * What the dead server left, in the order it offered: on partition 0 a writer, a read-only execution after it, and
   * a second writer that was its last; on partition 1 one writer; a multi-partition execution.
   */
  private Path deadServersSpill() throws Exception {
    Path spill = Files.createDirectories(dir.resolve("spill"));
    Map<String, ProvenanceTable> tables = Map.of(invocations.name(), invocations, kvEvents.name(), kvEvents);
    try (SpillFile.Writer first = SpillFile.Writer.create(SpillFile.path(spill, 0))) {
      first.appendDurably(execution("101", 101, 0, 0, 1), tables);
      first.appendDurably(execution("201", 201, 0, 1, 2), tables);
      first.appendDurably(execution("101r1@dead", 101, 1, 0, 1), tables);
    }
    try (SpillFile.Writer second = SpillFile.Writer.create(SpillFile.path(spill, 1))) {
      second.appendDurably(execution("301", 301, 0, MP, 3), tables);
      second.appendDurably(execution("102", 102, 0, 0, 4), tables);
    }
    return spill;
  }

  private Set<String> recover(SpoolerConfig.Recovery recovery, Path spill) throws Exception {
    String url = "jdbc:duckdb:" + dir.resolve("provenance.db");
    SpoolerConfig config = SpoolerConfig.defaults().withSpillDirectory(spill).withRecovery(recovery)
        .withInitialBackoff(Duration.ofMillis(10)).withMaxBackoff(Duration.ofMillis(100));
    try (ProvenanceSpooler spooler = ProvenanceSpooler.start(config, ProvenanceSink.opener(url, new Properties()))) {
      assertTrue(spooler.flush(Duration.ofSeconds(30)), spooler.stats().toString());
    }
    // Started again: what was set aside stays aside, nothing loads twice.
    try (ProvenanceSpooler again = ProvenanceSpooler.start(config, ProvenanceSink.opener(url, new Properties()))) {
      assertEquals(0, again.stats().rowsRecovered(), again.stats().toString());
    }
    Set<String> executions = execIds(url, "SELECT exec_id FROM " + invocations.name());
    assertEquals(executions, execIds(url, "SELECT exec_id FROM " + kvEvents.name()),
        "an execution's reads load with it, or not at all");
    return executions;
  }

  private static Set<String> execIds(String url, String sql) throws Exception {
    Set<String> ids = new TreeSet<>();
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
         ResultSet r = s.executeQuery(sql)) {
      while (r.next()) {
        ids.add(r.getString(1));
      }
    }
    return ids;
  }

  /** The exec_ids of the rows in the set-aside files: nothing is deleted, an operator can still read them. */
  private static Set<String> setAside(Path spill) throws Exception {
    Set<String> ids = new TreeSet<>();
    List<Path> files;
    try (Stream<Path> list = Files.list(spill)) {
      files = list.filter(p -> p.getFileName().toString().startsWith("unconfirmed-")).toList();
    }
    for (Path file : files) {
      for (ProvenanceRow row : SpillFile.read(file).rows()) {
        ids.add((String) row.values().get(1));
      }
    }
    return ids;
  }

  /** A single server's (or a whole cluster's) files are the only copy: everything in them is loaded. */
  @Test
  void theOnlyCopyLoadsEverything() throws Exception {
    Path spill = deadServersSpill();
    assertEquals(new TreeSet<>(List.of("101", "101r1@dead", "102", "201", "301")),
        recover(SpoolerConfig.Recovery.ONLY_COPY, spill));
    assertEquals(Set.of(), setAside(spill));
  }

  /**
   * A server of a k-safe cluster that ran on without it: its replicas captured every writer that committed, so none of
   * its writers is loaded from its files; read-only and multi-partition executions ran only here and are.
   */
  @Test
  void aReplicatedServerLoadsOnlyWhatRanNowhereElse() throws Exception {
    Path spill = deadServersSpill();
    assertEquals(new TreeSet<>(List.of("101r1@dead", "301")), recover(SpoolerConfig.Recovery.REPLICATED, spill));
    assertEquals(new TreeSet<>(List.of("101", "102", "201")), setAside(spill));
  }

  /** Rows of tables that are not Apiary's provenance tables carry no execution: recovery loads them as they are. */
  @Test
  void rowsOfOtherTablesAreLoadedAsTheyAre() throws Exception {
    Path spill = Files.createDirectories(dir.resolve("spill"));
    ProvenanceTable other = SinkChecks.typedTable("other");
    try (SpillFile.Writer writer = SpillFile.Writer.create(SpillFile.path(spill, 0))) {
      writer.appendDurably(SinkChecks.typedRows(other, 0, 3, "v"), Map.of(other.name(), other));
    }
    String url = "jdbc:duckdb:" + dir.resolve("provenance.db");
    SpoolerConfig config = SpoolerConfig.defaults().withSpillDirectory(spill)
        .withRecovery(SpoolerConfig.Recovery.REPLICATED);
    try (ProvenanceSpooler spooler = ProvenanceSpooler.start(config, ProvenanceSink.opener(url, new Properties()))) {
      assertTrue(spooler.flush(Duration.ofSeconds(30)), spooler.stats().toString());
      assertEquals(3, spooler.stats().rowsLoaded());
    }
    assertEquals(List.of(), new ArrayList<>(setAside(spill)));
  }
}
