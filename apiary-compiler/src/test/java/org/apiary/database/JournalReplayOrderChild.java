package org.apiary.database;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apiary.compiler.Deployer;
import org.apiary.compiler.FunctionCompiler;
import org.apiary.compiler.FunctionDefinition;
import org.apiary.internal.Invocation;
import org.apiary.journal.JournalMode;
import org.apiary.runtime.FunctionCatalog;
import org.apiary.runtime.FunctionInvoker;
import org.apiary.runtime.SystemSchema;
import org.apiary.testapp.Scramble;
import org.apiary.testapp.ScrambleAll;
import org.apiary.testapp.TestApp;
import org.voltdb.VoltTable;

/**
 * The embedded side of {@link JournalReplayOrderTest}, in its own JVM so the test can SIGKILL it.
 *
 * <ul>
 *   <li>{@code load DIR SEED}: opens DIR journaled synchronously (6 partitions, no periodic checkpoint), deploys
 *       {@code scramble} and {@code scrambleAll}, and runs {@link JournalReplayOrderTest#workload} for SEED: each round
 *       calls {@code scramble} on every key, the calls of one key one after another and the keys at once, then, with
 *       nothing in flight, {@code scrambleAll}; prints {@code LOADED} and waits to be killed;</li>
 *   <li>{@code dump DIR}: opens DIR (recovery replays the journal) and prints {@code COUNTER k v} for every counter,
 *       then {@code DONE}.</li>
 * </ul>
 */
public final class JournalReplayOrderChild {
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(60);

  private JournalReplayOrderChild() {}

  /** Runs one mode; exits 1 on any failure. */
  public static void main(String[] args) {
    PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true);
    try {
      run(args, out);
      System.exit(0);
    } catch (Throwable t) {
      System.getLogger(JournalReplayOrderChild.class.getName()).log(System.Logger.Level.ERROR,
          "journal replay order child failed in mode " + args[0], t);
      System.exit(1);
    }
  }

  private static void run(String[] args, PrintStream out) throws Exception {
    DatabaseConfig config = DatabaseConfig.embedded(6).withDataDirectory(Path.of(args[1]))
        .withSnapshotInterval(Duration.ofDays(1)).withJournal(JournalMode.SYNCHRONOUS);
    try (ApiaryDatabase db = ApiaryDatabase.open(config)) {
      if (!SystemSchema.tables(db).contains("COUNTERS")) {
        db.loadSchema(TestApp.SCHEMA);
        Deployer.deploy(db, FunctionCompiler.compile(TestApp.SCHEMA, List.of(
            FunctionDefinition.of("scramble", Scramble.class),
            FunctionDefinition.of("scrambleAll", ScrambleAll.class))));
      }
      SystemSchema.ensure(db);
      FunctionInvoker invoker = new FunctionInvoker(db, FunctionCatalog.load(db));
      if (args[0].equals("dump")) {
        VoltTable t = db.callAdmin("reading", "@AdHoc", "SELECT k, v FROM counters ORDER BY k").getResults()[0];
        StringBuilder b = new StringBuilder();
        while (t.advanceRow()) {
          b.append("COUNTER ").append(t.getLong(0)).append(' ').append(t.getLong(1)).append('\n');
        }
        out.print(b);
        out.println("DONE");
        return;
      }
      for (JournalReplayOrderTest.Round round : JournalReplayOrderTest.workload(Long.parseLong(args[2]))) {
        CompletableFuture<?>[] chains = new CompletableFuture<?>[round.inputs().length];
        for (int key = 0; key < chains.length; key++) {
          long k = key;
          CompletableFuture<?> chain = CompletableFuture.completedFuture(null);
          for (long x : round.inputs()[key]) {
            chain = chain.thenCompose(done -> invoker.callAsync("scramble", k, Invocation.ofArguments(x)));
          }
          chains[key] = chain;
        }
        CompletableFuture.allOf(chains).get(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        invoker.callAsync("scrambleAll", null, Invocation.ofArguments(round.all()))
            .get(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      }
      out.println("LOADED");
      Thread.sleep(TimeUnit.MINUTES.toMillis(10));
      throw new AssertionError("not killed within 10 minutes");
    }
  }
}
