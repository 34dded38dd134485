package org.apiary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apiary.cli.CliProcesses.Result;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The service command line as a user runs it, every command in its own JVM: {@code start --data D}, {@code deploy}
 * of an application jar built here (its classes exist only in the jar, never on the classpath), {@code invoke},
 * {@code status}, {@code stop}, {@code start --data D} again (the data and the graphs are there), a {@code deploy}
 * of a changed jar (a new graph version and a new function body), and {@code stop}; no process is left behind.
 */
class ServiceCommandLineTest {
  private static final Duration START = Duration.ofSeconds(90);
  private static final Duration COMMAND = Duration.ofSeconds(60);
  private static final String PACKAGE = "com.example.tally";
  /** How many commands {@link #runAll} runs at once. */
  private static final int AT_ONCE = 3;

  @TempDir
  Path work;

  @RegisterExtension
  final CliProcesses cli = new CliProcesses();

  @Test
  void startDeployInvokeStopStartKeepsDataAndGraphs() throws Exception {
    Path data = work.resolve("data");
    if (org.apiary.database.OtherUser.available()) {
      org.apiary.database.OtherUser.openUp(work); // as a home directory is: only the data directory may hide it
    }
    Path v1 = applicationJar("v1", "", 1);
    Path v2 = applicationJar("v2", ", String.class", 2);

    Service first = Service.start(this, data);
    Result second = run("start", "--data", data.toString());
    assertEquals(1, second.exit(), second.toString());
    assertTrue(second.err().contains("is in use by a running Apiary (pid " + first.process().pid()), second.toString());
    assertTrue(first.process().isAlive(), "a refused second start leaves the first running");

    Result deployed = run("deploy", v1.toString(), "--data", data.toString());
    assertEquals(0, deployed.exit(), deployed.toString());
    assertTrue(deployed.out().contains("graph tally_add: version 1 (new)"), deployed.toString());
    assertTrue(deployed.out().contains("graph tally_get: version 1 (new)"), deployed.toString());
    assertFalse(deployed.err().contains("warning"), "the functions came from the jar: " + deployed);

    // Credentials (issue 14): the first start created the admin key, printed it once and kept it for its owner only.
    Path adminKey = data.resolve(ServiceDirectory.ADMIN_KEY);
    String key = Files.readString(adminKey).strip();
    assertTrue(first.output().contains("created the admin API key") && first.output().contains(key), first.output());
    assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(
        Files.getPosixFilePermissions(adminKey)));
    Path keyFile = work.resolve("my.key");
    Files.writeString(keyFile, key + "\n");
    // These five run at once (their JVM starts overlap): the refused ones would each add 100 to key 7, the others
    // add 0, so the "5" after them shows that no refused call added anything, whatever their order.
    List<Result> calls = runAll(
        new Command(Map.of(), "invoke", "tally_add", "--key", "7", "100", "--frontend", first.frontend()),
        new Command(Map.of(), "invoke", "tally_add", "--key", "7", "0", "--frontend", first.frontend(),
            "--credential-file", keyFile.toString()),
        // The key from the environment, when no file is given; a file given wins over it.
        new Command(Map.of(ServiceTarget.API_KEY_VARIABLE, key), "invoke", "tally_add", "--key", "7", "0",
            "--frontend", first.frontend()),
        new Command(Map.of(ServiceTarget.API_KEY_VARIABLE, "not-" + key), "invoke", "tally_add", "--key", "7", "100",
            "--frontend", first.frontend()),
        new Command(Map.of(ServiceTarget.API_KEY_VARIABLE, "not-" + key), "invoke", "tally_add", "--key", "7", "0",
            "--frontend", first.frontend(), "--credential-file", keyFile.toString()));
    Result anonymous = calls.get(0);
    assertEquals(1, anonymous.exit(), anonymous.toString());
    assertTrue(anonymous.err().contains("refused the call, nothing ran"), anonymous.toString());
    Result withKey = calls.get(1);
    assertEquals(0, withKey.exit(), withKey.toString());
    assertEquals("0", withKey.out().strip(), "no refused call added anything: " + withKey);
    Result fromEnvironment = calls.get(2);
    assertEquals(0, fromEnvironment.exit(), fromEnvironment.toString());
    assertEquals("0", fromEnvironment.out().strip(), fromEnvironment.toString());
    Result wrongInEnvironment = calls.get(3);
    assertEquals(1, wrongInEnvironment.exit(), wrongInEnvironment.toString());
    assertTrue(wrongInEnvironment.err().contains("refused the call, nothing ran"), wrongInEnvironment.toString());
    Result fileOverEnvironment = calls.get(4);
    assertEquals(0, fileOverEnvironment.exit(), fileOverEnvironment.toString());
    assertEquals("0", fileOverEnvironment.out().strip(), "no refused call added anything: " + fileOverEnvironment);

