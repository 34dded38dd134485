package org.apiary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apiary.cli.CliProcesses.Result;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Issue 13's "done when", every command in its own JVM: {@code cluster start --nodes 2 --kfactor 1} (two VoltDB server
 * processes that outlive the command), {@code frontend --database ...}, {@code deploy} of an application jar built
 * here, {@code invoke} of a logged two-function graph, {@code executions list} and {@code show}, {@code status},
 * {@code cluster stop}; then no process is left: neither the nodes named in {@code cluster.json} nor the frontend.
 */
class ClusterCommandLineTest {
  /** Longer than `cluster start`'s own --timeout-s (120), so the command kills the nodes it started itself. */
  private static final Duration CLUSTER = Duration.ofSeconds(150);
  private static final Duration COMMAND = Duration.ofSeconds(45);
  /** The stop's --timeout-s; the test waits for the command longer than that plus its SIGTERM and SIGKILL waits. */
  private static final long STOP_TIMEOUT_S = 60;
  /**
   * Twice the stop's --timeout-s (its VoltDB calls are each bounded by it too) plus its SIGTERM and SIGKILL waits: a
   * stop slower than that is killed with its threads shown. The stop prints how long its phases took.
   */
  private static final Duration STOP = Duration.ofSeconds(2 * STOP_TIMEOUT_S + ClusterCommand.Stop.TERM_WAIT_S
      + ClusterCommand.Stop.KILL_WAIT_S + 20);
  private static final String PACKAGE = "com.example.chain";

  @TempDir
  Path work;

  @RegisterExtension
  final CliProcesses cli = new CliProcesses();
  private final List<Long> nodePids = new ArrayList<>();

  private final List<AutoCloseable> closeAfter = new ArrayList<>();


  @AfterEach
  void closeSinks() throws Exception {
    for (AutoCloseable c : closeAfter) {
      c.close();
    }
  }

  @AfterEach
  void killTheNodesLeft() throws InterruptedException {
    List<ProcessHandle> left = new ArrayList<>();
    for (long pid : nodePids) {
      ProcessHandle.of(pid).filter(ProcessHandle::isAlive).ifPresent(left::add);
    }
    // A `cluster start` the test had to kill leaves its nodes running (their parent gone) and no state file naming
    // them: they are found by their roots, under this test's directory.
    String under = work.toAbsolutePath().toString();
    ProcessHandle.allProcesses().filter(ProcessHandle::isAlive)
        .filter(h -> h.info().commandLine().orElse("").contains(under)).forEach(left::add);
    for (ProcessHandle node : left) {
      node.destroyForcibly();
      node.onExit().completeOnTimeout(null, 30, TimeUnit.SECONDS).join();
    }
  }

