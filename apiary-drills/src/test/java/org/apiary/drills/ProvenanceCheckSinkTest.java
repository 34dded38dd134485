package org.apiary.drills;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import org.apiary.drills.provenance.ProvDrillApp;
import org.apiary.provenance.ColumnType;
import org.apiary.provenance.PostgresTestSchema;
import org.apiary.provenance.ProvenanceColumn;
import org.apiary.provenance.ProvenanceRow;
import org.apiary.provenance.ProvenanceSchema;
import org.apiary.provenance.ProvenanceSink;
import org.apiary.provenance.ProvenanceTable;
import org.junit.jupiter.api.Test;

/**
 * The provenance drill's reading of the sink, on tables the sink itself created in PostgreSQL: a global function's
 * write event, which carries the partition's position, is read as made by the execution its
 * {@code MultiPartitionPositions} row names. Before, the checker looked for that table by its mixed-case name, which
 * PostgreSQL's catalog does not hold, and every global write was reported misattributed (the drill's 367).
 */
class ProvenanceCheckSinkTest {
  @Test
  void aGlobalWriteIsReadAsItsExecutionsThroughTheSinksPositions() throws Exception {
    ProvenanceTable events = ProvenanceSchema.eventsTable(ProvDrillApp.TABLE, List.of(
        new ProvenanceColumn("p", ColumnType.BIGINT), new ProvenanceColumn("k", ColumnType.BIGINT),
        new ProvenanceColumn("tag", ColumnType.VARCHAR), new ProvenanceColumn("v", ColumnType.BIGINT)),
        List.of("p", "k"));
    Instant now = Instant.now();
    try (PostgresTestSchema pg = new PostgresTestSchema();
         ProvenanceSink sink = ProvenanceSink.open(pg.url(), PostgresTestSchema.props())) {
      for (ProvenanceTable t : List.of(ProvenanceSchema.functionInvocations(),
          ProvenanceSchema.multiPartitionPositions(), events)) {
        sink.ensureTable(t);
      }
      sink.append(ProvenanceSchema.functionInvocations(), List.of(new ProvenanceRow(
          ProvenanceSchema.FUNCTION_INVOCATIONS, Arrays.asList(now, "900", 900L, 0L, ProvenanceSchema.MULTI_PARTITION,
              ProvDrillApp.GLOBAL_WRITE, "g", "inv-1", null, "c", 1L, null, null, ProvenanceSchema.MODE_RAN))));
      sink.append(ProvenanceSchema.multiPartitionPositions(), List.of(new ProvenanceRow(
          ProvenanceSchema.MULTI_PARTITION_POSITIONS, Arrays.asList("900", 1, 16385L))));
      sink.append(events, List.of(
          new ProvenanceRow(events.name(), Arrays.asList(now, "16385", 16385L, 0L, 1, "update", 0L, 3L, 4L, "t", 5L)),
          new ProvenanceRow(events.name(), Arrays.asList(now, "900", 16385L, 1L, 1, "read", 0L, 3L, 4L, null, null))));

      ProvenanceCheck.Sink read = ProvenanceCheck.Sink.read(pg.url(), PostgresTestSchema.props());
      assertEquals(List.of("read 900", "update 900"), read.events().stream().map(e -> e.type() + " " + e.execId())
          .sorted().toList(), "the write is the execution's; the read is its own already");
    }
  }
}
