package org.apiary.drills;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.apiary.ApiaryException;
import org.apiary.cli.ExtensionCommand;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.InvocationRequest;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.DatabaseConfig;
import org.apiary.database.Rows;
import org.apiary.drills.counter.CounterApp;
import org.apiary.frontend.Registrar;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * Fault drills a user can run on one machine. {@code frontend-crash}: an embedded database, two frontend processes,
 * clients incrementing counters through both; one frontend is killed with SIGKILL mid-run; clients retry with the
 * same invocation IDs; then every counter is checked against the increments the clients saw acknowledged.
 * {@code exactly-once}: the randomized checker of {@link ExactlyOnceDrill}. {@code provenance}: the randomized
 * provenance checker of {@link ProvenanceDrill}. {@code overload}: far more calls than a frontend may run at once
 * ({@link OverloadDrill}). {@code garbage}: {@code apiary start} attacked on its wire and with refused calls while a
 * valid client works ({@link GarbageDrill}). {@code durability}: SIGKILLs of the whole service under load ({@link DurabilityDrill}). {@code network}: partitions,
 * isolated frontends and degraded links between hosts of their own ({@link NetworkDrill}).
 */
@Command(name = "drill", mixinStandardHelpOptions = true,
    description = "Run a fault drill and check that no acknowledged work is lost or applied twice, or (provenance) "
        + "that captured provenance matches what the workload did.")
public final class DrillCommand implements Callable<Integer>, ExtensionCommand {
  @Parameters(index = "0", description = "The drill: frontend-crash, exactly-once, provenance, overload, garbage, "
      + "durability or network (as root: network faults between hosts in network namespaces).")
  String drill;

  @Option(names = "--seconds", description = "How long clients send load (default 12; 20 for provenance; 30 for "
      + "overload; 60 for garbage, its attacks, and for network, its faults).")
  Integer seconds;

  @Option(names = "--connections", description = "garbage: the connection flood's size (default 4500, past the "
      + "frontend's limit of 4096).")
  Integer connections;

  @Option(names = "--wire-timeout-ms", defaultValue = "30000", description = "garbage: the service's wire timeout "
      + "(apiary start --wire-timeout-ms; default ${DEFAULT-VALUE}); stalled connections must be closed within it.")
  long wireTimeoutMs;

  @Option(names = "--kill-after", defaultValue = "4", description = "Seconds into the load when a frontend is killed (default ${DEFAULT-VALUE}).")
  int killAfter;

  @Option(names = "--clients", description = "Concurrent clients (default 8; 4 for provenance and overload).")
  Integer clients;

  @Option(names = "--keys", description = "Partition keys the load spreads over (default 64 for frontend-crash, "
      + "16 for exactly-once).")
  Integer keys;

  @Option(names = "--seed", description = "exactly-once, provenance, garbage, network: the seed of every random choice (default: a "
      + "fresh one, printed).")
  Long seed;

  @Option(names = "--lease-ms", defaultValue = "2000",
      description = "exactly-once: the frontends' lease in ms (default ${DEFAULT-VALUE}).")
  long leaseMs;

  @Option(names = "--retention-ms", defaultValue = "8000",
      description = "exactly-once: how long frontends keep ended invocations, in ms (default ${DEFAULT-VALUE}).")
  long retentionMs;

  @Option(names = "--recovery-seconds", defaultValue = "15",
      description = "exactly-once, network: how long after the faults every invocation may take to end (default "
          + "${DEFAULT-VALUE}).")
  int recoverySeconds;

  @Option(names = "--skip", split = ",", description = "Faults to leave out. exactly-once: among kill, stop, longstop "
      + "(one SIGSTOP longer than the retention), flaky (keys whose writer fails), badkey (the graph whose output key has the wrong type); provenance: among cut "
      + "(the sink cut off), kill (a database server killed); garbage: attacks by name (flood, trickle_frame, ..., "
      + "refused, malformed).")
  java.util.Set<String> skip = new java.util.LinkedHashSet<>();