  @Test
  @Timeout(value = 480, unit = TimeUnit.SECONDS) // a bound for a slow machine; 80-150 s on two cores
  void clusterFrontendDeployInvokeExecutionsStatusStopLeavesNoProcess() throws Exception {
    Path dir = work.resolve("cluster");
    if (org.apiary.database.OtherUser.available()) {
      org.apiary.database.OtherUser.openUp(work);
    }
    org.apiary.provenance.PostgresTestSchema sink = new org.apiary.provenance.PostgresTestSchema();
    closeAfter.add(sink);
    Result started = cli.run(CLUSTER, "cluster", "start", "--nodes", "2", "--kfactor", "1", "--sites-per-host", "2",
        "--snapshot-interval-s", "30", "--sink", sink.url(), "--sink-user", "postgres", "--data", dir.toString());
    assertTrue(started.out().contains("provenance captured into " + sink.url()), started.toString());
    // Issue 41, item 5: secure by default, with VoltDB's users and an admin API key, as `apiary start` is.
    Path adminKey = new ClusterDirectory(dir).adminKey();
    String key = Files.readString(adminKey).strip();
    assertTrue(started.out().contains("created the admin API key") && started.out().contains(key), started.toString());
    assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(
        Files.getPosixFilePermissions(adminKey)));
    ClusterDirectory.State state = new ClusterDirectory(dir).readState().orElseThrow(
        () -> new AssertionError("no " + ClusterDirectory.STATE + " after: " + started));
    state.nodes().forEach(n -> nodePids.add(n.pid()));
    assertEquals(0, started.exit(), started.toString());
    assertEquals(2, state.nodes().size());
    for (ClusterDirectory.Node n : state.nodes()) {
      assertTrue(ProcessHandle.of(n.pid()).map(ProcessHandle::isAlive).orElse(false),
          "node " + n.index() + " (pid " + n.pid() + ") runs after `cluster start` exited");
    }
    String database = state.database();
    assertTrue(started.out().contains("--database " + database), started.toString());
    String users = new ClusterDirectory(dir).databaseUsers().toString();
    // A frontend gets the frontends' login alone, never the administrator's password (issue 45, finding 6).
    Path frontendUser = new ClusterDirectory(dir).frontendDatabaseUser();
    assertTrue(started.out().contains("--database-users " + frontendUser), started.toString());
    String adminPassword = org.apiary.database.DatabaseUsers.readFrom(Path.of(users)).adminPassword();
    assertFalse(java.nio.file.Files.readString(frontendUser).contains(adminPassword), "the frontends' file holds "
        + "the administrator's password");
    if (org.apiary.database.OtherUser.available()) { // issue 45, finding 1
      assertEquals(List.of(), org.apiary.database.OtherUser.readable(dir), "readable by another local user");
    }

    Result again = cli.run(COMMAND, "cluster", "start", "--nodes", "2", "--kfactor", "1", "--data", dir.toString());
    assertEquals(1, again.exit(), again.toString());
    assertTrue(again.err().contains("is in use by a running cluster"), again.toString());

    Path frontendLog = work.resolve("frontend.log");
    Process frontend = cli.start(frontendLog, "-Xmx384m", "frontend", "--database", database,
        "--database-users", frontendUser.toString());
    String listening = CliProcesses.await(frontend, frontendLog, "listening on ", COMMAND);
    String endpoint = listening.substring("listening on ".length()).lines().findFirst().orElseThrow().strip();

    Path jar = chainApplication();
    Result anonymous = cli.run(COMMAND, "deploy", jar.toString(), "--database", database);
    assertEquals(1, anonymous.exit(), anonymous.toString());
    assertTrue(anonymous.err().contains("security is on"), anonymous.toString());
    Result deployed = cli.run(COMMAND, "deploy", jar.toString(), "--database", database, "--database-users", users);
    assertEquals(0, deployed.exit(), deployed.toString());
    assertTrue(deployed.out().contains("graph chain: version 1 (new)"), deployed.toString());

    Result anonymousCall = cli.run(COMMAND, "invoke", "chain", "--key", "7", "5", "--frontend", endpoint);
    assertEquals(1, anonymousCall.exit(), anonymousCall.toString());
    assertTrue(anonymousCall.err().contains("refused the call, nothing ran"), anonymousCall.toString());
    Result invoked = cli.run(COMMAND, "invoke", "chain", "--key", "7", "5", "--id", "chain-1", "--frontend",
        endpoint, "--credential-file", adminKey.toString());
    assertEquals(0, invoked.exit(), invoked.toString());
    assertEquals("\"7 holds 5\"", invoked.out().strip());

    Result listed = cli.run(COMMAND, "executions", "list", "--database", database, "--database-users", users);
    assertEquals(0, listed.exit(), listed.toString());
    String row = listed.out().lines().filter(l -> l.startsWith("admin/chain-1 ")).findFirst()
        .orElseThrow(() -> new AssertionError("admin/chain-1 is not listed:\n" + listed));
    assertTrue(row.matches("admin/chain-1\\s+chain\\s+1\\s+DONE\\s+\\S+\\s+1\\s+\\S+Z\\s+\\S+Z\\s+\\d+\\.\\d{3} s"), row);
    assertTrue(listed.out().contains("1 of 1 logged invocation(s)"), listed.toString());

