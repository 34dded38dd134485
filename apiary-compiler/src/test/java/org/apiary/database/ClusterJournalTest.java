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
import org.apiary.journal.JournalReader;
import org.apiary.runtime.FunctionCatalog;
import org.apiary.runtime.FunctionInvoker;
import org.apiary.runtime.SystemSchema;
import org.apiary.internal.Invocation;
import org.apiary.runtime.FunctionResult;
import org.apiary.testapp.PutBlob;
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
        .withJournal(JournalMode.SYNCHRONOUS);
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
      // Synchronous: every acknowledged call is on disk on both nodes already, so the kill comes at once.
      for (LocalCluster.Node n : cluster.nodes()) {
        n.kill();
      }
      assertFalse(cluster.nodes().stream().anyMatch(LocalCluster.Node::isAlive));
    }
    // Node 1's journal moves to a small file system of its own, which the test fills below.
    Path journal1 = ClusterJournal.directoryOf(dir.resolve("node1"));
    boolean smallDisk = moveToTmpfs(journal1);
    try {
      try (LocalCluster cluster = LocalCluster.start(config(dir));
           ApiaryDatabase db = ApiaryDatabase.open(cluster.config())) {
        assertEquals(before, counters(db), "after every node's SIGKILL, the journals gave back every counter as it was");
        assertTrue(db.waitsForClusterJournals(), "a client of a synchronously journaled cluster holds its replies");
        ClusterJournal.Recovery recovery = cluster.journal().recovery();
        assertTrue(recovery.records() > 100 && recovery.multiPartition() >= 12,
            "the replay ran the second phase's transactions, multi-partition ones among them: " + recovery);
        FunctionInvoker invoker = deploy(db);
        invoker.call("scramble", 1_000L, 5L);
        if (smallDisk) {
          // Node 1's disk is full: the next record cannot reach it (node 0's can). A reply that left now would be of
          // work a crash of every node loses, so it must wait until node 1's journal writes again.
          Path filler = journal1.resolve("filler");
          fill(filler);
          CompletableFuture<FunctionResult> held = invoker.callAsync("putBlob", 5_000L,
              Invocation.ofArguments("x".repeat(20_000)));
          Thread.sleep(1_500);
          assertFalse(held.isDone(), "no reply before every replica has the transaction on disk");
          Files.delete(filler);
          assertEquals(5_000L, held.get(CALL.toMillis(), TimeUnit.MILLISECONDS).value(Long.class),
              "once node 1's journal writes again the reply leaves");
        }
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
        // Node 1 dies and rejoins the running cluster: it journals again, continuing the timeline node 0 writes.
        // Single- and multi-partition work while it is down (node 0's journal alone has it) and after.
        FunctionInvoker invoker = deploy(db);
        cluster.nodes().get(1).kill();
        for (long k = 0; k < 12; k++) {
          long key = 2_000L + k;
          long x = k + 1;
          retrying(() -> invoker.call("scramble", key, x)); // the client may first try the dead node
        }
        retrying(() -> invoker.callGlobal("scrambleAll", 3L));
        cluster.rejoin(1);
        for (long k = 0; k < 12; k++) {
          invoker.call("scramble", 2_000L + k, k + 7);
        }
        invoker.callGlobal("scrambleAll", 5L);
        invoker.call("putBlob", 6_000L, "after the rejoin");
        // A catalog change (schema, a deployment) is not journaled: a call under the new catalog replays only on a
        // checkpoint that holds it (the cluster takes one at once), so its reply waits for that checkpoint, and the
        // kill right after it loses nothing.
        db.loadSchema("CREATE TABLE after_rejoin (k BIGINT NOT NULL, PRIMARY KEY (k));");
        invoker.call("scramble", 3_000L, 11L);
        before = counters(db);
        for (LocalCluster.Node n : cluster.nodes()) {
          n.kill();
        }
      }
      long rejoinedRecords = JournalReader.scan(journal1, false).values().stream().mapToLong(t -> {
        long[] blobs = {0};
        JournalReader.forEach(t, r -> blobs[0] += r.procedure().equalsIgnoreCase("putBlob") ? 1 : 0);
        return blobs[0];
      }).sum();
      assertEquals(1, rejoinedRecords, "the rejoined node journaled the call after its rejoin (the one since the "
          + "clean stop's checkpoint)");
      try (LocalCluster cluster = LocalCluster.start(config(dir));
           ApiaryDatabase db = ApiaryDatabase.open(cluster.config())) {
        Map<Long, Long> after = counters(db);
        assertEquals(before.get(3_000L), after.get(3_000L), "the call acknowledged after a catalog change survived");
        assertEquals(before, after, "after a rejoin and every node's SIGKILL, every counter is there");
      }
      assertThrows(DatabaseException.class, () -> LocalCluster.start(config(dir).withJournal(JournalMode.NONE)),
          "a journaled cluster is not started without its journal");
      for (int i = 0; i < 2; i++) {
        try (var files = Files.list(ClusterJournal.directoryOf(dir.resolve("node" + i)))) {
          assertTrue(files.anyMatch(f -> f.getFileName().toString().startsWith("journal-")),
              "node " + i + " journals");
        }
      }
    } finally {
      if (smallDisk) {
        run("umount", "-l", journal1.toString());
      }
    }
  }

  private static FunctionInvoker deploy(ApiaryDatabase db) {
    if (!SystemSchema.tables(db).contains("COUNTERS")) {
      db.loadSchema(TestApp.SCHEMA + PutBlob.SCHEMA);
      Deployer.deploy(db, FunctionCompiler.compile(TestApp.SCHEMA + PutBlob.SCHEMA, List.of(
          FunctionDefinition.of("scramble", Scramble.class), FunctionDefinition.of("scrambleAll", ScrambleAll.class),
          FunctionDefinition.of("putBlob", PutBlob.class))));
    }
    SystemSchema.ensure(db);
    return new FunctionInvoker(db, FunctionCatalog.load(db));
  }

  /**
   * Moves {@code journal} onto a tmpfs of 8 MiB mounted in its place (its files copied), if this process may mount
   * (root, as CI has); otherwise says so and returns false (with {@code CI=true}, fails instead).
   */
  private static boolean moveToTmpfs(Path journal) throws Exception {
    Path old = journal.resolveSibling("journal-before-tmpfs");
    Files.move(journal, old);
    Files.createDirectory(journal);
    boolean mounted = run("mount", "-t", "tmpfs", "-o", "size=8m,mode=700", "tmpfs", journal.toString()) == 0;
    try (var files = Files.list(old)) {
      for (Path f : files.toList()) {
        Files.copy(f, journal.resolve(f.getFileName()), java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
        Files.delete(f);
      }
    }
    Files.delete(old);
    if (!mounted) {
      assertFalse("true".equals(System.getenv("CI")), "mounting a tmpfs needs root, which CI has");
      System.err.println("ClusterJournalTest: no tmpfs (mounting needs root): the full-disk case is skipped");
    }
    return mounted;
  }

  /**
   * Runs {@code call}, again after an error for at most 30 s (the counters read afterwards are the oracle, so a call
   * that ran twice does no harm here).
   */
  private static void retrying(Runnable call) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      try {
        call.run();
        return;
      } catch (org.apiary.ApiaryException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        Thread.sleep(200);
      }
    }
  }

  /** Writes zeros to {@code file} until its file system is full. */
  private static void fill(Path file) throws Exception {
    byte[] chunk = new byte[64 << 10];
    try (var out = Files.newOutputStream(file)) {
      while (true) {
        out.write(chunk);
      }
    } catch (java.io.IOException full) {
      assertTrue(String.valueOf(full.getMessage()).contains("No space left"), "filled: " + full);
    }
  }

  private static int run(String... command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes());
    assertTrue(p.waitFor(30, TimeUnit.SECONDS), String.join(" ", command) + " did not finish");
    if (p.exitValue() != 0) {
      System.err.println(String.join(" ", command) + ": " + output.strip());
    }
    return p.exitValue();
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