  @Option(names = "--sink-url", defaultValue = ProvenanceDrill.DEFAULT_SINK_URL,
      description = "provenance, network: the PostgreSQL database to capture into; the drill creates a schema of its "
          + "own there and drops it at the end (default ${DEFAULT-VALUE}; network: this machine's server, which the "
          + "hosts reach through its Unix socket). A password, if needed, comes from PGPASSWORD.")
  String sinkUrl;

  @Option(names = "--sink-user", defaultValue = "postgres",
      description = "provenance, network: the sink's user (default ${DEFAULT-VALUE}).")
  String sinkUser;

  @Option(names = "--settle-seconds", defaultValue = "60",
      description = "provenance: how long, at most, to wait for the sink to stop changing after the load (default "
          + "${DEFAULT-VALUE}).")
  int settleSeconds;

  @Option(names = "--kills", defaultValue = "10",
      description = "durability: SIGKILLs of the service during the load (default ${DEFAULT-VALUE}).")
  int kills;

  @Option(names = "--journal",
      description = "durability: the service's journal mode (default synchronous; asynchronous counts apart what "
          + "it may lose; none shows what a crash loses without one, and is not accepted with --cluster).")
  String journal;

  @Option(names = "--cluster",
      description = "durability: crash a 2-node journaled cluster with k-factor 1 (every node at once) instead of "
          + "apiary start; its journal is synchronous unless --journal asynchronous.")
  boolean cluster;

  @Option(names = "--max-in-flight", defaultValue = "500",
      description = "overload: the frontend's limit of invocations in flight (default ${DEFAULT-VALUE}).")
  int maxInFlight;

  @Option(names = "--outstanding", defaultValue = "5000",
      description = "overload: calls each client keeps open at once (default ${DEFAULT-VALUE}).")
  int outstanding;

  private final PrintStream out = System.out;

