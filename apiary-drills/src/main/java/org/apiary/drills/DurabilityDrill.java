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
import org.apiary.database.Rows;
import org.apiary.drills.durability.DurabilityApp;
import org.apiary.frontend.Registrar;

/**
 * The crash checker of issue 40: clients run single-partition writes, multi-partition writes and writes that fail
 * through {@code apiary start}, whose whole process (embedded VoltDB and frontend) is SIGKILLed {@code kills} times at
 * random moments (under load, during checkpoints, and now and then during its own recovery) and started again on the
 * same directory and port; with {@code cluster}, through a 2-node journaled cluster with k-factor 1 whose nodes are
 * all SIGKILLed at once ({@link DurabilityTarget.Cluster}). The clients keep an oracle of their own: every invocation
 * acknowledged, its answer and when it arrived. At the end every unresolved invocation is resent with its ID until it
 * has an answer, acknowledged ones are resent to check they answer from their outcome, and the data is read back:
 * {@code drill durability: acknowledged=N present=N lost=0 duplicated=0 resend_rerun=0 diverged=0}.
 *
 * <p>In asynchronous mode a crash may lose what was acknowledged within the journal's fsync interval before it
 * (docs/durability.md). Such losses are counted apart, as {@code lost_within_async_bound}, appended to the line: a
 * counter short of its acknowledged increments counts as within the bound as far as increments of it were
 * acknowledged within {@link #ASYNC_BOUND} before a kill; any loss beyond that is {@code lost} and fails the drill.
 * Invocations acknowledged within the bound are not resent after the load (their outcome may rightly be gone, and a
 * resend would run them again).
 */
final class DurabilityDrill {
  /**
   * @param journal the journal mode of the service ({@code none} shows what a crash loses without one)
   */
  record Settings(long seed, int seconds, int kills, int clients, int keys, String journal, boolean cluster) {}

  private static final Duration START = Duration.ofSeconds(180);
  /**
   * How long before a kill an acknowledgement may arrive and its work still be lost in asynchronous mode: the
   * journal's fsync interval (100 ms) and 150 ms for a writer thread late on a busy 2-core machine.
   */
  static final Duration ASYNC_BOUND = org.apiary.journal.JournalWriter.Settings.DEFAULT_FSYNC_INTERVAL
      .plusMillis(150);

  private final Settings settings;
  private final PrintStream out;
  private final Map<String, long[]> increments = new ConcurrentHashMap<>(); // id -> {key, answer, acked at (ns)}
  private final Map<String, long[]> tallies = new ConcurrentHashMap<>(); // id -> {answer, acked at (ns)}
  /** When each kill was sent (System.nanoTime()). */
  private final List<Long> kills = new java.util.concurrent.CopyOnWriteArrayList<>();
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
    Path dir = Files.createTempDirectory("apiary-durability-drill-");
    DurabilityTarget target = settings.cluster()
        ? new DurabilityTarget.Cluster(dir, serviceLog, org.apiary.journal.JournalMode.parse(settings.journal()))
        : new DurabilityTarget.Service(dir, serviceLog, settings.journal());
    out.println("-> drill durability, seed " + settings.seed() + ": " + settings.kills() + " SIGKILLs of "
        + target.describe() + " spread over about " + settings.seconds() + " s of load from " + settings.clients()
        + " clients, each restarted on the same directory and port");
    SplittableRandom random = new SplittableRandom(settings.seed());
    int diverged = 0;
    try {
      long began = System.nanoTime();
      target.start();
      long started = System.nanoTime();
      try (ApiaryDatabase db = target.admin()) {
        Registrar.register(db, DurabilityApp.APP);
      }
      out.printf("-> started in %.1f s, the application registered in %.1f s%n", (started - began) / 1e9,
          (System.nanoTime() - started) / 1e9);
      AtomicBoolean stop = new AtomicBoolean();
      String endpoint = target.endpoint();
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
        kills.add(System.nanoTime());
        target.crash();
        long acked = increments.size() + tallies.size();
        out.printf("-> SIGKILL %d of %d at %.1f s (%d acknowledged so far); restarting%n", i + 1, settings.kills(),
            (System.nanoTime() - start) / 1e9, acked);
        try {
          long restarting = System.nanoTime();
          target.restart(random, out);
          out.printf("   back in %.1f s%n", (System.nanoTime() - restarting) / 1e9);
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
      return diverged > 0 ? report(null, target, diverged) : report(endpoint, target, 0);
    } finally {
      target.stop();
      deleteTree(dir);
      out.println("-> the service's output, every run of it: " + serviceLog);
    }
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
    long at = System.nanoTime();
    switch (request.graph()) {
      case "increment" -> increments.put(request.id(), new long[] {keyOf.get(request.id()), answer, at});
      case "tally" -> tallies.put(request.id(), new long[] {answer, at});
      default -> unexpected.add(request.id() + " (failing) succeeded with " + answer);
    }
  }

  /**
   * Whether an acknowledgement that arrived at {@code ackedAt} may rightly be lost: in asynchronous mode, if it came
   * within {@link #ASYNC_BOUND} before a kill (or in the second after one was sent, the client's clock being late).
   */
  private boolean withinAsyncBound(long ackedAt) {
    if (!settings.journal().equalsIgnoreCase("asynchronous")) {
      return false;
    }
    for (long k : kills) {
      if (ackedAt >= k - ASYNC_BOUND.toNanos() && ackedAt <= k + 1_000_000_000L) {
        return true;
      }
    }
    return false;
  }