    assertEquals("5", invoke(data, "tally_add", "--key", "7", "5"));
    assertEquals("8", invoke(data, "tally_add", "--key", "7", "3"));
    assertEquals("{\"key\":7,\"value\":8,\"version\":1}", invoke(data, "tally_get", "--key", "7", "now"));

    Result failed = run("invoke", "tally_add", "--key", "7", "not-a-number", "--data", data.toString());
    assertEquals(1, failed.exit(), failed.toString());
    assertTrue(failed.err().contains("refused the request, nothing ran"), failed.toString());
    assertEquals("", failed.out(), "nothing on stdout when the call fails");

    // Issue 42, item 5: start without waiting, then follow it and filter the list.
    Result started = run("invoke", "tally_add", "--key", "9", "2", "--id", "bg-1", "--no-wait", "--data",
        data.toString());
    assertEquals(0, started.exit(), started.toString());
    assertEquals("bg-1", started.out().strip(), "--no-wait prints the ID alone on stdout");
    Result shown = null;
    for (long deadline = System.nanoTime() + 30_000_000_000L; System.nanoTime() < deadline; Thread.sleep(200)) {
      shown = run("executions", "show", "bg-1", "--data", data.toString()); // logged as admin/bg-1: found by its ID
      if (shown.exit() == 0 && shown.out().contains("status: DONE")) {
        break;
      }
    }
    assertTrue(shown.out().contains("invocation admin/bg-1") && shown.out().contains("status: DONE")
        && shown.out().contains("result: 2"), shown.toString());
    // Six reads at once (their JVM starts overlap); none changes what another reads.
    List<Result> reads = runAll(
        new Command(Map.of(), "executions", "list", "--graph", "tally_get", "--json", "--data", data.toString()),
        new Command(Map.of(), "executions", "list", "--graph", "tally_add", "--status", "done", "--since", "10m",
            "--data", data.toString()),
        new Command(Map.of(), "executions", "list", "--since", "2099-01-01T00:00:00Z", "--data", data.toString()),
        new Command(Map.of(), "executions", "list", "--status", "finished", "--data", data.toString()),
        new Command(Map.of(), "executions", "list", "--since", "yesterday", "--data", data.toString()),
        new Command(Map.of(), "status", "--data", data.toString()));
    Result gets = reads.get(0);
    assertEquals(0, gets.exit(), gets.toString());
    List<String> lines = gets.out().lines().toList();
    assertEquals(1, lines.size(), "one call of tally_get so far, one JSON line:\n" + gets.out());
    com.fasterxml.jackson.databind.JsonNode line = org.apiary.internal.Json.MAPPER.readTree(lines.get(0));
    assertEquals("tally_get", line.get("graph").asText(), lines.get(0));
    assertEquals("DONE", line.get("status").asText(), lines.get(0));
    assertTrue(line.get("durationMs").asLong() >= 0 && line.get("finishedAt").isTextual(), lines.get(0));
    Result doneAdds = reads.get(1);
    assertEquals(0, doneAdds.exit(), doneAdds.toString());
    assertTrue(doneAdds.out().contains("admin/bg-1"), doneAdds.out());
    assertTrue(doneAdds.out().lines().filter(l -> l.startsWith("admin/")).allMatch(l -> l.contains(" tally_add ")
        && l.contains(" DONE ")), doneAdds.out());
    Result future = reads.get(2);
    assertEquals(0, future.exit(), future.toString());
    assertTrue(future.out().contains("no matching invocations"), future.toString());
    Result badStatus = reads.get(3);
    assertEquals(2, badStatus.exit(), badStatus.toString());
    assertTrue(badStatus.err().contains("--status takes one of QUEUED, RUNNING, DONE, FAILED, CANCELED, not "
        + "'finished'"), badStatus.toString());
    Result badSince = reads.get(4);
    assertEquals(2, badSince.exit(), badSince.toString());
    assertTrue(badSince.err().contains("--since takes an instant"), badSince.toString());