  @Override
  public Integer call() throws Exception {
    if (drill.equals("provenance")) {
      int s = seconds == null ? 20 : seconds;
      int c = clients == null ? 4 : clients;
      if (s < 1 || c < 1 || settleSeconds < 1) {
        out.println("provenance needs --seconds, --clients and --settle-seconds of at least 1");
        return 2;
      }
      if (!ProvenanceDrill.FAULTS.containsAll(skip)) {
        out.println("--skip takes " + ProvenanceDrill.FAULTS + " for provenance, not " + skip);
        return 2;
      }
      String password = System.getenv("PGPASSWORD");
      return new ProvenanceDrill(new ProvenanceDrill.Settings(seed != null ? seed
          : new java.security.SecureRandom().nextLong(), s, c, sinkUrl, sinkUser,
          password == null || password.isEmpty() ? null : password, java.util.Set.copyOf(skip), settleSeconds), out)
          .run();
    }
    if (drill.equals("durability")) {
      int s = seconds == null ? 30 : seconds;
      int c = clients == null ? 4 : clients;
      if (s < 2 || c < 1 || kills < 0) {
        out.println("durability needs --seconds of at least 2, --clients of at least 1 and --kills of at least 0");
        return 2;
      }
      String mode = journal != null ? journal : "synchronous";
      if (cluster && !mode.equalsIgnoreCase("asynchronous") && !mode.equalsIgnoreCase("synchronous")) {
        out.println("durability --cluster runs a journaled cluster (without a journal a crash of every node loses "
            + "what came after the last snapshot); --journal " + mode + " is not accepted with it");
        return 2;
      }
      long sd = seed != null ? seed : new java.security.SecureRandom().nextLong();
      return new DurabilityDrill(new DurabilityDrill.Settings(sd, s, kills, c, keys == null ? 16 : keys, mode,
          cluster), out).run();
    }
    if (drill.equals("garbage")) {
      int s = seconds == null ? 60 : seconds;
      int n = connections == null ? 4_500 : connections;
      long minSeconds = wireTimeoutMs / 1000 + 10;
      if (s < minSeconds || n < 1 || wireTimeoutMs < 1_000) {
        out.println("garbage needs --connections of at least 1, --wire-timeout-ms of at least 1000 and --seconds of "
            + "at least the wire timeout plus 10 (" + minSeconds + "), so every stalled connection is seen closed");
        return 2;
      }
      if (n > GarbageDrill.maxConnections()) {
        out.println("--connections " + n + " would take this process past its file-descriptor limit (ulimit -n); "
            + "at most " + GarbageDrill.maxConnections());
        return 2;
      }
      if (!GarbageDrill.skippable().containsAll(skip)) {
        out.println("--skip takes " + GarbageDrill.skippable() + " for garbage, not " + skip);
        return 2;
      }
      return new GarbageDrill(new GarbageDrill.Settings(seed != null ? seed : new java.security.SecureRandom()
          .nextLong(), s, n, wireTimeoutMs, java.util.Set.copyOf(skip)), out).run();
    }
    if (drill.equals("network")) {
      int s = seconds == null ? 60 : seconds;
      int c = clients == null ? 4 : clients;
      int k = keys == null ? 16 : keys;
      if (s < 1 || c < 1 || k < 1 || recoverySeconds < 1) {
        out.println("network needs --seconds, --clients, --keys and --recovery-seconds of at least 1");
        return 2;
      }
      return new NetworkDrill(new NetworkDrill.Settings(seed != null ? seed : new java.security.SecureRandom()
          .nextLong(), s, c, k, recoverySeconds, sinkUrl, sinkUser, System.getenv("PGPASSWORD"), 2), out).run();
    }
    if (drill.equals("overload")) {
      int s = seconds == null ? 30 : seconds;
      int c = clients == null ? 4 : clients;
      if (s < 1 || c < 1 || maxInFlight < 1 || outstanding < 1) {
        out.println("overload needs --seconds, --clients, --max-in-flight and --outstanding of at least 1");
        return 2;
      }
      return new OverloadDrill(new OverloadDrill.Settings(s, c, maxInFlight, outstanding), out).run();
    }
    if (seconds == null) {
      seconds = 12;
    }
    if (clients == null) {
      clients = 8;
    }
    if (drill.equals("exactly-once")) {
      if (seconds < 1 || clients < 1 || (keys != null && keys < 1) || leaseMs < 500
          || retentionMs < ExactlyOnceDrill.MIN_RETENTION_MS || recoverySeconds < 1) {
        out.println("exactly-once needs --seconds, --clients, --keys and --recovery-seconds of at least 1, "
            + "--lease-ms of at least 500 and --retention-ms of at least " + ExactlyOnceDrill.MIN_RETENTION_MS
            + " (longer than its clients wait for a call, or exactly-once does not promise what it checks)");
        return 2;
      }
      if (!ExactlyOnceDrill.FAULTS.containsAll(skip)) {
        out.println("--skip takes " + ExactlyOnceDrill.FAULTS + ", not " + skip);
        return 2;
      }
      long s = seed != null ? seed : new java.security.SecureRandom().nextLong();
      return new ExactlyOnceDrill(new ExactlyOnceDrill.Settings(s, seconds, clients, keys == null ? 16 : keys,
          leaseMs, leaseMs / 5, retentionMs, recoverySeconds, java.util.Set.copyOf(skip)), out).run();
    }
    if (!drill.equals("frontend-crash")) {
      out.println("unknown drill '" + drill + "'; available: frontend-crash, exactly-once, provenance, overload, garbage, "
          + "durability, network");
      return 2;
    }
    if (keys == null) {
      keys = 64;
    }
    if (killAfter >= seconds) {
      out.println("--kill-after must be less than --seconds");
      return 2;
    }
    try (ApiaryDatabase db = ApiaryDatabase.open(DatabaseConfig.embedded(2))) {
      out.println("-> embedded database on " + db.clientAddresses() + "; registering the counter application");
      Registrar.register(db, CounterApp.APP);
      List<String> options = List.of("--lease-ms", "2000", "--heartbeat-ms", "400");
      FrontendProcess[] both = FrontendProcess.startTwo(db.clientAddresses(), options, options,
          Duration.ofSeconds(60));
      try (FrontendProcess victim = both[0]; FrontendProcess survivor = both[1]) {
        out.println("-> frontends " + victim.endpoint() + " (will be killed) and " + survivor.endpoint());
        return run(db, victim, survivor);
      }
    }
  }

