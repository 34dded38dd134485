package org.apiary.drills;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.DatabaseConfig;
import org.apiary.database.ProvenanceConfig;
import org.apiary.database.Rows;
import org.apiary.drills.ProvenanceCheck.Sink;
import org.apiary.drills.ProvenanceWorkload.Client;
import org.apiary.drills.ProvenanceWorkload.Invocation;
import org.apiary.drills.ProvenanceWorkload.Step;
import org.apiary.drills.exactlyonce.DrillApp;
import org.apiary.drills.provenance.ProvDrillApp;
import org.apiary.frontend.Registrar;
import org.apiary.provenance.ProvenanceSink;
import org.apiary.runtime.SystemSchema;

/**
 * The client host of {@link NetworkDrill}: a process of its own in the client's network namespace, which reaches the
 * database nodes and the frontends at their 198.18 addresses only. Deploys the drill application, prints
 * {@link #LOAD_STARTED}, runs {@link ExactlyOnceDrill}'s load and oracle against those hosts, and before resolving
 * any invocation waits for the line {@link #HEALED} on its standard input (the nemesis, in the drill's process, says
 * when every fault is mended). Meanwhile provenance clients ({@link ProvenanceWorkload}, the provenance drill's
 * workload and oracle) invoke {@link ProvDrillApp}'s graphs through both frontends; once the exactly-once check is
 * done, it resolves their open invocations, waits for the sink to stop changing and checks the sink, read with SQL at
 * the sink host's address, with {@link ProvenanceCheck}. Ends with the exactly-once drill's and the provenance
 * drill's lines; exit status 0 if both passed.
 *
 * <p>Arguments: {@code DB[,DB...] FRONTEND,FRONTEND SEED SECONDS CLIENTS KEYS LEASE_MS RETENTION_MS
 * RECOVERY_SECONDS HEALED_WAIT_SECONDS SINK_URL SINK_USER PROVENANCE_CLIENTS}; the sink's password, if any, in
 * {@code PGPASSWORD}.
 */
public final class NetworkDrillClient {
  /** Printed once the application is deployed, right before the load starts. */
  static final String LOAD_STARTED = "network drill client: load started";
  /** The line the drill sends when every fault is healed. */
  static final String HEALED = "healed";

  private NetworkDrillClient() {}

  public static void main(String[] args) throws Exception {
    try {
      run(args);
    } catch (Exception | Error e) {
      // A thread of the database client may outlive main: end the process, so the drill sees it fail at once.
      System.out.println("network drill client failed: " + e);
      for (Throwable c = e; c != null; c = c.getCause()) {
        System.out.println("  " + c + " at " + java.util.Arrays.stream(c.getStackTrace()).limit(6).toList());
      }
      System.out.flush();
      System.exit(1);
    }
  }

  private static void run(String[] args) throws Exception {
    if (args.length != 13) {
      throw new IllegalArgumentException("expected DB[,DB...] FRONTEND,FRONTEND SEED SECONDS CLIENTS KEYS LEASE_MS "
          + "RETENTION_MS RECOVERY_SECONDS HEALED_WAIT_SECONDS SINK_URL SINK_USER PROVENANCE_CLIENTS, not "
          + Arrays.toString(args));
    }
    String sinkUrl = args[10];
    Properties sinkProps = ProvenanceSink.credentials(args[11], System.getenv("PGPASSWORD"));
    sinkProps.setProperty("connectTimeout", "5");
    sinkProps.setProperty("socketTimeout", "60");
    int provenanceClients = Integer.parseInt(args[12]);
    List<String> database = Arrays.asList(args[0].split(","));
    List<String> frontends = Arrays.asList(args[1].split(","));
    long leaseMs = Long.parseLong(args[6]);
    ExactlyOnceDrill.Settings settings = new ExactlyOnceDrill.Settings(Long.parseLong(args[2]),
        Integer.parseInt(args[3]), Integer.parseInt(args[4]), Integer.parseInt(args[5]), leaseMs, leaseMs / 5,
        Long.parseLong(args[7]), Integer.parseInt(args[8]), Set.of("kill", "stop", "longstop", "flaky"));
    Duration healedWait = Duration.ofSeconds(Long.parseLong(args[9]));
    // Read stdin from the start, so the drill's line is seen whenever it comes.
    CompletableFuture<String> healed = CompletableFuture.supplyAsync(NetworkDrillClient::awaitHealedLine);
    int status;
    long stopAt = settings.seconds() * 1000L;
    DatabaseConfig config = DatabaseConfig.external(database.toArray(String[]::new))
        .withTimeouts(Duration.ofSeconds(20), Duration.ofSeconds(60))
        // Community Edition allows 2 export streams: capture the writes of the provenance workload's table only.
        .withProvenance(ProvenanceConfig.sink(sinkUrl).withWriteCaptureOnly(ProvDrillApp.TABLE));
    try (ApiaryDatabase db = ApiaryDatabase.open(config)) {
      SystemSchema.ensure(db);
      Registrar.register(db, DrillApp.APP);
      Registrar.register(db, ProvDrillApp.APP);
      System.out.println(LOAD_STARTED);
      System.out.flush();
      long began = System.nanoTime();
      LongSupplier clock = () -> TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began);
      SplittableRandom master = new SplittableRandom(settings.seed() ^ 0x70726f76L);
      for (int c = 0; c < provenanceClients; c++) {
        Client client = new Client(c, Long.toUnsignedString(settings.seed(), 36), master.split(), clock, crashes);
        provenance.add(client);
        // Each client's frontends in its own order, so both frontends carry provenance load.
        List<String> mine = new ArrayList<>(frontends);
        Collections.rotate(mine, c);
        String[] order = mine.toArray(String[]::new);
        Thread t = new Thread(DrillThreads.guarded(() -> client.work(stopAt, order), crashes, System.out::println),
            "network-provenance-client-" + c);
        t.start();
        threads.add(t);
      }
      status = new ExactlyOnceDrill(settings, System.out).runAgainst(db, frontends, () -> {
        System.out.println("-> load over; waiting for the faults to be healed (at most " + healedWait.toSeconds()
            + " s)");
        try {
          String line = healed.get(healedWait.toSeconds(), TimeUnit.SECONDS);
          if (!HEALED.equals(line)) {
            throw new IllegalStateException("the drill said '" + line + "', not '" + HEALED + "'");
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while waiting for the faults to be healed", e);
        } catch (ExecutionException | TimeoutException e) {
          throw new IllegalStateException("the faults were not reported healed within " + healedWait + ": " + e, e);
        }
        System.out.println("-> faults healed; resolving every invocation");
        tamper(db, System.getProperty(TAMPER));
      });
    }
    Duration callBound = ProvenanceDrill.ATTEMPT_TIMEOUT.multipliedBy(ProvenanceDrill.MAX_ATTEMPTS).plusSeconds(10);
    DrillThreads.joinAll(threads, callBound);
    int provenanceStatus = checkProvenance(frontends, sinkUrl, sinkProps, stopAt);
    System.out.flush();
    System.exit(status != 0 ? status : provenanceStatus);
  }