    Result status = reads.get(5);
    assertEquals(0, status.exit(), status.toString());
    assertTrue(status.out().contains("1 host(s), 2 partition(s)"), status.out());
    assertTrue(status.out().contains("tally_add: version 1"), status.out());
    assertTrue(status.out().contains("tally_get: version 1"), status.out());
    assertTrue(status.out().contains(first.frontend() + " (frontend "), status.out());
    assertTrue(status.out().contains("0 running"), status.out());
    assertTrue(status.out().contains("provenance backlog: "), status.out());
    assertTrue(status.out().matches("(?s).*rows waiting in the spooler: \\d+ \\(\\d+ in memory.*"),
        "the service reports its spooler's backlog: " + status.out());

    // Issue 45, finding 1: no other local user can read the passwords, the key, the data or the provenance.
    if (org.apiary.database.OtherUser.available()) {
      assertEquals(List.of(), org.apiary.database.OtherUser.readable(data), "readable by another local user");
    }

    // Issue 43, item 2: every provenance query answers while the service holds its DuckDB file (it answers them
    // itself, through its console), and says the same once the service stopped and the file is read directly.
    assertTrue(first.output().contains("apiary: console at http://127.0.0.1:"), first.output());
    Map<String, Result> whileRunning = provenanceQueries(data);
    Result functionsWhileRunning = run("executions", "show", "bg-1", "--data", data.toString());
    assertTrue(functionsWhileRunning.out().contains("functions: 1 execution(s) in the running Apiary in")
        && functionsWhileRunning.out().contains("tallyAdd: exec "), functionsWhileRunning.toString());

    // Issue 42 item 5, issue 43 item 3: bg-1 past the retention (its log row deleted, as retention deletes it once
    // its ending is in the sink's Invocations) is still listed, once, DONE, from the sink; alike after the stop.
    Result loaded = null;
    for (long deadline = System.nanoTime() + 60_000_000_000L; System.nanoTime() < deadline; Thread.sleep(500)) {
      loaded = run("provenance", "sql", "SELECT COUNT(*) AS n FROM Invocations WHERE invocation_id = 'admin/bg-1'",
          "--data", data.toString());
      if (loaded.out().lines().skip(1).findFirst().orElse("").strip().equals("1")) {
        break;
      }
    }
    assertEquals("n\n1\n(1 row)", loaded.out().strip(), "bg-1's ending loaded into the sink: " + loaded);
    ServiceTarget.Database target = new ServiceTarget.Database();
    target.data = data;
    try (org.apiary.database.ApiaryDatabase db = org.apiary.database.ApiaryDatabase.open(target.config())) {
      assertEquals(1, db.callAdmin("expiring bg-1", "@AdHoc", "DELETE FROM " + org.apiary.runtime.SystemSchema
          .INVOCATIONS + " WHERE invocation_id = ?", "admin/bg-1").getResults()[0].asScalarLong());
    }
    List<Result> listedRunning = runAll(
        new Command(Map.of(), "executions", "list", "--graph", "tally_add", "--data", data.toString()),
        new Command(Map.of(), "executions", "list", "--graph", "tally_add", "--json", "--data", data.toString()));
    Result listRunning = listedRunning.get(0);
    Result jsonRunning = listedRunning.get(1);
    assertEquals(0, listRunning.exit(), listRunning.toString());
    assertFalse(listRunning.err().contains("warning"), listRunning.toString());
    assertEquals(1, listRunning.out().lines().filter(l -> l.startsWith("admin/bg-1 ")).count(), listRunning.out());
    assertTrue(listRunning.out().lines().anyMatch(l -> l.startsWith("admin/bg-1 ") && l.contains(" DONE ")),
        listRunning.out());
    assertTrue(listRunning.out().contains("invocation(s) in the log of Apiary in " + data + " or its provenance "
        + "sink, newest first"), listRunning.out());
    assertEquals(1, jsonRunning.out().lines().filter(l -> l.contains("\"id\":\"admin/bg-1\"")).count(),
        jsonRunning.out());

