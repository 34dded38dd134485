package org.apiary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apiary.cli.CliProcesses.Result;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * `apiary cluster start --journal synchronous` (issue 40, item 4): every node journals; an API key created after the
 * start's checkpoint (a journaled multi-partition write, `StoreCredential`) is there after every node was SIGKILLed
 * right after `credentials create` answered, and the cluster started again on its directory; `status` says the journal's mode; `cluster stop` ends with a last
 * checkpoint; a node that died rejoins with `cluster start` and journals again; the directory keeps its first start's
 * journal setting.
 */
class JournaledClusterCommandLineTest {
  private static final Duration CLUSTER = Duration.ofSeconds(150);
  private static final Duration COMMAND = Duration.ofSeconds(45);

  @TempDir
  Path work;

  @RegisterExtension
  final CliProcesses cli = new CliProcesses();

  @AfterEach
  void killTheNodesLeft() {
    String under = work.toAbsolutePath().toString();
    List<ProcessHandle> left = new ArrayList<>();
    ProcessHandle.allProcesses().filter(ProcessHandle::isAlive)
        .filter(h -> h.info().commandLine().orElse("").contains(under)).forEach(left::add);
    for (ProcessHandle node : left) {
      node.destroyForcibly();
      node.onExit().completeOnTimeout(null, 30, TimeUnit.SECONDS).join();
    }
  }

  @Test
  @Timeout(value = 480, unit = TimeUnit.SECONDS) // a bound for a slow machine; about 90 s on two cores
  void aJournaledClusterKeepsWhatItsNodesJournaledThroughAllOfThemBeingKilled() throws Exception {
    Path dir = work.resolve("cluster");
    Result started = cli.run(CLUSTER, "cluster", "start", "--nodes", "2", "--kfactor", "1", "--sites-per-host", "2",
        "--journal", "synchronous", "--data", dir.toString());
    assertEquals(0, started.exit(), started.toString());
    assertTrue(started.out().contains("journaled, a checkpoint every"), started.toString());
    Result status = cli.run(COMMAND, "status", "--data", dir.toString());
    assertTrue(status.out().contains("journal: synchronous, on every node"), status.toString());
    assertTrue(status.out().contains("journal of node 0: ") && status.out().contains("journal of node 1: "),
        status.toString());

    Result created = cli.run(COMMAND, "credentials", "create", "--identity", "alice", "--data", dir.toString());
    assertEquals(0, created.exit(), created.toString());
    // Synchronous: the key was on every node's disk before `credentials create` said it was created; no wait.
    ClusterDirectory.State state = new ClusterDirectory(dir).readState().orElseThrow();
    // Every node at once, as a power cut would: the handles first (with two nodes, the survivor of the first kill
    // stops itself, by VoltDB's partition detection).
    List<ProcessHandle> nodes = new ArrayList<>();
    for (ClusterDirectory.Node n : state.nodes()) {
      nodes.add(ProcessHandle.of(n.pid()).orElseThrow(() -> new AssertionError("node " + n.index()
          + " died before the test killed it; its log ends:\n" + tail(Path.of(n.log())))));
    }
    nodes.forEach(ProcessHandle::destroyForcibly);
    for (ProcessHandle node : nodes) {
      node.onExit().get(30, TimeUnit.SECONDS);
    }
    for (int i = 0; i < 2; i++) {
      try (var files = Files.list(dir.resolve("node" + i).resolve("journal"))) {
        assertTrue(files.anyMatch(f -> f.getFileName().toString().startsWith("journal-")), "node " + i + " journals");
      }
    }

    Result restarted = cli.run(CLUSTER, "cluster", "start", "--data", dir.toString());
    assertEquals(0, restarted.exit(), restarted.toString());
    Result listed = cli.run(COMMAND, "credentials", "list", "--data", dir.toString());
    assertTrue(listed.out().contains("alice"), "the key created after the last checkpoint was replayed from the "
        + "journals: " + listed);

    // Node 1 dies; `cluster start` again rejoins it to the running cluster, and it journals again.
    ClusterDirectory.State running = new ClusterDirectory(dir).readState().orElseThrow();
    ProcessHandle node1 = ProcessHandle.of(running.nodes().get(1).pid()).orElseThrow();
    node1.destroyForcibly();
    node1.onExit().get(30, TimeUnit.SECONDS);
    Result rejoined = cli.run(CLUSTER, "cluster", "start", "--data", dir.toString());
    assertEquals(0, rejoined.exit(), rejoined.toString());
    assertTrue(rejoined.out().contains("node 1 rejoined"), rejoined.toString());
    Path journal1 = dir.resolve("node1").resolve("journal");
    long recordsBefore = records(journal1);
    Result bob = cli.run(COMMAND, "credentials", "create", "--identity", "bob", "--data", dir.toString());
    assertEquals(0, bob.exit(), bob.toString());
    assertTrue(records(journal1) > recordsBefore, "the rejoined node journals (its mark of bob's key)");

    Result stopped = cli.run(Duration.ofSeconds(120), "cluster", "stop", "--data", dir.toString());
    assertEquals(0, stopped.exit(), stopped.toString());
    assertTrue(stopped.out().contains("took the last checkpoint"), stopped.toString());
    Result unjournaled = cli.run(COMMAND, "cluster", "start", "--journal", "none", "--data", dir.toString());
    assertEquals(2, unjournaled.exit(), unjournaled.toString());
    assertTrue(unjournaled.err().contains("first started with journal synchronous"), unjournaled.toString());
  }

  /** The whole records in a node's journal directory. */
  private static long records(Path journal) {
    return org.apiary.journal.JournalReader.scan(journal, true).values().stream()
        .mapToLong(org.apiary.journal.JournalReader.Timeline::records).sum();
  }

  private static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    } catch (java.io.IOException e) {
      return "(unreadable: " + e.getMessage() + ")";
    }
  }
}
