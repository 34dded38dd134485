package org.apiary.database;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.apiary.internal.Invocation;
import org.apiary.journal.JournalMode;
import org.apiary.runtime.FunctionInvoker;
import org.voltdb.VoltTable;

/**
 * The embedded side of {@link JournalCrashTest}, in its own JVM so the test can SIGKILL it. Prints {@code KEY value}
 * lines, flushed as they happen.
 *
 * <ul>
 *   <li>{@code load DIR MODE BASE [external-deploy]}: opens DIR journaled in MODE (with {@code external-deploy},
 *       deploys through a second connection, as another process would, and takes no periodic checkpoint), then adds
 *       k to counter k for k = BASE, BASE+1, ...
 *       with 32 calls in flight, printing {@code ACK k} once a call is acknowledged; prints {@code LOADING} after the
 *       first 200 and runs until killed; with {@code report=REPORT_DIR} in place of {@code external-deploy}, it
 *       writes the journal's status report (what {@code apiary status} reads) into REPORT_DIR every 200 ms and takes
 *       no periodic checkpoint;</li>
 *   <li>{@code count DIR MODE [accept-loss]}: opens DIR (accepting journal loss if asked) and prints
 *       {@code COUNTER k v} for every counter, then {@code DONE}.</li>
 * </ul>
 */
public final class JournalCrashChild {
  private JournalCrashChild() {}

  /** Runs one mode; exits 1 on any failure. */
  public static void main(String[] args) {
    PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true);
    try {
      run(args, out);
      System.exit(0);
    } catch (Throwable t) {
      System.getLogger(JournalCrashChild.class.getName()).log(System.Logger.Level.ERROR,
          "journal crash child failed in mode " + args[0], t);
      System.exit(1);
    }
  }

  private static void run(String[] args, PrintStream out) throws Exception {
    boolean externalDeploy = args.length > 4 && args[4].equals("external-deploy");
    Path report = args.length > 4 && args[4].startsWith("report=") ? Path.of(args[4].substring(7)) : null;
    DatabaseConfig config = DatabaseConfig.embedded(2).withDataDirectory(Path.of(args[1]))
        // With a report (the fsync failure test): no periodic checkpoint either, so the restart recovers from the
        // journal on the faulty device, not from a snapshot taken after the fault on another disk.
        .withSnapshotInterval(Duration.ofSeconds(externalDeploy || report != null ? 600 : 3))
        .withJournal(JournalMode.parse(args[2]))
        .withAcceptJournalLoss(args.length > 3 && args[3].equals("accept-loss"));
    try (ApiaryDatabase db = ApiaryDatabase.open(config)) {
      FunctionInvoker invoker;
      if (externalDeploy) {
        // As `apiary deploy` does from its own process: the catalog changes through a connection the journal does
        // not see, and no periodic checkpoint comes for 10 minutes.
        try (ApiaryDatabase other = ApiaryDatabase.open(DatabaseConfig.external(db.clientAddresses()
            .toArray(String[]::new)))) {
          DurabilityFixture.deploy(other);
        }
        invoker = new FunctionInvoker(db, org.apiary.runtime.FunctionCatalog.load(db));
      } else {
        invoker = DurabilityFixture.deploy(db);
      }
      if (args[0].equals("count")) {
        VoltTable t = db.callAdmin("reading", "@AdHoc", "SELECT k, v FROM counters ORDER BY k").getResults()[0];
        StringBuilder b = new StringBuilder();
        while (t.advanceRow()) {
          b.append("COUNTER ").append(t.getLong(0)).append(' ').append(t.getLong(1)).append('\n');
        }
        out.print(b);
        out.println("DONE");
        return;
      }
      long base = Long.parseLong(args[3]);
      if (report != null) {
        reportJournal(report);
      }
      Semaphore inFlight = new Semaphore(32);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      for (long k = base; System.nanoTime() < deadline; k++) {
        if (!inFlight.tryAcquire(30, TimeUnit.SECONDS)) {
          throw new AssertionError("no call was answered within 30 s");
        }
        long key = k;
        invoker.callAsync("increment", key, Invocation.ofArguments(key)).whenComplete((r, e) -> {
          synchronized (out) {
            out.println(e == null ? "ACK " + key : "ERR " + key + " " + e);
            if (e == null && key == base + 200) {
              out.println("LOADING");
            }
          }
          inFlight.release();
        });
      }
      throw new AssertionError("not killed within 120 s");
    }
  }

  /** Writes the journal's status report into {@code directory} every 200 ms, as {@code apiary start} does. */
  private static void reportJournal(Path directory) {
    Thread t = new Thread(() -> {
      while (true) {
        org.apiary.runtime.journal.JournalStatusReport.of(org.apiary.runtime.journal.ServerJournal.current())
            .ifPresent(r -> r.writeTo(directory));
        try {
          Thread.sleep(200);
        } catch (InterruptedException e) {
          return;
        }
      }
    }, "journal-status-reporter");
    t.setDaemon(true);
    t.start();
  }
}