    Result failed = cli.run(COMMAND, "executions", "list", "--failed", "--database", database, "--database-users",
        users);
    assertEquals(0, failed.exit(), failed.toString());
    assertTrue(failed.out().contains("no failed invocations"), failed.toString());

    Result shown = cli.run(COMMAND, "executions", "show", "chain-1", "--database", database, "--database-users", users);
    assertEquals(0, shown.exit(), shown.toString());
    assertTrue(shown.out().contains("graph: chain, version 1"), shown.toString());
    assertTrue(shown.out().contains("status: DONE"), shown.toString());
    assertTrue(shown.out().contains("request: key 7, arguments [5]"), shown.toString());
    assertTrue(shown.out().contains("result: \"7 holds 5\""), shown.toString());
    assertTrue(shown.out().contains("functions: not shown"), shown.toString());

    Result unknown = cli.run(COMMAND, "executions", "show", "no-such-id", "--database", database, "--database-users",
        users);
    assertEquals(1, unknown.exit(), unknown.toString());
    assertTrue(unknown.err().contains("is not in the log"), unknown.toString());

    Result lateCancel = cli.run(COMMAND, "executions", "cancel", "admin/chain-1", "--reason", "too late", "--database",
        database, "--database-users", users);
    assertEquals(1, lateCancel.exit(), lateCancel.toString());
    assertTrue(lateCancel.err().contains("had already ended (DONE)"), lateCancel.toString());
    Result unknownCancel = cli.run(COMMAND, "executions", "cancel", "no-such-id", "--reason", "why", "--database",
        database, "--database-users", users);
    assertEquals(1, unknownCancel.exit(), unknownCancel.toString());
    assertTrue(unknownCancel.err().contains("is not in the log"), unknownCancel.toString());
    Result doneResume = cli.run(COMMAND, "executions", "resume", "admin/chain-1", "--database", database,
        "--database-users", users);
    assertEquals(1, doneResume.exit(), doneResume.toString());
    assertTrue(doneResume.err().contains("is DONE; only a failed or cancelled invocation can be resumed"),
        doneResume.toString());

    Result status = cli.run(COMMAND, "status", "--database", database, "--database-users", users);
    assertEquals(0, status.exit(), status.toString());
    assertTrue(status.out().contains("2 host(s), 2 partition(s), k-factor 1"), status.out());
    assertTrue(status.out().contains("chain: version 1"), status.out());
    assertTrue(status.out().contains(endpoint + " (frontend "), status.out());
    assertTrue(status.out().contains("0 running, 1 done, 0 failed"), status.out());
    assertTrue(status.out().contains("rows waiting in the spoolers (function executions and reads): not visible "
        + "from this process"), status.out());

    // Issue 41, item 1: every node captured into the one sink: the execution of each function, the chain's writes.
    assertEquals(2L, sink.awaitScalar("SELECT COUNT(*) FROM FunctionInvocations WHERE graph_id = 'chain'", 2L,
        Duration.ofSeconds(60)),
        "both functions of chain-1 are in the sink");
    assertTrue(sink.awaitScalar("SELECT COUNT(*) FROM chain_valuesEvents WHERE event_type <> 'read'", 1L,
        Duration.ofSeconds(60)) >= 1,
        "the chain's write is in the sink");