    stop(data, first);

    Map<String, Result> afterStop = provenanceQueries(data);
    whileRunning.forEach((query, running) -> assertEquals(running.toString(), afterStop.get(query).toString(),
        "provenance " + query + " answered alike by the running service and by its file"));
    List<Result> listedStopped = runAll(
        new Command(Map.of(), "executions", "list", "--graph", "tally_add", "--data", data.toString()),
        new Command(Map.of(), "executions", "list", "--graph", "tally_add", "--json", "--data", data.toString()));
    Result listStopped = listedStopped.get(0);
    Result jsonStopped = listedStopped.get(1);
    assertEquals(0, listStopped.exit(), listStopped.toString());
    assertTrue(listStopped.err().contains("is stopped: listed from its provenance sink alone"), listStopped.toString());
    assertEquals(listRunning.out(), listStopped.out(), "executions list alike while running and once stopped");
    assertEquals(jsonRunning.out(), jsonStopped.out(), "executions list --json alike while running and once stopped");

    Service again = Service.start(this, data);
    assertFalse(again.output().contains("created the admin API key"), "a second start made another key");
    assertEquals(key, Files.readString(adminKey).strip());
    assertEquals("{\"key\":7,\"value\":8,\"version\":1}", invoke(data, "tally_get", "--key", "7", "later"),
        "the rows, the functions and the graphs survived the stop");
    assertEquals("9", invoke(data, "tally_add", "--key", "7", "1"));

    Result redeployed = run("deploy", v2.toString(), "--data", data.toString());
    assertEquals(0, redeployed.exit(), redeployed.toString());
    assertTrue(redeployed.out().contains("graph tally_get: version 2 (changed, was version 1)"), redeployed.toString());
    assertTrue(redeployed.out().contains("graph tally_add: version 1 (unchanged)"), redeployed.toString());
    assertEquals("{\"key\":7,\"value\":9,\"version\":2}", invoke(data, "tally_get", "--key", "7", "\"v2\""),
        "the changed jar's function runs");

    stop(data, again);
    // Journal format 3: a function's transaction is journaled with the graph its invocation ran and that graph's
    // version, as the frontend dispatched it (the journal of the last run is still there after its clean stop).
    List<org.apiary.journal.JournalRecord> journaled = new java.util.ArrayList<>();
    org.apiary.journal.JournalReader.scan(data.resolve("database").resolve("journal"), false).values()
        .forEach(t -> org.apiary.journal.JournalReader.forEach(t, journaled::add));
    assertTrue(journaled.stream().anyMatch(r -> "tally_add".equals(r.graph()) && r.graphVersion() == 1),
        "a record names graph tally_add, version 1; the " + journaled.size() + " records name "
            + journaled.stream().map(r -> r.procedure() + "/" + r.graph() + "/" + r.graphVersion()).distinct().toList());
    Result nothing = run("stop", "--data", data.toString());
    assertEquals(1, nothing.exit(), nothing.toString());
    assertTrue(nothing.err().contains("no Apiary is running in"), nothing.toString());