  private int run(ApiaryDatabase db, FrontendProcess victim, FrontendProcess survivor) throws InterruptedException {
    AtomicLongArray acknowledged = new AtomicLongArray(keys);
    AtomicLong unresolved = new AtomicLong();
    long start = System.nanoTime();
    long stopSending = start + Duration.ofSeconds(seconds).toNanos();
    List<Thread> threads = new ArrayList<>();
    for (int c = 0; c < clients; c++) {
      // Alternate the first frontend so both carry load from the start.
      List<String> order = c % 2 == 0 ? List.of(victim.endpoint(), survivor.endpoint())
          : List.of(survivor.endpoint(), victim.endpoint());
      SplittableRandom random = new SplittableRandom(c);
      Thread t = new Thread(() -> {
        // The client resends a request with the same ID, to the next frontend, until some frontend gives a
        // definite answer or the attempts run out.
        try (ApiaryClient client = ApiaryClient.connect(ClientConfig.of(order.toArray(String[]::new))
            .withAttemptTimeout(Duration.ofSeconds(2)).withMaxAttempts(40))) {
          while (System.nanoTime() < stopSending) {
            int key = random.nextInt(keys);
            try {
              client.invoke(InvocationRequest.of("increment", (long) key, 1L));
              acknowledged.incrementAndGet(key);
            } catch (ApiaryException e) {
              System.err.println("an increment got no definite answer: " + e.getMessage());
              unresolved.incrementAndGet();
            }
          }
        }
      }, "drill-client-" + c);
      threads.add(t);
      t.start();
    }
    Thread.sleep(Duration.ofSeconds(killAfter).toMillis());
    long before = sum(acknowledged);
    victim.kill();
    out.printf("-> killed frontend %s with SIGKILL at %.1f s, after %d acknowledged increments%n", victim.endpoint(),
        (System.nanoTime() - start) / 1e9, before);
    for (Thread t : threads) {
      t.join(Duration.ofSeconds(seconds + 120).toMillis());
      if (t.isAlive()) {
        out.println("a client did not finish within its bound");
        unresolved.incrementAndGet();
      }
    }
    out.printf("-> load over after %.1f s: %d increments acknowledged after the kill%n",
        (System.nanoTime() - start) / 1e9, sum(acknowledged) - before);

    long ack = 0;
    long applied = 0;
    long duplicates = 0;
    long lost = 0;
    long[] values = new long[keys];
    for (Rows.Row row : db.query("reading counters", "SELECT k, v FROM counters ORDER BY k")) {
      values[(int) row.getLong(0)] = row.getLong(1);
    }
    for (int k = 0; k < keys; k++) {
      long a = acknowledged.get(k);
      ack += a;
      applied += values[k];
      duplicates += Math.max(0, values[k] - a);
      lost += Math.max(0, a - values[k]);
    }
    boolean ok = ack == applied && duplicates == 0 && lost == 0 && unresolved.get() == 0 && before > 0;
    if (unresolved.get() > 0) {
      out.println("-> " + unresolved.get() + " request(s) never got an answer");
    }
    if (before == 0) {
      out.println("-> no increment was acknowledged before the kill, so the drill did not test a crash mid-run");
    }
    out.printf("drill frontend-crash: acknowledged=%d applied=%d duplicates=%d lost=%d%n", ack, applied, duplicates, lost);
    return ok ? 0 : 1;
  }

  private static long sum(AtomicLongArray a) {
    long s = 0;
    for (int i = 0; i < a.length(); i++) {
      s += a.get(i);
    }
    return s;
  }
}
