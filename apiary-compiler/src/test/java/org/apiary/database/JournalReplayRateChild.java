package org.apiary.database;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apiary.internal.Invocation;
import org.apiary.journal.JournalMode;
import org.apiary.runtime.FunctionInvoker;

/**
 * The embedded side of {@link JournalReplayRateTest}, in its own JVM so the test can SIGKILL it after the load:
 * recovery then has the whole journal to replay, since no checkpoint follows the one the database opened with.
 *
 * <ul>
 *   <li>{@code load DIR MODE N}: opens DIR journaled in MODE with no periodic checkpoint, adds 1 to counter
 *       {@code i % 10000} for i = 0 .. N-1 (single-partition writes spread over every partition), 64 calls in flight,
 *       waits until the journal holds all of them on disk, prints {@code LOADED N seconds} and waits to be
 *       killed;</li>
 *   <li>{@code recover DIR MODE}: opens DIR (which replays the journal), prints {@code RECOVERED seconds} (the whole
 *       open) and {@code TOTAL sum} (the sum of every counter), then {@code DONE}.</li>
 * </ul>
 */
public final class JournalReplayRateChild {
  /** How many distinct counters the load spreads its increments over. */
  static final int COUNTERS = 10_000;

  private JournalReplayRateChild() {}

  /** Runs one mode; exits 1 on any failure. */
  public static void main(String[] args) {
    PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true);
    try {
      run(args, out);
      System.exit(0);
    } catch (Throwable t) {
      System.getLogger(JournalReplayRateChild.class.getName()).log(System.Logger.Level.ERROR,
          "journal replay rate child failed in mode " + args[0], t);
      System.exit(1);
    }
  }

  private static void run(String[] args, PrintStream out) throws Exception {
    DatabaseConfig config = DatabaseConfig.embedded(2).withDataDirectory(Path.of(args[1]))
        .withSnapshotInterval(Duration.ofDays(1)).withJournal(JournalMode.parse(args[2]));
    long opening = System.nanoTime();
    try (ApiaryDatabase db = ApiaryDatabase.open(config)) {
      double openSeconds = (System.nanoTime() - opening) / 1e9;
      FunctionInvoker invoker = DurabilityFixture.deploy(db);
      if (args[0].equals("recover")) {
        out.printf("RECOVERED %.3f%n", openSeconds);
        out.println("TOTAL " + DurabilityFixture.scalar(db, "SELECT COALESCE(SUM(v), 0) FROM counters"));
        out.println("DONE");
        return;
      }
      long n = Long.parseLong(args[3]);
      Semaphore inFlight = new Semaphore(64);
      AtomicReference<Throwable> failed = new AtomicReference<>();
      long started = System.nanoTime();
      for (long i = 0; i < n && failed.get() == null; i++) {
        if (!inFlight.tryAcquire(30, TimeUnit.SECONDS)) {
          throw new AssertionError("no call was answered within 30 s");
        }
        long key = i % COUNTERS;
        invoker.callAsync("increment", key, Invocation.ofArguments(1L)).whenComplete((r, e) -> {
          if (e != null) {
            failed.compareAndSet(null, e);
          }
          inFlight.release();
        });
      }
      if (!inFlight.tryAcquire(64, 60, TimeUnit.SECONDS)) {
        throw new AssertionError("the last calls were not answered within 60 s");
      }
      if (failed.get() != null) {
        throw new AssertionError("a call failed", failed.get());
      }
      double seconds = (System.nanoTime() - started) / 1e9;
      // An asynchronous journal acknowledges before its fsync: wait until everything is on disk before saying so.
      org.apiary.runtime.journal.ServerJournal.current().whenCommittedIsDurable().get(60, TimeUnit.SECONDS);
      out.printf("LOADED %d %.3f%n", n, seconds);
      Thread.sleep(TimeUnit.MINUTES.toMillis(30));
      throw new AssertionError("not killed within 30 minutes");
    }
  }
}