  /**
   * Where the checker's own test breaks the data on purpose, to see the drill report it: {@code lose} deletes one
   * effect row, {@code duplicate} writes one again. Never set in a real run.
   */
  static final String TAMPER = "apiary.drill.network.tamper";

  private static void tamper(ApiaryDatabase db, String how) {
    if (how == null) {
      return;
    }
    Rows.Row t = db.query("choosing an effect row to tamper with", "SELECT k, invocation, step, "
        + "payload, token, upstream FROM drill_effects ORDER BY invocation, token LIMIT 1").first()
        .orElseThrow(() -> new IllegalStateException("no effect row to tamper with"));
    long k = t.getLong(0);
    String invocation = t.getString(1);
    String step = t.getString(2);
    String payload = t.getString(3);
    long token = t.getLong(4);
    long upstream = t.getLong(5);
    String sql = switch (how) {
      case "lose" -> "DELETE FROM drill_effects WHERE k = " + k + " AND token = " + token;
      case "duplicate" -> "INSERT INTO drill_effects (k, invocation, step, payload, token, upstream) VALUES (" + k
          + ", '" + invocation + "', '" + step + "', '" + payload.replace("'", "''") + "', " + token + ", " + upstream
          + ")";
      default -> throw new IllegalArgumentException(TAMPER + " takes lose or duplicate, not '" + how + "'");
    };
    db.callAdmin("tampering with an effect row (" + how + ")", "@AdHoc", sql);
    System.out.println("-> TAMPERED (" + TAMPER + "=" + how + "): step " + step + " of " + invocation);
  }

  private static final List<String> crashes = Collections.synchronizedList(new ArrayList<>());
  private static final List<Client> provenance = new ArrayList<>();
  private static final List<Thread> threads = new ArrayList<>();

  /**
   * Resolves the provenance clients' open invocations, waits for every node's spooler to drain into the sink and
   * checks the sink against the workload: 0 if they agree.
   */
  private static int checkProvenance(List<String> frontends, String sinkUrl, Properties props, long loadEndMs)
      throws java.sql.SQLException, InterruptedException {
    long began = System.nanoTime();
    LongSupplier clock = () -> TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began);
    System.out.println("-> provenance: " + ProvenanceDrill.resolveUnknown(provenance, clock,
        frontends.toArray(String[]::new)));
    List<Invocation> all = provenance.stream().flatMap(c -> c.invocations.stream()).toList();
    long executions = 0;
    long events = 0;
    for (Invocation inv : all) {
      for (Step s : inv.committedSteps()) {
        executions++;
        events += s.reads.size() + s.writes.size();
      }
    }
    // The exactly-once load's executions (and its schedule's, ticking on) go into the same sink: judge the
    // provenance workload's graphs only.
    Set<String> graphs = Arrays.stream(ProvDrillApp.Shape.values()).map(ProvDrillApp.Shape::graph)
        .collect(Collectors.toSet());
    String where = "graph_id IN (" + graphs.stream().map(g -> "'" + g + "'").collect(Collectors.joining(", ")) + ")";
    System.out.println("-> provenance: " + ProvenanceDrill.settle(sinkUrl, props, where, executions, events, 90,
        clock));
    Sink sink = Sink.read(sinkUrl, props).only(graphs);
    // Any network fault may lose a call in flight, so the whole load counts as the window where an unrecorded
    // read-only function may run again when its invocation is attempted again.
    return new ProvenanceCheck(System.out, new ProvenanceCheck.Faults(-1, -1, 0, -1,
        loadEndMs + ProvenanceCheck.FAULT_WINDOW_MS), crashes).check(all, sink);
  }

  private static String awaitHealedLine() {
    try {
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      String line = in.readLine();
      return line == null ? "(end of input)" : line.strip();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("cannot read the drill's line on standard input", e);
    }
  }
}
