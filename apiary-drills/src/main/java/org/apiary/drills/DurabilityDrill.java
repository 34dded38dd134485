package org.apiary.drills;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apiary.ApiaryException;
import org.apiary.FunctionFailedException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.GraphResult;
import org.apiary.client.InvocationRequest;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.LocalCluster;
import org.apiary.drills.durability.DurabilityApp;
import org.apiary.frontend.Registrar;
import org.voltdb.VoltTable;

/**
 * The crash checker of issue 40: clients run single-partition writes, multi-partition writes and writes that fail
 * through {@code apiary start}, whose whole process (embedded VoltDB and frontend) is SIGKILLed {@code kills} times at
 * random moments (under load, during checkpoints, and now and then during its own recovery) and started again on the
 * same directory and port. The clients keep an oracle of their own: every invocation acknowledged and its answer.
 * At the end every unresolved invocation is resent with its ID until it has an answer, acknowledged ones are resent
 * to check they answer from their outcome, and the data is read back:
 * {@code drill durability: acknowledged=N present=N lost=0 duplicated=0 resend_rerun=0 diverged=0}.
 */
final class DurabilityDrill {
  /**
   * @param journal the journal mode of the service ({@code none} shows what a crash loses without one)
   */
  record Settings(long seed, int seconds, int kills, int clients, int keys, String journal) {}

  private static final Duration START = Duration.ofSeconds(180);

  private final Settings settings;
  private final PrintStream out;
  private final Map<String, long[]> increments = new ConcurrentHashMap<>(); // id -> {key, answer}
  private final Map<String, Long> tallies = new ConcurrentHashMap<>(); // id -> answer
  private final Map<String, InvocationRequest> requests = new ConcurrentHashMap<>();
  private final Map<String, Long> keyOf = new ConcurrentHashMap<>();
  private final ConcurrentLinkedQueue<InvocationRequest> unknown = new ConcurrentLinkedQueue<>();
  private final AtomicLong failedAsExpected = new AtomicLong();
  private final ConcurrentLinkedQueue<String> unexpected = new ConcurrentLinkedQueue<>();
  private final Path serviceLog = Files.createTempFile("apiary-durability-drill-service-", ".log");

  DurabilityDrill(Settings settings, PrintStream out) throws IOException {
    this.settings = settings;
    this.out = out;
  }