    for (Process p : cli.started()) {
      assertFalse(p.isAlive(), "process " + p.pid() + " was left running");
    }
    List<ProcessHandle> left = ProcessHandle.current().descendants().filter(ProcessHandle::isAlive)
        .filter(h -> h.info().commandLine().orElse("").contains("org.apiary.cli.Main")).toList();
    assertEquals(List.of(), left, "no apiary process is left behind");
  }

  @Test
  void everyServiceCommandHasHelp() {
    for (String command : List.of("start", "stop", "deploy", "invoke", "status")) {
      StringWriter out = new StringWriter();
      CommandLine cl = Main.commandLine();
      cl.setOut(new PrintWriter(out));
      assertEquals(0, cl.execute(command, "--help"), command + " --help");
      assertTrue(out.toString().startsWith("Usage: apiary " + command), out.toString());
    }
  }

  @Test
  void commandsWithoutTargetSayWhatToGive() {
    StringWriter err = new StringWriter();
    CommandLine cl = Main.commandLine();
    cl.setErr(new PrintWriter(err));
    assertEquals(2, cl.execute("invoke", "g"));
    assertTrue(err.toString().contains("--data DIR"), err.toString());
  }

  @Test
  void argumentsAreJsonOrElseStrings() {
    assertEquals("42", InvokeCommand.parse("42").toString());
    assertEquals("\"42\"", InvokeCommand.parse("\"42\"").toString());
    assertEquals("\"hello\"", InvokeCommand.parse("hello").toString());
    assertEquals("\"1 2\"", InvokeCommand.parse("1 2").toString());
    assertEquals("{\"a\":[1,true,null]}", InvokeCommand.parse("{\"a\":[1,true,null]}").toString());
    assertEquals("\"\"", InvokeCommand.parse("").toString());
  }

  // ---------------------------------------------------------------------------------------------------- helpers

  private String invoke(Path data, String... args) throws Exception {
    List<String> all = new ArrayList<>(List.of("invoke"));
    all.addAll(List.of(args));
    all.addAll(List.of("--data", data.toString()));
    Result r = run(all.toArray(String[]::new));
    assertEquals(0, r.exit(), r.toString());
    return r.out().strip();
  }

  /**
   * Each provenance query on the tally application's calls, with {@code --data}: once what the calls captured is
   * loaded (7 function executions), the results by query.
   */
  private Map<String, Result> provenanceQueries(Path data) throws Exception {
    String dir = data.toString();
    Result count = null;
    for (long deadline = System.nanoTime() + 60_000_000_000L; System.nanoTime() < deadline; Thread.sleep(500)) {
      count = run("provenance", "sql", "SELECT COUNT(*) AS n FROM FunctionInvocations", "--data", dir);
      if (count.exit() == 0 && count.out().lines().skip(1).findFirst().orElse("").strip().equals("7")) {
        break;
      }
    }
    assertEquals("n\n7\n(1 row)", count.out().strip(), "every function execution loaded: " + count);
    Map<String, String[]> queries = new java.util.LinkedHashMap<>();
    queries.put("state-at", new String[] {"state", "--table", "tallies", "--key", "k=7", "--at",
        "2099-01-01T00:00:00Z"});
    queries.put("state-execution", new String[] {"state", "--table", "tallies", "--key", "k=9", "--execution",
        "admin/bg-1"});
    queries.put("downstream", new String[] {"downstream", "--table", "tallies", "--key", "k=7"});
    queries.put("outside", new String[] {"outside", "--function", "tallyAdd", "--table", "tallies", "--allowed",
        "k=9"});
    queries.put("reads", new String[] {"reads", "--table", "tallies", "--key", "k=7"});
    queries.put("denied", new String[] {"denied", "--to", "2099-01-01T00:00:00Z"});
    queries.put("outside-purpose", new String[] {"outside-purpose", "--table", "tallies", "--key-columns", "k",
        "--allowed-purposes", "audit"});
    queries.put("sql", new String[] {"sql", "SELECT function_name, COUNT(*) AS n FROM FunctionInvocations GROUP BY "
        + "function_name ORDER BY function_name"});
    queries.put("sql-write", new String[] {"sql", "DELETE FROM FunctionInvocations"});
    queries.put("unknown-table", new String[] {"reads", "--table", "nothing", "--key", "k=7"});
    // The queries only read (sql-write is refused, and the count after them shows it), so they run at once.
    List<Command> commands = new ArrayList<>();
    for (String[] q : queries.values()) {
      List<String> args = new java.util.ArrayList<>(List.of("provenance"));
      args.addAll(List.of(q));
      args.addAll(List.of("--data", dir));
      commands.add(new Command(Map.of(), args.toArray(String[]::new)));
    }
    List<Result> answers = runAll(commands.toArray(Command[]::new));
    Map<String, Result> results = new java.util.LinkedHashMap<>();
    int i = 0;
    for (String query : queries.keySet()) {
      results.put(query, answers.get(i++));
    }
    Result state = results.get("state-at");
    assertEquals(0, state.exit(), state.toString());
    assertTrue(state.out().contains("(1 row)"), "k=7's last state: " + state);
    assertTrue(results.get("state-execution").out().contains("(no state: execution admin/bg-1 never read this "
        + "record, or it did not exist when read)"), "bg-1 read k=9 before it was written: " + results.get(
        "state-execution"));
    Result reads = results.get("reads");
    assertTrue(reads.exit() == 0 && reads.out().contains("tallyAdd") && reads.out().contains("tallyGet"),
        "k=7 was read by tally_add and tally_get: " + reads);
    Result outside = results.get("outside");
    assertTrue(outside.exit() == 0 && outside.out().contains("7") && !outside.out().contains("(no rows)"),
        "tallyAdd read k=7, outside {k=9}: " + outside);
    Result sql = results.get("sql");
    assertTrue(sql.out().contains("tallyAdd") && sql.out().contains("6"), sql.toString());
    Result write = results.get("sql-write");
    assertEquals(2, write.exit(), write.toString());
    assertTrue(write.err().contains("runs queries only") && write.err().contains("'DELETE'"), write.toString());
    Result unknown = results.get("unknown-table");
    assertTrue(unknown.exit() == 1 && unknown.err().startsWith("error: no provenance events table nothingEvents"),
        unknown.toString());
    Result after = run("provenance", "sql", "SELECT COUNT(*) AS n FROM FunctionInvocations", "--data", dir);
    assertEquals("n\n7\n(1 row)", after.out().strip(), "nothing was deleted: " + after);
    return results;
  }

  private void stop(Path data, Service service) throws Exception {
    Result stopped = run("stop", "--data", data.toString());
    assertEquals(0, stopped.exit(), stopped + "\nservice output:\n" + service.output());
    assertTrue(stopped.out().contains("stopped cleanly"), stopped.toString());
    assertTrue(service.process().waitFor(10, TimeUnit.SECONDS), "the service exited");
    assertEquals(0, service.process().exitValue(), "a clean stop ends `apiary start` with 0, as documented (it was "
        + "143, the JVM's status for SIGTERM):\n" + service.output());
    assertTrue(service.output().contains("apiary: stopped cleanly"), service.output());
    assertEquals(List.of(), OutputHygiene.problems(service.output()), "lines a new user should not see in the "
        + "output of apiary start:\n" + service.output());
    assertFalse(Files.exists(data.resolve(ServiceDirectory.STATE)), "the state file is removed on a clean stop");
  }

  private Result run(String... args) throws IOException, InterruptedException {
    return cli.run(COMMAND, args);
  }

  /** An {@code apiary} command line and what it adds to the environment. */
  private record Command(Map<String, String> environment, String... args) {}

  /**
   * Runs commands whose results do not depend on one another's order at once, {@value #AT_ONCE} at a time, each in
   * its own JVM as {@link #run} does (their JVM starts, most of each command's time, overlap); the results in the
   * commands' order. Every process has exited or been killed when this returns.
   */
  private List<Result> runAll(Command... commands) throws Exception {
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(AT_ONCE);
    try {
      List<java.util.concurrent.Future<Result>> futures = new ArrayList<>();
      for (Command c : commands) {
        futures.add(pool.submit(() -> runOwn(c)));
      }
      List<Result> results = new ArrayList<>();
      for (java.util.concurrent.Future<Result> f : futures) {
        try {
          results.add(f.get(COMMAND.toSeconds() * commands.length + 30, TimeUnit.SECONDS));
        } catch (java.util.concurrent.ExecutionException e) {
          throw e.getCause() instanceof Exception cause ? cause : e;
        }
      }
      return results;
    } finally {
      pool.shutdownNow();
      assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS), "the commands' threads ended");
    }
  }

  /**
   * One command in its own JVM, as {@link CliProcesses#run} runs it (which keeps its processes in a list that is not
   * safe for concurrent use), killed if it takes longer than {@link #COMMAND}.
   */
  private Result runOwn(Command c) throws IOException, InterruptedException {
    Path out = Files.createTempFile(work, "out-", ".log");
    Path err = Files.createTempFile(work, "err-", ".log");
    List<String> cmd = CliProcesses.java("-Xmx256m");
    cmd.addAll(List.of(c.args()));
    ProcessBuilder builder = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile());
    builder.environment().putAll(c.environment());
    Process p = builder.start();
    try {
      if (!p.waitFor(COMMAND.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new AssertionError("apiary " + String.join(" ", c.args()) + " did not finish within " + COMMAND + ":\n"
            + Files.readString(out) + Files.readString(err));
      }
      return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
    } finally {
      if (p.isAlive()) {
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  /** An {@code apiary start} process, ready. */
  record Service(Process process, Path log, String frontend) {
    static Service start(ServiceCommandLineTest test, Path data) throws IOException, InterruptedException {
      Path log = Files.createTempFile(test.work, "service-", ".log");
      Process p = test.cli.start(log, "-Xmx768m", "start", "--data", data.toString(), "--snapshot-interval-s", "30");
      long deadline = System.nanoTime() + START.toNanos();
      while (System.nanoTime() < deadline) {
        String text = Files.readString(log);
        int ready = text.indexOf("apiary: ready: frontend ");
        if (ready >= 0 && Files.exists(data.resolve(ServiceDirectory.STATE))) {
          String rest = text.substring(ready + "apiary: ready: frontend ".length());
          return new Service(p, log, rest.substring(0, rest.indexOf(',')));
        }
        if (!p.isAlive()) {
          throw new AssertionError("apiary start exited with " + p.exitValue() + " before it was ready:\n" + text);
        }
        Thread.sleep(100);
      }
      p.destroyForcibly();
      throw new AssertionError("apiary start was not ready within " + START + ":\n" + Files.readString(log));
    }

    String output() throws IOException {
      return Files.readString(log);
    }
  }

  /**
   * Compiles a small counter application into a jar whose manifest declares it. Its classes are in a package that is
   * nowhere on the classpath, so deploying it must take them from the jar.
   *
   * @param sourceEdgeType appended to tally_get's source edge: "" (any value) or ", String.class" (a changed graph)
   * @param version what tally_get reports as its version (a changed function body)
   */
  private Path applicationJar(String name, String sourceEdgeType, int version) throws IOException, URISyntaxException {
    Map<String, String> sources = Map.of(
        "TallyApp", """
            package com.example.tally;

            import org.apiary.ApiaryFunction;
            import org.apiary.Application;
            import org.apiary.Graph;

            public final class TallyApp {
              static final String SCHEMA = "CREATE TABLE tallies (k BIGINT NOT NULL, v BIGINT NOT NULL, PRIMARY KEY (k));"
                  + "PARTITION TABLE tallies ON COLUMN k;";

              public static Application application() {
                return Application.of(SCHEMA,
                    Graph.named("tally_add").addLocalFunction("tallyAdd", Add.class)
                        .addEdge(Graph.SOURCE, "tallyAdd", ApiaryFunction.SOURCE, Long.class)
                        .addEdge("tallyAdd", Graph.SINK, ApiaryFunction.SINK),
                    Graph.named("tally_get").addLocalFunction("tallyGet", Get.class)
                        .addEdge(Graph.SOURCE, "tallyGet", ApiaryFunction.SOURCE%s)
                        .addEdge("tallyGet", Graph.SINK, ApiaryFunction.SINK));
              }

              private TallyApp() {}
            }
            """.formatted(sourceEdgeType),
        "Add", """
            package com.example.tally;

            import org.apiary.LocalFunction;
            import org.apiary.Statement;

            public class Add extends LocalFunction<Long> {
              static final Statement GET = Statement.of("SELECT v FROM tallies WHERE k = ?");
              static final Statement PUT = Statement.of("UPSERT INTO tallies (k, v) VALUES (?, ?)");

              @Override
              protected void run() {
                long by = retrieveInput(SOURCE, Long.class);
                queueSQL(GET, partitionKey());
                long v = executeSQL().get(0).firstRow().map(r -> r.getLong("v")).orElse(0L) + by;
                queueSQL(PUT, partitionKey(), v);
                executeSQL();
                returnOutput(v);
              }
            }
            """,
        "Get", """
            package com.example.tally;

            import org.apiary.LocalFunction;
            import org.apiary.Statement;

            public class Get extends LocalFunction<Long> {
              static final Statement GET = Statement.of("SELECT v FROM tallies WHERE k = ?");

              @Override
              protected void run() {
                queueSQL(GET, partitionKey());
                long v = executeSQL().get(0).firstRow().map(r -> r.getLong("v")).orElse(0L);
                returnOutput(new Reading(partitionKey(), v, %d));
              }

              public record Reading(long key, long value, int version) {}
            }
            """.formatted(version));
    return CliProcesses.applicationJar(work, "tally-" + name, PACKAGE, "TallyApp", sources);
  }
}