    // Issue 41, item 1: `status` with the cluster's directory shows each node's spooler, as the node reported it.
    Result byDirectory = cli.run(COMMAND, "status", "--data", dir.toString());
    assertEquals(0, byDirectory.exit(), byDirectory.toString());
    assertTrue(byDirectory.out().contains("2 of 2 node(s) running"), byDirectory.out());
    assertTrue(byDirectory.out().contains("provenance: captured into " + sink.url()), byDirectory.out());
    for (ClusterDirectory.Node n : state.nodes()) {
      assertTrue(byDirectory.out().matches("(?s).*\\n  node " + n.index() + " \\(pid " + n.pid() + "\\): rows "
          + "waiting in the spooler: \\d+ \\(\\d+ in memory, \\d+ in spill files of \\d+ bytes; oldest unloaded row "
          + "\\d+\\.\\d s old; (sink reachable; |sink UNREACHABLE at its last attempt; )?\\d+ loaded since its "
          + "start; as reported \\d.*"), "node " + n.index() + "'s own backlog report:\n" + byDirectory.out());
    }
    Result listedByDirectory = cli.run(COMMAND, "executions", "list", "--data", dir.toString());
    assertEquals(0, listedByDirectory.exit(), listedByDirectory.toString());
    // With --data, the cluster's sink is read too (issue 42 item 5): chain-1, in the log and maybe in the sink, once.
    assertTrue(listedByDirectory.out().contains("1 invocation(s) in the log of the cluster in " + dir + " or its "
        + "provenance sink"), listedByDirectory.toString());
    assertEquals(1, listedByDirectory.out().lines().filter(l -> l.startsWith("admin/chain-1 ")).count(),
        listedByDirectory.toString());
    assertFalse(listedByDirectory.err().contains("warning"), listedByDirectory.toString());

    // Issue 41, item 5: a node that died is reported, and rejoins the running cluster on `cluster start`.
    ClusterDirectory.Node second = state.nodes().get(1);
    ProcessHandle.of(second.pid()).orElseThrow().destroyForcibly();
    ProcessHandle.of(second.pid()).ifPresent(h -> h.onExit().completeOnTimeout(null, 30, TimeUnit.SECONDS).join());
    Result degraded = cli.run(COMMAND, "status", "--data", dir.toString());
    assertEquals(0, degraded.exit(), degraded.toString());
    assertTrue(degraded.out().contains("1 of 2 node(s) running"), degraded.out());
    assertTrue(degraded.out().contains("DEGRADED: node(s) 1 not running"), degraded.out());
    assertTrue(degraded.out().contains("DEGRADED: k-factor 1 NOT held"), degraded.out());
    Result rejoined = cli.run(CLUSTER, "cluster", "start", "--data", dir.toString());
    assertEquals(0, rejoined.exit(), rejoined.toString());
    assertTrue(rejoined.out().contains("node 1 rejoined"), rejoined.toString());
    ClusterDirectory.State after = new ClusterDirectory(dir).readState().orElseThrow();
    after.nodes().forEach(n -> nodePids.add(n.pid()));
    assertEquals(2, after.alive().size(), after.toString());
    Result healthy = cli.run(COMMAND, "status", "--data", dir.toString());
    assertEquals(0, healthy.exit(), healthy.toString());
    assertTrue(healthy.out().contains("2 of 2 node(s) running"), healthy.out());
    assertFalse(healthy.out().contains("DEGRADED"), healthy.out());
    Result afterRejoin = cli.run(COMMAND, "invoke", "chain", "--key", "8", "6", "--frontend", endpoint,
        "--credential-file", adminKey.toString());
    assertEquals(0, afterRejoin.exit(), afterRejoin.toString());
    assertEquals("\"8 holds 6\"", afterRejoin.out().strip());

    frontend.destroy(); // SIGTERM: the frontend closes and exits
    assertTrue(frontend.waitFor(30, TimeUnit.SECONDS), "the frontend exited on SIGTERM");

