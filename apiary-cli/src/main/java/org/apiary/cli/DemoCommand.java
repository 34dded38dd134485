package org.apiary.cli;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apiary.ApiaryException;
import org.apiary.Application;
import org.apiary.FunctionFailedException;
import org.apiary.RegistrationException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.InvocationRequest;
import org.apiary.compiler.CompiledApplication;
import org.apiary.compiler.CompiledFunction;
import org.apiary.compiler.Deployer;
import org.apiary.compiler.FunctionCompiler;
import org.apiary.compiler.FunctionDefinition;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.DatabaseConfig;
import org.apiary.database.ProvenanceConfig;
import org.apiary.examples.bank.BankApp;
import org.apiary.examples.bank.Transfer;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.FrontendServer;
import org.apiary.frontend.RegisteredGraph;
import org.apiary.frontend.Registrar;
import org.apiary.internal.Invocation;
import org.apiary.provenance.ProvenanceSchema;
import org.apiary.runtime.FunctionCatalog;
import org.apiary.runtime.FunctionInvoker;
import org.apiary.runtime.FunctionResult;
import org.apiary.runtime.provenance.ServerProvenance;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Starts the embedded database, deploys the example bank, runs its functions and checks every outcome; then the
 * whole mission: a graph with a fan-out called through a frontend and the client, the same invocation sent again
 * and answered from its stored outcome (nothing paid twice), and a provenance query naming the function execution
 * that read a record. Exits 0 only if every step did what it should.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
    description = "Start an embedded VoltDB, deploy the example bank application, run its functions and a graph "
        + "through a frontend (exactly once, even when sent twice), query its provenance, check every result.")
public final class DemoCommand implements Callable<Integer> {
  @Option(names = "--partitions", defaultValue = "2", description = "Partitions of the embedded database (default ${DEFAULT-VALUE}).")
  int partitions;

  @Option(names = "--deposits", defaultValue = "2000", description = "Concurrent asynchronous deposits to run (default ${DEFAULT-VALUE}).")
  int deposits;

  private final PrintStream out = System.out;
  private final List<String> failures = new ArrayList<>();

  @Override
  public Integer call() throws Exception {
    long started = System.nanoTime();
    step("starting an embedded VoltDB with " + partitions + " partitions");
    Path scratch = Files.createTempDirectory("apiary-demo-");
    Path provenance = scratch.resolve("provenance.duckdb");
    try (ApiaryDatabase db = ApiaryDatabase.open(DatabaseConfig.embedded(partitions)
        .withProvenance(ProvenanceConfig.duckdb(provenance)))) {
      out.println("   listening on " + db.clientAddresses());
      step("loading the bank schema");
      db.loadSchema(BankApp.SCHEMA);

      step("compiling " + BankApp.FUNCTIONS.size() + " functions with VoltDB's planner");
      CompiledApplication app = FunctionCompiler.compile(BankApp.SCHEMA, BankApp.FUNCTIONS);
      for (CompiledFunction f : app.functions()) {
        out.printf("   %-14s %-6s %-22s %d statement(s), %s%n", f.name(), f.kind(),
            f.partitionTable() == null ? "any partition" : "on " + f.partitionTable() + "." + f.partitionColumn(),
            f.statements().size(), f.hasWrites() ? "writes" : "read-only");
      }
      step("deploying them as stored procedures");
      Deployer.deploy(db, app);
      FunctionInvoker bank = new FunctionInvoker(db, FunctionCatalog.load(db));

      step("opening accounts 1 (ada) and 2 (grace), depositing 100 and 50");
      bank.call("openAccount", 1L, "ada");
      bank.call("openAccount", 2L, "grace");
      check("balance of 1 after deposit", 100L, bank.call("deposit", 1L, 100L).value(Long.class));
      check("balance of 2 after deposit", 50L, bank.call("deposit", 2L, 50L).value(Long.class));

      step("transferring 30 from 1 to 2 (a global function across partitions)");
      bank.callGlobal("transfer", new Transfer.Request(1, 2, 30));
      check("balance of 1", 70L, bank.call("balance", 1L).value(Long.class));
      check("balance of 2", 80L, bank.call("balance", 2L).value(Long.class));

      step("transferring 1000 from 2 to 1: must fail and roll back both updates");
      try {
        bank.callGlobal("transfer", new Transfer.Request(2, 1, 1000));
        failures.add("an overdrawing transfer succeeded");
      } catch (FunctionFailedException e) {
        out.println("   refused: " + e.errorMessage());
      }
      check("balance of 1 after the refused transfer", 70L, bank.call("balance", 1L).value(Long.class));
      check("balance of 2 after the refused transfer", 80L, bank.call("balance", 2L).value(Long.class));

      step("a local function that would read another partition is rejected before deployment");
      try {
        FunctionCompiler.compile(BankApp.SCHEMA, List.of(FunctionDefinition.of("byOwner", ByOwner.class)));
        failures.add("a function reading accounts by owner was accepted as local");
      } catch (RegistrationException e) {
        out.println("   rejected: " + e.getMessage());
      }

      step(deposits + " asynchronous deposits of 1 into account 1, all in flight at once");
      long t0 = System.nanoTime();
      List<CompletableFuture<FunctionResult>> inFlight = new ArrayList<>();
      for (int i = 0; i < deposits; i++) {
        inFlight.add(bank.callAsync("deposit", 1L, Invocation.ofArguments(1L)));
      }
      CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
      double seconds = (System.nanoTime() - t0) / 1e9;
      out.printf("   done in %.2f s%n", seconds);
      check("balance of 1 after the deposits", 70L + deposits, bank.call("balance", 1L).value(Long.class));
      check("total of all deposits", 150L + deposits, bank.callGlobal("totalDeposits").value(Long.class));

      mission(db, bank, provenance);
    } catch (ApiaryException e) {
      failures.add(e.getClass().getSimpleName() + ": " + e.getMessage());
    } finally {
      deleteTree(scratch);
    }
    out.println();
    if (failures.isEmpty()) {
      out.printf("demo: every step worked (%.1f s)%n", (System.nanoTime() - started) / 1e9);
      return 0;
    }
    out.println("demo: " + failures.size() + " step(s) FAILED:");
    failures.forEach(f -> out.println("  - " + f));
    return 1;
  }

