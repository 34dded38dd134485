package org.apiary.database;

import java.nio.file.Path;
import java.time.Duration;
import org.apiary.runtime.FunctionInvoker;

/**
 * The embedded side of {@link EmbeddedDurabilityTest}, run in its own JVM (the test JVM may already hold an
 * embedded VoltDB). Prints what it found as {@code KEY value} lines.
 *
 * <ul>
 *   <li>{@code reopen DIR}: writes counters 0..99, closes, opens again in this JVM and prints {@code PRESENT n};</li>
 *   <li>{@code crash DIR}: writes counters 0..99, waits for an automatic snapshot, prints {@code SNAPSHOTTED}, writes
 *       counters 100..199, prints {@code WROTE} and waits to be killed;</li>
 *   <li>{@code count DIR}: opens and prints {@code PRESENT n} for 0..99 and {@code LATER n} for 100..199;</li>
 *   <li>{@code listeners DIR}: opens (with a data directory if DIR is not {@code -}) and prints {@code LISTENING
 *       address:port} for every TCP socket this process listens on, from {@code /proc}.</li>
 * </ul>
 */
public final class EmbeddedDurabilityChild {
  private EmbeddedDurabilityChild() {}

  /** Runs one mode; exits 1 on any failure (VoltDB's threads would keep the JVM alive otherwise). */
  public static void main(String[] args) {
    try {
      run(args[0], args[1]);
      System.exit(0);
    } catch (Throwable t) {
      // stderr goes to the same log as stdout, which the test shows when this child fails
      System.getLogger(EmbeddedDurabilityChild.class.getName()).log(System.Logger.Level.ERROR,
          "embedded durability child failed in mode " + args[0] + " on " + args[1], t);
      System.exit(1);
    }
  }

  private static void run(String mode, String dir) throws Exception {
    DatabaseConfig config = DatabaseConfig.embedded(2).withDataDirectory(Path.of(dir))
        .withSnapshotInterval(Duration.ofSeconds(2));
    switch (mode) {
      case "reopen" -> {
        try (ApiaryDatabase db = ApiaryDatabase.open(config)) {
          DurabilityFixture.write(DurabilityFixture.deploy(db), 0, 100);
        }
        try (ApiaryDatabase db = ApiaryDatabase.open(config)) {
          DurabilityFixture.deploy(db);
          System.out.println("PRESENT " + DurabilityFixture.present(db, 0, 100));
        }
      }
      case "crash" -> {
        try (ApiaryDatabase db = ApiaryDatabase.open(config)) {
          FunctionInvoker invoker = DurabilityFixture.deploy(db);
          DurabilityFixture.write(invoker, 0, 100);
          DurabilityFixture.awaitAutomaticSnapshot(db, System.currentTimeMillis(), Duration.ofSeconds(30));
          System.out.println("SNAPSHOTTED");
          DurabilityFixture.write(invoker, 100, 200);
          System.out.println("WROTE");
          Thread.sleep(60_000); // the test kills this JVM long before
          throw new AssertionError("not killed within 60 s");
        }
      }
      case "count" -> {
        try (ApiaryDatabase db = ApiaryDatabase.open(config)) {
          FunctionInvoker invoker = DurabilityFixture.deploy(db);
          System.out.println("PRESENT " + DurabilityFixture.present(db, 0, 100));
          System.out.println("LATER " + DurabilityFixture.present(db, 100, 200));
          DurabilityFixture.write(invoker, 1000, 1001); // still writable
        }
      }
      case "listeners" -> {
        try (ApiaryDatabase db = ApiaryDatabase.open(dir.equals("-") ? DatabaseConfig.embedded(2) : config)) {
          for (String listening : ListeningSockets.ofThisProcess()) {
            System.out.println("LISTENING " + listening);
          }
        }
      }
      default -> throw new IllegalArgumentException("unknown mode " + mode);
    }
  }
}