  int run() throws Exception {
    out.println("-> drill durability, seed " + settings.seed() + ": " + settings.kills() + " SIGKILLs of apiary start "
        + "(journal " + settings.journal() + ") spread over about " + settings.seconds() + " s of load from "
        + settings.clients() + " clients, each restarted on the same directory and port");
    Path dir = Files.createTempDirectory("apiary-durability-drill-");
    int port = LocalCluster.freePorts(1)[0];
    List<String> options = List.of("--port", String.valueOf(port), "--no-credentials", "--no-provenance",
        "--snapshot-interval-s", "5", "--journal", settings.journal());
    SplittableRandom random = new SplittableRandom(settings.seed());
    ServiceProcess service = ServiceProcess.launch(dir, options);
    int diverged = 0;
    try {
      service.awaitReady(START);
      try (ApiaryDatabase db = admin(dir, service)) {
        Registrar.register(db, DurabilityApp.APP);
      }
      AtomicBoolean stop = new AtomicBoolean();
      String endpoint = "tcp://127.0.0.1:" + port;
      List<Thread> clients = new ArrayList<>();
      for (int c = 0; c < settings.clients(); c++) {
        long clientSeed = random.nextLong();
        Thread t = new Thread(() -> load(endpoint, new SplittableRandom(clientSeed), stop), "durability-client-" + c);
        clients.add(t);
        t.start();
      }
      long start = System.nanoTime();
      // Each kill comes after a random stretch of load since the service was last ready: on average the load's
      // seconds spread over the kills, so some come right after a recovery and some deep into the load.
      long meanGapMs = Math.max(200, settings.seconds() * 1_000L / Math.max(1, settings.kills()));
      for (int i = 0; i < settings.kills(); i++) {
        Thread.sleep(100 + random.nextLong(2 * meanGapMs));
        service.kill();
        long acked = increments.size() + tallies.size();
        out.printf("-> SIGKILL %d of %d at %.1f s (%d acknowledged so far); restarting%n", i + 1, settings.kills(),
            (System.nanoTime() - start) / 1e9, acked);
        keepLog(service);
        service = ServiceProcess.launch(dir, options);
        if (random.nextInt(4) == 0) { // now and then, kill it again while it recovers
          Thread.sleep(500 + random.nextInt(2_500));
          if (!service.output().contains(ServiceProcess.READY)) {
            service.kill();
            out.println("   ... and again during its recovery");
            keepLog(service);
            service = ServiceProcess.launch(dir, options);
          }
        }
        try {
          service.awaitReady(START);
        } catch (IllegalStateException e) {
          diverged++;
          out.println("-> the service did not come back: " + e.getMessage());
          break;
        }
      }
      Thread.sleep(1_000 + random.nextLong(meanGapMs)); // load on the last recovery too
      stop.set(true);
      for (Thread t : clients) {
        t.join(START.toMillis());
      }
      return diverged > 0 ? report(null, dir, service, diverged) : report(endpoint, dir, service, 0);
    } finally {
      service.stop(Duration.ofSeconds(60));
      keepLog(service);
      deleteTree(dir);
      out.println("-> the service's output, every run of it: " + serviceLog);
    }
  }

  /** Appends a finished run's output to {@link #serviceLog} and deletes its own log. */
  private void keepLog(ServiceProcess service) throws IOException {
    Files.writeString(serviceLog, "==== apiary start\n" + service.output(), java.nio.file.StandardOpenOption.APPEND);
    service.deleteLog();
  }

  private void load(String endpoint, SplittableRandom random, AtomicBoolean stop) {
    try {
      loadUntil(endpoint, random, stop);
    } catch (RuntimeException e) {
      unexpected.add("a client stopped: " + e);
    }
  }

  private void loadUntil(String endpoint, SplittableRandom random, AtomicBoolean stop) {
    try (ApiaryClient client = client(endpoint)) {
      while (!stop.get()) {
        int op = random.nextInt(10);
        long key = random.nextInt(settings.keys());
        String id = "d-" + Long.toHexString(random.nextLong());
        InvocationRequest request = (op < 8 ? InvocationRequest.of("increment", key, 1L)
            : op == 8 ? InvocationRequest.of("tally", null, 1L) : InvocationRequest.of("failing", key, 1L)).withId(id);
        requests.put(id, request);
        keyOf.put(id, key);
        call(client, request);
      }
    }
  }

  private void call(ApiaryClient client, InvocationRequest request) {
    try {
      record(request, client.invoke(request));
    } catch (FunctionFailedException e) {
      if (request.graph().equals("failing")) {
        failedAsExpected.incrementAndGet();
      } else {
        unexpected.add(request.id() + " (" + request.graph() + ") failed: " + e.getMessage());
      }
    } catch (ApiaryException e) {
      unknown.add(request); // no definite answer: resent at the end with the same ID
    }
  }

  private void record(InvocationRequest request, GraphResult result) {
    long answer = result.value(Long.class);
    switch (request.graph()) {
      case "increment" -> increments.put(request.id(), new long[] {keyOf.get(request.id()), answer});
      case "tally" -> tallies.put(request.id(), answer);
      default -> unexpected.add(request.id() + " (failing) succeeded with " + answer);
    }
  }