    // Longer than the command's own bounds (--timeout-s, then SIGTERM, then SIGKILL), so a slow stop reports itself.
    Result stopped;
    try {
      stopped = cli.run(STOP, "cluster", "stop", "--timeout-s", String.valueOf(STOP_TIMEOUT_S), "--data",
          dir.toString());
    } catch (AssertionError overran) {
      throw new AssertionError(overran.getMessage() + nodeLogTails(after), overran);
    }
    System.out.println(stopped.out()); // each phase's duration, for a run that comes close to the bound
    assertEquals(0, stopped.exit(), () -> stopped + nodeLogTails(state));
    assertTrue(stopped.out().contains("stopped cleanly; no server process is left"),
        () -> stopped + nodeLogTails(state));
    assertFalse(Files.exists(dir.resolve(ClusterDirectory.STATE)), "cluster.json is removed");
    for (long pid : nodePids) {
      assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "node pid " + pid + " is gone");
    }
    Result noStatus = cli.run(COMMAND, "status", "--data", dir.toString());
    assertEquals(1, noStatus.exit(), noStatus.toString());
    assertTrue(noStatus.err().contains("no cluster runs in " + dir.toAbsolutePath().normalize()), noStatus.toString());
    Result nothing = cli.run(COMMAND, "cluster", "stop", "--data", dir.toString());
    assertEquals(1, nothing.exit(), nothing.toString());
    assertTrue(nothing.err().contains("no cluster is running in"), nothing.toString());

    for (Process p : cli.started()) {
      assertFalse(p.isAlive(), "process " + p.pid() + " was left running");
    }
    List<ProcessHandle> left = ProcessHandle.current().descendants().filter(ProcessHandle::isAlive)
        .filter(h -> h.info().commandLine().orElse("").contains(dir.toString())
            || h.info().commandLine().orElse("").contains("org.apiary.cli.Main"))
        .toList();
    assertEquals(List.of(), left, "no apiary or VoltDB process is left behind");
  }

  @Test
  void newCommandsHaveHelp() {
    for (String command : List.of("executions", "executions list", "executions show", "executions cancel",
        "executions resume", "cluster", "cluster start", "cluster stop")) {
      StringWriter out = new StringWriter();
      CommandLine cl = Main.commandLine();
      cl.setOut(new PrintWriter(out));
      List<String> args = new ArrayList<>(List.of(command.split(" ")));
      args.add("--help");
      assertEquals(0, cl.execute(args.toArray(String[]::new)), command + " --help");
      assertTrue(out.toString().startsWith("Usage: apiary " + command), out.toString());
    }
    StringWriter out = new StringWriter();
    CommandLine cl = Main.commandLine();
    cl.setOut(new PrintWriter(out));
    cl.execute("executions", "list", "--help");
    assertTrue(out.toString().replaceAll("\\s+", " ").contains("one-function and read-only graphs included"),
        out.toString());
  }

  @Test
  void badClusterOptionsAreUsageErrors() {
    StringWriter err = new StringWriter();
    CommandLine cl = Main.commandLine();
    cl.setErr(new PrintWriter(err));
    assertEquals(2, cl.execute("cluster", "start", "--nodes", "2", "--kfactor", "2", "--data",
        work.resolve("bad").toString()));
    assertTrue(err.toString().contains("0 <= --kfactor < --nodes"), err.toString());
    assertEquals(2, cl.execute("cluster", "start", "--nodes", "2", "--sink", "jdbc:duckdb:" + work.resolve("p.duckdb"),
        "--data", work.resolve("bad").toString()));
    assertTrue(err.toString().contains("a DuckDB file is one process's"), err.toString());
    assertEquals(2, cl.execute("cluster", "start", "--sink-user", "someone", "--data", work.resolve("bad").toString()));
    assertTrue(err.toString().contains("go with --sink"), err.toString());
    assertEquals(2, cl.execute("cluster", "start", "--sink", "postgres://x", "--data", work.resolve("bad").toString()));
    assertTrue(err.toString().contains("--sink takes a JDBC URL"), err.toString());
    assertEquals(2, cl.execute("cluster", "start", "--loader", "127.0.0.1:21720", "--data",
        work.resolve("bad").toString()));
    assertTrue(err.toString().contains("--loader go with --sink"), err.toString());
    assertEquals(2, cl.execute("cluster", "start", "--sink", "jdbc:postgresql://127.0.0.1/x", "--sink-user", "u",
        "--loader", "127.0.0.1:21720", "--data", work.resolve("bad").toString()));
    assertTrue(err.toString().contains("give --sink-user and --sink-password-file to `apiary loader`"),
        err.toString());
    assertEquals(2, cl.execute("cluster", "start", "--sink", "jdbc:postgresql://127.0.0.1/x", "--loader", "loader",
        "--data", work.resolve("bad").toString()));
    assertTrue(err.toString().contains("--loader: a loader address is host:port"), err.toString());
    assertEquals(2, cl.execute("cluster", "start", "--secure", "--insecure", "--data", work.resolve("bad").toString()));
    assertTrue(err.toString().contains("give --secure or --insecure, not both"), err.toString());
    assertFalse(Files.exists(work.resolve("bad").resolve(ClusterDirectory.SETTINGS)), "a refused start fixes no settings");
    assertEquals(2, cl.execute("executions", "list", "--running", "--failed", "--database", "127.0.0.1:1"));
  }

  /** The last lines of each node's log, for a failure message: the logs go away with the test's directory. */
  private static String nodeLogTails(ClusterDirectory.State state) {
    StringBuilder tails = new StringBuilder();
    for (ClusterDirectory.Node n : state.nodes()) {
      tails.append("\n--- the last lines of ").append(n.log()).append(" ---\n");
      try {
        List<String> lines = Files.readAllLines(Path.of(n.log()));
        tails.append(String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size())));
      } catch (java.io.IOException e) {
        tails.append("(unreadable: ").append(e).append(')');
      }
    }
    return tails.toString();
  }

  /**
   * A two-function graph that is logged: {@code add} (writes, so it is recorded) sends the new value along to
   * {@code describe} (reads), which returns {@code "<key> holds <value>"}.
   */
  private Path chainApplication() throws Exception {
    return CliProcesses.applicationJar(work, "chain", PACKAGE, "ChainApp", Map.of(
        "ChainApp", """
            package com.example.chain;

            import org.apiary.ApiaryFunction;
            import org.apiary.Application;
            import org.apiary.Graph;

            public final class ChainApp {
              static final String SCHEMA = "CREATE TABLE chain_values (k BIGINT NOT NULL, v BIGINT NOT NULL, "
                  + "PRIMARY KEY (k)); PARTITION TABLE chain_values ON COLUMN k;";
              static final String NEXT = "next";

              public static Application application() {
                return Application.of(SCHEMA,
                    Graph.named("chain").addLocalFunction("chainAdd", Add.class)
                        .addLocalFunction("chainDescribe", Describe.class)
                        .addEdge(Graph.SOURCE, "chainAdd", ApiaryFunction.SOURCE, Long.class)
                        .addEdge("chainAdd", "chainDescribe", NEXT)
                        .addEdge("chainDescribe", Graph.SINK, ApiaryFunction.SINK));
              }

              private ChainApp() {}
            }
            """,
        "Add", """
            package com.example.chain;

            import org.apiary.LocalFunction;
            import org.apiary.Statement;

            public class Add extends LocalFunction<Long> {
              static final Statement GET = Statement.of("SELECT v FROM chain_values WHERE k = ?");
              static final Statement PUT = Statement.of("UPSERT INTO chain_values (k, v) VALUES (?, ?)");

              @Override
              protected void run() {
                long by = retrieveInput(SOURCE, Long.class);
                queueSQL(GET, partitionKey());
                long v = executeSQL().get(0).firstRow().map(r -> r.getLong("v")).orElse(0L) + by;
                queueSQL(PUT, partitionKey(), v);
                executeSQL();
                returnOutput(v, ChainApp.NEXT, partitionKey());
              }
            }
            """,
        "Describe", """
            package com.example.chain;

            import org.apiary.LocalFunction;
            import org.apiary.Statement;

            public class Describe extends LocalFunction<Long> {
              static final Statement GET = Statement.of("SELECT v FROM chain_values WHERE k = ?");

              @Override
              protected void run() {
                long sent = retrieveInput(ChainApp.NEXT, Long.class);
                queueSQL(GET, partitionKey());
                long v = executeSQL().get(0).firstRow().map(r -> r.getLong("v")).orElse(-1L);
                returnOutput(partitionKey() + " holds " + (v == sent ? String.valueOf(v) : v + " (sent " + sent + ")"));
              }
            }
            """));
  }
}
