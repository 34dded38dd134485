package org.apiary.drills;

import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apiary.OverloadedException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.DatabaseConfig;
import org.apiary.drills.counter.CounterApp;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.FrontendServer;
import org.apiary.frontend.Registrar;

/**
 * {@code ./apiary drill overload} (issue 14): clients offer a frontend far more invocations than it may run at once,
 * for a bounded time. Every request must end with a result or an "overloaded, retry after" refusal; the counters
 * must hold exactly the acknowledged increments (a refused call runs nothing); the heap after a full GC must not grow
 * by more than {@link #MAX_HEAP_GROWTH_MB} between the end of the warm-up and the end of the load.
 */
final class OverloadDrill {
  static final long MAX_HEAP_GROWTH_MB = 256;
  private static final int KEYS = 1_000;
  private static final Duration WARM_UP = Duration.ofSeconds(3);

  /**
   * @param maxInFlight the frontend's limit
   * @param outstandingPerClient how many calls each client keeps open at once (far above the limit, shared by all)
   */
  record Settings(int seconds, int clients, int maxInFlight, int outstandingPerClient) {}

  private final Settings settings;
  private final PrintStream out;
  private final AtomicLong sent = new AtomicLong();
  private final AtomicLong ok = new AtomicLong();
  private final AtomicLong overloaded = new AtomicLong();
  private final AtomicLong failed = new AtomicLong();
  private final List<String> failures = new CopyOnWriteArrayList<>();

  OverloadDrill(Settings settings, PrintStream out) {
    this.settings = settings;
    this.out = out;
  }

  /** The drill's last line, printed after the database has stopped (its shutdown logs come before it). */
  private String summary;

  int run() throws InterruptedException {
    int code;
    try (ApiaryDatabase db = ApiaryDatabase.open(DatabaseConfig.embedded(2))) {
      Registrar.register(db, CounterApp.APP);
      try (FrontendServer frontend = FrontendServer.start(db, FrontendConfig.defaults()
          .withMaxInFlight(settings.maxInFlight()))) {
        out.printf("-> frontend %s (at most %d invocations in flight); %d clients keeping %d calls open each, for "
                + "%d s%n", frontend.endpoint(), settings.maxInFlight(), settings.clients(),
            settings.outstandingPerClient(), settings.seconds());
        code = load(db, frontend);
      }
    }
    out.println(summary);
    return code;
  }

  private int load(ApiaryDatabase db, FrontendServer frontend) throws InterruptedException {
    long start = System.nanoTime();
    long stopAt = start + Duration.ofSeconds(settings.seconds()).toNanos();
    List<String> crashes = new CopyOnWriteArrayList<>();
    List<Thread> threads = new ArrayList<>();
    List<ApiaryClient> clients = new ArrayList<>();
    List<Semaphore> open = new ArrayList<>();
    for (int c = 0; c < settings.clients(); c++) {
      ApiaryClient client = ApiaryClient.connect(ClientConfig.of(frontend.endpoint())
          .withAttemptTimeout(Duration.ofSeconds(10)).withMaxAttempts(3));
      clients.add(client);
      Semaphore permits = new Semaphore(settings.outstandingPerClient());
      open.add(permits);
      SplittableRandom random = new SplittableRandom(c);
      Thread t = new Thread(DrillThreads.guarded(() -> send(client, permits, random, stopAt), crashes, out::println),
          "overload-client-" + c);
      threads.add(t);
      t.start();
    }
    Thread.sleep(WARM_UP.toMillis());
    long heapAfterWarmUp = heapAfterGc();
    DrillThreads.joinAll(threads, Duration.ofSeconds(settings.seconds() + 30));
    // Every call still open ends within its attempts (3 x 10 s); wait for all of them.
    boolean allEnded = true;
    for (Semaphore permits : open) {
      allEnded &= permits.tryAcquire(settings.outstandingPerClient(), 40, TimeUnit.SECONDS);
    }
    long heapAtEnd = heapAfterGc();
    clients.forEach(ApiaryClient::close);
    double secondsRun = (System.nanoTime() - start) / 1e9;
    long answered = ok.get() + overloaded.get();
    long unanswered = sent.get() - answered;
    long applied = DrillCounters.sum(db, 0);
    long growthMb = Math.max(0, (heapAtEnd - heapAfterWarmUp) >> 20);
    out.printf("-> %.1f s: %d increments done (%.0f/s), %d refused as overloaded, %d failed otherwise; the counters "
            + "hold %d increments; heap after GC %d MB after the warm-up, %d MB at the end%n", secondsRun, ok.get(),
        ok.get() / secondsRun, overloaded.get(), failed.get(), applied, heapAfterWarmUp >> 20, heapAtEnd >> 20);
    failures.stream().limit(5).forEach(f -> out.println("-> failed: " + f));
    boolean pass = allEnded && crashes.isEmpty() && unanswered == 0 && applied == ok.get() && overloaded.get() > 0
        && growthMb <= MAX_HEAP_GROWTH_MB;
    if (!allEnded) {
      out.println("-> some calls were still open 40 s after the load ended");
    }
    if (applied != ok.get()) {
      out.println("-> the counters hold " + applied + " increments but " + ok.get() + " were acknowledged");
    }
    if (overloaded.get() == 0) {
      out.println("-> nothing was refused: the load did not reach the frontend's limit, so the drill tested nothing");
    }
    summary = String.format(java.util.Locale.ROOT, "drill overload: sent=%d answered=%d unanswered=%d "
        + "heap_growth_mb=%d", sent.get(), answered, unanswered, growthMb);
    return pass ? 0 : 1;
  }

  /** Keeps {@code outstandingPerClient} calls open until {@code stopAt}. */
  private void send(ApiaryClient client, Semaphore permits, SplittableRandom random, long stopAt) {
    while (System.nanoTime() < stopAt) {
      try {
        if (!permits.tryAcquire(50, TimeUnit.MILLISECONDS)) {
          continue;
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      sent.incrementAndGet();
      client.invokeAsync("increment", (long) random.nextInt(KEYS), 1L).whenComplete((result, error) -> {
        Throwable cause = error instanceof CompletionException ? error.getCause() : error;
        if (cause == null) {
          ok.incrementAndGet();
        } else if (cause instanceof OverloadedException) {
          overloaded.incrementAndGet();
        } else {
          failed.incrementAndGet();
          if (failures.size() < 5) {
            failures.add(cause.toString());
          }
        }
        permits.release();
      });
    }
  }


  private static long heapAfterGc() {
    for (int i = 0; i < 2; i++) {
      System.gc();
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }
}