  private int report(String endpoint, Path dir, ServiceProcess service, int diverged) throws Exception {
    long rerun = 0;
    long unresolved = 0;
    if (endpoint != null) {
      try (ApiaryClient client = client(endpoint)) {
        InvocationRequest r;
        while ((r = unknown.poll()) != null) {
          try {
            record(r, client.invoke(r));
          } catch (FunctionFailedException e) {
            failedAsExpected.incrementAndGet();
          } catch (ApiaryException e) {
            unresolved++;
            out.println("-> " + r.id() + " has no answer even now: " + e.getMessage());
          }
        }
        // An acknowledged invocation resent after the crashes answers from its outcome; a different answer means it
        // ran again.
        List<Map.Entry<String, long[]>> sample = new ArrayList<>(increments.entrySet());
        java.util.Collections.shuffle(sample, new java.util.Random(settings.seed()));
        for (Map.Entry<String, long[]> e : sample.subList(0, Math.min(1_000, sample.size()))) {
          long again = client.invoke(requests.get(e.getKey())).value(Long.class);
          if (again != e.getValue()[1]) {
            rerun++;
            out.println("-> " + e.getKey() + " (increment of counter " + e.getValue()[0] + ") was acknowledged with "
                + e.getValue()[1] + " but answers " + again + " when resent");
          }
        }
        for (Map.Entry<String, Long> e : tallies.entrySet()) {
          long again = client.invoke(requests.get(e.getKey())).value(Long.class);
          if (again != e.getValue()) {
            rerun++;
            out.println("-> " + e.getKey() + " (tally) was acknowledged with " + e.getValue() + " but answers " + again
                + " when resent");
          }
        }
      }
    }
    Map<Long, Long> counters = new HashMap<>();
    long tally = 0;
    try (ApiaryDatabase db = admin(dir, service)) {
      VoltTable t = db.callAdmin("reading counters", "@AdHoc", "SELECT k, v FROM counters").getResults()[0];
      while (t.advanceRow()) {
        counters.put(t.getLong(0), t.getLong(1));
      }
      VoltTable n = db.callAdmin("reading the tally", "@AdHoc", "SELECT n FROM tallies WHERE id = 0").getResults()[0];
      tally = n.advanceRow() ? n.getLong(0) : 0;
    }
    Map<Long, Long> acked = new HashMap<>();
    increments.values().forEach(v -> acked.merge(v[0], 1L, Long::sum));
    long lost = 0;
    long duplicated = 0;
    for (long k = 0; k < settings.keys(); k++) {
      long a = acked.getOrDefault(k, 0L);
      long v = counters.getOrDefault(k, 0L);
      if (v < 0) {
        unexpected.add("counter " + k + " holds " + v + ": a rolled-back write is visible");
      }
      lost += Math.max(0, a - v);
      duplicated += Math.max(0, v - a);
    }
    lost += Math.max(0, tallies.size() - tally);
    duplicated += Math.max(0, tally - tallies.size());
    long acknowledged = increments.size() + tallies.size();
    unexpected.forEach(u -> out.println("-> unexpected: " + u));
    out.printf("-> %d calls failed as they should (their writes rolled back), %d resolved by resending after the "
        + "load%n", failedAsExpected.get(), requests.size() - acknowledged - failedAsExpected.get() - unresolved);
    out.printf("drill durability: acknowledged=%d present=%d lost=%d duplicated=%d resend_rerun=%d diverged=%d%n",
        acknowledged, acknowledged - lost, lost, duplicated, rerun, diverged);
    boolean ok = acknowledged > 0 && lost == 0 && duplicated == 0 && rerun == 0 && diverged == 0 && unresolved == 0
        && unexpected.isEmpty();
    return ok ? 0 : 1;
  }

  private ApiaryClient client(String endpoint) {
    return ApiaryClient.connect(ClientConfig.of(endpoint).withAttemptTimeout(Duration.ofSeconds(2))
        .withMaxAttempts(90));
  }

  private static ApiaryDatabase admin(Path dir, ServiceProcess service) throws IOException {
    return service.admin(dir);
  }

  private static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (var paths = Files.walk(root)) {
      for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
