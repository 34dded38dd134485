package org.apiary.database;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apiary.internal.Invocation;
import org.apiary.internal.Json;
import org.apiary.journal.JournalMode;
import org.apiary.journal.JournalReader;
import org.apiary.journal.JournalRecord;
import org.apiary.runtime.FunctionInvoker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 40, item 1: each journal record holds the graph and graph version its invocation ran (journal format 3), as
 * the function's transaction received them. That a journal written in format 2, the one before, still replays is
 * checked in {@link JournalCrashTest}, on the journal of a server it kills anyway.
 */
class JournalGraphVersionTest {
  /** A function called for version 7 of graph {@code counting} leaves a record saying so; a direct call, none. */
  @Test
  void aRecordHoldsTheGraphAndVersionItsInvocationRan(@TempDir Path dir) throws Exception {
    DatabaseConfig config = DatabaseConfig.embedded(2).withDataDirectory(dir)
        .withSnapshotInterval(Duration.ofSeconds(600)).withJournal(JournalMode.SYNCHRONOUS);
    try (ApiaryDatabase db = ApiaryDatabase.open(config)) {
      FunctionInvoker invoker = DurabilityFixture.deploy(db);
      Invocation forGraph = new Invocation(Map.of(org.apiary.ApiaryFunction.SOURCE, List.of(Json.tree(5L))),
          "inv-graph", false, "counting", null, false, false, null, null, null, null, null, null, 7);
      invoker.callAsync("increment", 5L, forGraph).get(60, TimeUnit.SECONDS);
      invoker.call("increment", 6L, 6L);
      // The journal as the server wrote it, before a clean stop's checkpoint could make its segments redundant.
      List<JournalRecord> records = new ArrayList<>();
      for (JournalReader.Timeline t : JournalReader.scan(DatabaseJournal.directoryOf(dir), false).values()) {
        JournalReader.forEach(t, records::add);
      }
      List<JournalRecord> increments = records.stream().filter(r -> r.procedure().equals("increment")).toList();
      assertEquals(2, increments.size(), "records: " + records);
      assertEquals("inv-graph", increments.get(0).invocationId());
      assertEquals("counting", increments.get(0).graph());
      assertEquals(7, increments.get(0).graphVersion());
      assertEquals(null, increments.get(1).graph(), "a direct call ran for no graph");
      assertEquals(JournalRecord.NO_GRAPH_VERSION, increments.get(1).graphVersion());
    }
  }
}
