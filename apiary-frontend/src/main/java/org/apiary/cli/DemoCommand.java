package org.apiary.cli;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apiary.ApiaryException;
import org.apiary.FunctionFailedException;
import org.apiary.RegistrationException;
import org.apiary.compiler.CompiledApplication;
import org.apiary.compiler.CompiledFunction;
import org.apiary.compiler.Deployer;
import org.apiary.compiler.FunctionCompiler;
import org.apiary.compiler.FunctionDefinition;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.DatabaseConfig;
import org.apiary.examples.bank.BankApp;
import org.apiary.examples.bank.Transfer;
import org.apiary.internal.Invocation;
import org.apiary.runtime.FunctionCatalog;
import org.apiary.runtime.FunctionInvoker;
import org.apiary.runtime.FunctionResult;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Starts the embedded database, deploys the example bank, runs its functions and checks every outcome. Exits 0
 * only if every step did what it should.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
    description = "Start an embedded VoltDB, deploy the example bank application, run its functions, check the results.")
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
    try (ApiaryDatabase db = ApiaryDatabase.open(DatabaseConfig.embedded(partitions))) {
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
    } catch (ApiaryException e) {
      failures.add(e.getClass().getSimpleName() + ": " + e.getMessage());
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