  private int report(String endpoint, DurabilityTarget target, int diverged) throws Exception {
    long rerun = 0;
    long unresolved = 0;
    long resendFailed = 0; // acknowledged invocations whose resend got no answer: their outcome is gone
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
      }
    }
    // The data is read before any acknowledged invocation is resent: a resend that ran again would hide a loss.
    Map<Long, Long> counters = new HashMap<>();
    long tally = 0;
    if (diverged > 0) {
      // It did not come back: nothing to read, and every acknowledged write counts as lost below.
      out.println("-> the data cannot be read: the service did not come back after its last kill");
    } else {
      try (ApiaryDatabase db = target.admin()) {
        for (Rows.Row row : db.query("reading counters", "SELECT k, v FROM counters")) {
          counters.put(row.getLong(0), row.getLong(1));
        }
        tally = db.query("reading the tally", "SELECT n FROM tallies WHERE id = 0").first().map(row -> row.getLong(0))
            .orElse(0L);
      }
    }
    if (endpoint != null) {
      try (ApiaryClient client = client(endpoint)) {
        // An acknowledged invocation resent after the crashes answers from its outcome; a different answer means it
        // ran again.
        List<Map.Entry<String, long[]>> sample = new ArrayList<>(increments.entrySet().stream()
            .filter(e -> !withinAsyncBound(e.getValue()[2])).toList());
        java.util.Collections.shuffle(sample, new java.util.Random(settings.seed()));
        for (Map.Entry<String, long[]> e : sample.subList(0, Math.min(1_000, sample.size()))) {
          long again;
          try {
            again = client.invoke(requests.get(e.getKey())).value(Long.class);
          } catch (ApiaryException ex) {
            if (resendFailed++ < 20) {
              out.println("-> " + e.getKey() + " (increment, acknowledged) fails when resent: " + ex.getMessage());
            }
            continue;
          }
          if (again != e.getValue()[1]) {
            rerun++;
            out.println("-> " + e.getKey() + " (increment of counter " + e.getValue()[0] + ") was acknowledged with "
                + e.getValue()[1] + " but answers " + again + " when resent");
          }
        }
        for (Map.Entry<String, long[]> e : tallies.entrySet()) {
          if (withinAsyncBound(e.getValue()[1])) {
            continue;
          }
          long again;
          try {
            again = client.invoke(requests.get(e.getKey())).value(Long.class);
          } catch (ApiaryException ex) {
            if (resendFailed++ < 20) {
              out.println("-> " + e.getKey() + " (tally, acknowledged) fails when resent: " + ex.getMessage());
            }
            continue;
          }
          if (again != e.getValue()[0]) {
            rerun++;
            out.println("-> " + e.getKey() + " (tally) was acknowledged with " + e.getValue()[0] + " but answers "
                + again + " when resent");
          }
        }
      }
    }
    Map<Long, Long> acked = new HashMap<>();
    Map<Long, Long> atRisk = new HashMap<>(); // acknowledged within the asynchronous bound of a kill
    increments.values().forEach(v -> {
      acked.merge(v[0], 1L, Long::sum);
      if (withinAsyncBound(v[2])) {
        atRisk.merge(v[0], 1L, Long::sum);
      }
    });
    long lost = 0;
    long lostWithinBound = 0;
    long duplicated = 0;
    for (long k = 0; k < settings.keys(); k++) {
      long a = acked.getOrDefault(k, 0L);
      long v = counters.getOrDefault(k, 0L);
      if (v < 0) {
        unexpected.add("counter " + k + " holds " + v + ": a rolled-back write is visible");
      }
      long short_ = Math.max(0, a - v);
      long within = Math.min(short_, atRisk.getOrDefault(k, 0L));
      lostWithinBound += within;
      lost += short_ - within;
      duplicated += Math.max(0, v - a);
    }
    long tallyShort = Math.max(0, tallies.size() - tally);
    long tallyWithin = Math.min(tallyShort, tallies.values().stream().filter(t -> withinAsyncBound(t[1])).count());
    lostWithinBound += tallyWithin;
    lost += tallyShort - tallyWithin;
    duplicated += Math.max(0, tally - tallies.size());
    long acknowledged = increments.size() + tallies.size();
    unexpected.forEach(u -> out.println("-> unexpected: " + u));
    if (resendFailed > 0) {
      out.println("-> " + resendFailed + " acknowledged invocations got no answer when resent: their outcome is gone");
    }
    out.printf("-> %d calls failed as they should (their writes rolled back), %d resolved by resending after the "
        + "load%n", failedAsExpected.get(), requests.size() - acknowledged - failedAsExpected.get() - unresolved);
    out.printf("drill durability: acknowledged=%d present=%d lost=%d duplicated=%d resend_rerun=%d diverged=%d%s%n",
        acknowledged, acknowledged - lost - lostWithinBound, lost, duplicated, rerun, diverged,
        settings.journal().equalsIgnoreCase("asynchronous") ? " lost_within_async_bound=" + lostWithinBound : "");
    boolean ok = acknowledged > 0 && lost == 0 && duplicated == 0 && rerun == 0 && diverged == 0 && unresolved == 0
        && resendFailed == 0 && unexpected.isEmpty();
    return ok ? 0 : 1;
  }

  private ApiaryClient client(String endpoint) {
    return ApiaryClient.connect(ClientConfig.of(endpoint).withAttemptTimeout(Duration.ofSeconds(2))
        .withMaxAttempts(90));
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
