package org.apiary.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apiary.DatabaseException;
import org.apiary.compiler.Deployer;
import org.apiary.compiler.FunctionCompiler;
import org.apiary.compiler.FunctionDefinition;
import org.apiary.journal.JournalMode;
import org.apiary.runtime.FunctionCatalog;
import org.apiary.runtime.FunctionInvoker;
import org.apiary.runtime.SystemSchema;
import org.apiary.internal.Invocation;
import org.apiary.testapp.Scramble;
import org.apiary.testapp.ScrambleAll;
import org.apiary.testapp.TestApp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A journaled cluster loses no journaled work when every node is SIGKILLed at once, and replays each partition's
 * transactions in their order with every multi-partition transaction in its place, although each node journals
 * separately and a multi-partition transaction's record is written by one node only. Two nodes, three partitions,
 * k-factor 1 (every node holds every partition, so the journals overlap and are merged). An order-sensitive workload
 * ({@code scramble}: each call's result depends on the calls before it on its counter; {@code scrambleAll}: one
 * multi-partition call that changes every counter) first without and then with multi-partition calls running beside
 * the single-partition ones; the counters read before the kill are the oracle the recovered ones must equal (the
 * first phase also against {@link JournalReplayOrderTest#oracle}, plain arithmetic). Then a clean stop and a start:
 * the same again.
 */
class ClusterJournalTest {
  private static final Duration CALL = Duration.ofSeconds(60);
  private static final long SEED = 7;

  private static ClusterConfig config(Path dir) {
    return ClusterConfig.of(2, 3, 1).withDataDirectory(dir).withSnapshotInterval(Duration.ofHours(1))
        .withJournal(JournalMode.ASYNCHRONOUS);
  }

  @Test
  void everyNodeKilledAtOnceLosesNoJournaledWorkAndReplaysInOrder(@TempDir Path dir) throws Exception {
    Map<Long, Long> before;
    try (LocalCluster cluster = LocalCluster.start(config(dir));
         ApiaryDatabase db = ApiaryDatabase.open(cluster.config())) {
      FunctionInvoker invoker = deploy(db);
      for (JournalReplayOrderTest.Round round : JournalReplayOrderTest.workload(SEED)) {
        List<CompletableFuture<?>> chains = scrambleEveryKey(invoker, round.inputs(), 0);
        CompletableFuture.allOf(chains.toArray(CompletableFuture[]::new)).get(CALL.toMillis(), TimeUnit.MILLISECONDS);
        invoker.callAsync("scrambleAll", null, Invocation.ofArguments(round.all()))
            .get(CALL.toMillis(), TimeUnit.MILLISECONDS);
      }
      assertEquals(JournalReplayOrderTest.oracle(SEED), counters(db), "the cluster ran the workload as arithmetic says");
      // Now multi-partition calls beside single-partition ones: the order is the cluster's, read back below.
      Random random = new Random(SEED);
      for (int round = 0; round < 4; round++) {
        long[][] inputs = new long[48][];
        for (int k = 0; k < inputs.length; k++) {
          inputs[k] = random.longs(1 + random.nextInt(8), 0, 1000).toArray();
        }
        List<CompletableFuture<?>> calls = new ArrayList<>(scrambleEveryKey(invoker, inputs, 100));
        for (int i = 0; i < 3; i++) {
          calls.add(invoker.callAsync("scrambleAll", null, Invocation.ofArguments(1L + random.nextInt(1000))));
        }
        CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).get(CALL.toMillis(), TimeUnit.MILLISECONDS);
      }
      before = counters(db);
      // Asynchronous: what was appended reaches the disk within the fsync interval (100 ms).
      Thread.sleep(1_000);
      for (LocalCluster.Node n : cluster.nodes()) {
        n.kill();
      }
      assertFalse(cluster.nodes().stream().anyMatch(LocalCluster.Node::isAlive));
    }
    try (LocalCluster cluster = LocalCluster.start(config(dir));
         ApiaryDatabase db = ApiaryDatabase.open(cluster.config())) {
      assertEquals(before, counters(db), "after every node's SIGKILL, the journals gave back every counter as it was");
      ClusterJournal.Recovery recovery = cluster.journal().recovery();
      assertTrue(recovery.records() > 100 && recovery.multiPartition() >= 12,
          "the replay ran the second phase's transactions, multi-partition ones among them: " + recovery);
      FunctionInvoker invoker = deploy(db);
      invoker.call("scramble", 1_000L, 5L);
      before = counters(db);
      // Whoever may query cannot reach the journals through their functions (say, to have every node delete its
      // checkpoint snapshots): without the cluster's secret they refuse.
      for (String sql : List.of("SELECT apiary_journal_control(3, 1, partition_id, 0) FROM " + SystemSchema.PARTITIONS,
          "SELECT apiary_journal_mark(partition_id, 1, 0) FROM " + SystemSchema.PARTITIONS)) {
        DatabaseException refused = assertThrows(DatabaseException.class, () -> db.callAdmin("probing", "@AdHoc", sql));
        assertTrue(refused.getMessage().contains("Apiary's own"), refused.getMessage());
      }
    }
    try (LocalCluster cluster = LocalCluster.start(config(dir));
         ApiaryDatabase db = ApiaryDatabase.open(cluster.config())) {
      assertEquals(before, counters(db), "after a clean stop every counter is there");
    }
    assertThrows(DatabaseException.class, () -> LocalCluster.start(config(dir).withJournal(JournalMode.NONE)),
        "a journaled cluster is not started without its journal");
    for (int i = 0; i < 2; i++) {
      try (var files = Files.list(ClusterJournal.directoryOf(dir.resolve("node" + i)))) {
        assertTrue(files.anyMatch(f -> f.getFileName().toString().startsWith("journal-")),
            "node " + i + " journals");
      }
    }
  }

  private static FunctionInvoker deploy(ApiaryDatabase db) {
    if (!SystemSchema.tables(db).contains("COUNTERS")) {
      db.loadSchema(TestApp.SCHEMA);
      Deployer.deploy(db, FunctionCompiler.compile(TestApp.SCHEMA, List.of(
          FunctionDefinition.of("scramble", Scramble.class), FunctionDefinition.of("scrambleAll", ScrambleAll.class))));
    }
    SystemSchema.ensure(db);
    return new FunctionInvoker(db, FunctionCatalog.load(db));
  }

  /** Per key {@code offset + k}, its calls one after another; the keys at once. */
  private static List<CompletableFuture<?>> scrambleEveryKey(FunctionInvoker invoker, long[][] inputs, long offset) {
    List<CompletableFuture<?>> chains = new ArrayList<>();
    for (int key = 0; key < inputs.length; key++) {
      long k = offset + key;
      CompletableFuture<?> chain = CompletableFuture.completedFuture(null);
      for (long x : inputs[key]) {
        chain = chain.thenCompose(done -> invoker.callAsync("scramble", k, Invocation.ofArguments(x)));
      }
      chains.add(chain);
    }
    return chains;
  }

  private static Map<Long, Long> counters(ApiaryDatabase db) {
    var t = db.callAdmin("reading", "@AdHoc", "SELECT k, v FROM counters ORDER BY k").getResults()[0];
    Map<Long, Long> counters = new TreeMap<>();
    while (t.advanceRow()) {
      counters.put(t.getLong(0), t.getLong(1));
    }
    return counters;
  }
}