  /** A graph through a frontend, exactly once under a retry, and the provenance of what it did. */
  private void mission(ApiaryDatabase db, FunctionInvoker bank, Path provenance) throws Exception {
    long before1 = bank.call("balance", 1L).value(Long.class);
    long before2 = bank.call("balance", 2L).value(Long.class);
    step("registering graph 'payday': payroll (global) reads every account and fans the amount out to deposit, "
        + "which runs once per account on that account's partition");
    for (RegisteredGraph g : Registrar.register(db, Application.of(BankApp.SCHEMA, BankApp.PAYDAY))) {
      for (RegisteredGraph.Node n : g.nodes()) {
        out.printf("   %-8s %-6s %s%n", n.function(), n.local() ? "local" : "global", n.recorded()
            ? "outputs recorded (Algorithm 1: re-running it could change data or its outputs)" : "not recorded");
      }
    }
    step("starting a frontend and a client; calling payday(10) as invocation 'payday-demo'");
    try (FrontendServer frontend = FrontendServer.start(db, FrontendConfig.defaults());
         ApiaryClient client = ApiaryClient.connect(ClientConfig.of(frontend.endpoint()).withCaller("demo-user"))) {
      out.println("   frontend on " + frontend.endpoint());
      InvocationRequest payday = InvocationRequest.of("payday", null, 10L).withId("payday-demo");
      List<Long> balances = client.invoke(payday).values(Long.class);
      out.println("   new balances: " + balances);
      check("account 1 after payday", before1 + 10, bank.call("balance", 1L).value(Long.class));
      check("account 2 after payday", before2 + 10, bank.call("balance", 2L).value(Long.class));

      step("the client sends invocation 'payday-demo' again (as after a lost answer): it is answered from its "
          + "stored outcome and runs nothing");
      List<Long> again = client.invoke(payday).values(Long.class);
      out.println("   answer: " + again);
      if (!again.equals(balances)) {
        failures.add("the resent invocation answered " + again + ", not the stored " + balances);
      }
      check("account 1 after the resend (paid once)", before1 + 10, bank.call("balance", 1L).value(Long.class));
      check("account 2 after the resend (paid once)", before2 + 10, bank.call("balance", 2L).value(Long.class));
    }

    step("provenance: which function executions read account 1 during invocation 'payday-demo', and who called");
    List<String> readers = awaitReaders(provenance, 1L, "payday-demo");
    readers.forEach(r -> out.println("   " + r));
    if (readers.stream().noneMatch(r -> r.startsWith("deposit ") && r.contains("caller demo-user"))) {
      failures.add("provenance does not show deposit reading account 1 for invocation payday-demo: " + readers);
    }
  }

  /** The executions that read account {@code id} in invocation {@code invocation}, once their rows are loaded. */
  private static List<String> awaitReaders(Path provenance, long id, String invocation) throws Exception {
    String sql = "SELECT f.function_name, f.graph_id, f.execution_id, f.caller, e.event_type FROM "
        + ProvenanceSchema.eventsTableName("accounts") + " e JOIN " + ProvenanceSchema.FUNCTION_INVOCATIONS
        + " f ON f.exec_id = e.exec_id WHERE e.id = ? AND e.event_type = ? AND f.execution_id = ? "
        + "ORDER BY f.function_name";
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    List<String> rows = new ArrayList<>();
    while (rows.isEmpty() && System.nanoTime() < deadline) {
      ServerProvenance.active().orElseThrow().flush(java.time.Duration.ofSeconds(10));
      try (Connection c = DriverManager.getConnection("jdbc:duckdb:" + provenance);
           PreparedStatement s = c.prepareStatement(sql)) {
        s.setLong(1, id);
        s.setString(2, ProvenanceSchema.READ);
        s.setString(3, invocation);
        try (ResultSet rs = s.executeQuery()) {
          while (rs.next()) {
            rows.add(rs.getString(1) + " (graph " + rs.getString(2) + ", invocation " + rs.getString(3)
                + ", caller " + rs.getString(4) + ") " + rs.getString(5) + " account " + id);
          }
        }
      }
      if (rows.isEmpty()) {
        Thread.sleep(200);
      }
    }
    return rows;
  }

  private void deleteTree(Path dir) {
    try (var paths = Files.walk(dir)) {
      for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (java.io.IOException e) {
      out.println("   (could not delete the demo's scratch directory " + dir + ": " + e.getMessage() + ")");
    }
  }

  private void step(String what) {
    out.println("-> " + what);
  }

  private void check(String what, long expected, long actual) {
    if (expected == actual) {
      out.println("   " + what + " = " + actual);
    } else {
      failures.add(what + ": expected " + expected + " but got " + actual);
      out.println("   " + what + " = " + actual + "   WRONG, expected " + expected);
    }
  }

  /** Reads accounts by owner: not through the partition column, so it cannot be a local function. */
  public static class ByOwner extends org.apiary.LocalFunction<Long> {
    static final org.apiary.Statement BY_OWNER = org.apiary.Statement.of("SELECT id FROM accounts WHERE owner = ?");

    @Override
    protected void run() {}
  }
}
