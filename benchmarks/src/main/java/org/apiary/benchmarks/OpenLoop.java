package org.apiary.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.apiary.benchmarks.workload.Request;
import org.apiary.benchmarks.workload.Workload;

/**
 * An open-loop load: requests are sent at scheduled times, at a fixed offered rate, whether or not earlier ones have
 * finished. Arrivals are uniform (every 1/rate seconds) or exponential (a Poisson process). Each request's latency
 * runs from its <em>scheduled</em> send time, so a generator that falls behind, or a system that stalls, shows up in
 * the latencies instead of silently lowering the load (no coordinated omission). Requests scheduled during the
 * warm-up are sent but not measured (their latency is not recorded). Throughput is what the system served: the
 * requests that completed, successfully, within the measured window of wall-clock time, whenever they were
 * scheduled; the CPU figure is this process's CPU over the same window. (Counting only requests scheduled in the
 * window would, above capacity, leave out the first part of the window, spent on the warm-up's backlog, and report
 * far less than the system served.) In-flight requests are bounded so an overloaded system cannot exhaust memory: a
 * request waiting for a slot keeps its scheduled time, so the wait counts in its latency; requests not yet sent when
 * the window ends are never sent.
 */
public final class OpenLoop {
  /** How inter-arrival times are drawn. */
  public enum Arrivals { UNIFORM, EXPONENTIAL }

  /**
   * How one load point is run.
   *
   * @param timeline whether to print, after the point, each 100 ms of scheduled time whose slowest measured request
   *     took over {@value #SLOW_BUCKET_MS} ms (with its wall-clock start, to line up with GC logs and profiles)
   * @param progress if not {@code null}, how often to print, during the measured window, what the last interval
   *     achieved (throughput, latency, errors) and this process's heap after its last GC and resident memory: a soak
   */
  public record Settings(Duration warmup, Duration measure, Arrivals arrivals, int maxInFlight, Duration drain,
                         boolean timeline, Duration progress) {
    /** Settings without progress lines. */
    public Settings(Duration warmup, Duration measure, Arrivals arrivals, int maxInFlight, Duration drain,
                    boolean timeline) {
      this(warmup, measure, arrivals, maxInFlight, drain, timeline, null);
    }
  }

  /** A timeline bucket is printed if its slowest request took longer than this. */
  static final long SLOW_BUCKET_MS = 20;
  private static final long BUCKET_NANOS = 100_000_000L;

  /**
   * Latency percentiles of one operation, in milliseconds.
   *
   * @param count measured requests that completed
   */
  public record Latency(long count, double p50Ms, double p99Ms, double p999Ms, double maxMs) {
    static Latency of(Histogram h) {
      return new Latency(h.getTotalCount(), h.getValueAtPercentile(50) / 1e6, h.getValueAtPercentile(99) / 1e6,
          h.getValueAtPercentile(99.9) / 1e6, h.getMaxValue() / 1e6);
    }
  }

  /**
   * What one load point achieved.
   *
   * @param offered requests per second scheduled
   * @param achieved requests completed successfully within the measured window, per measured second
   * @param all latency over every operation
   * @param operations latency per operation, in the workload's order
   * @param errors measured requests that failed or were still unanswered after the drain time
   * @param firstError the first failure's message, or {@code null}
   * @param cpuMicrosPerRequest CPU time of this whole process (load generator, client, frontend, database and
   *     provenance loading, when they run in it) during the measured window, per request completed in it; -1 if
   *     none completed
   */
  public record Point(double offered, double achieved, Latency all, List<Latency> operations, long errors,
                      String firstError, double cpuMicrosPerRequest) {}

  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
        .getOperatingSystemMXBean()).getProcessCpuTime();
  }

  /** How long a point waits, after its drain, for every request it sent to finish. */
  private static final Duration IDLE_WAIT = Duration.ofSeconds(60);

  private OpenLoop() {}

  /**
   * Prints, every {@code every} from {@code measureFrom} on, the interval's measured completions per second, their
   * latency, the errors, the heap after the last GC and the resident memory of this process.
   */
  private static java.util.concurrent.ScheduledExecutorService startProgress(Duration every, long measureFrom,
                                                                          Recorder interval, AtomicLong errors) {
    var timer = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "open-loop-progress");
      t.setDaemon(true);
      return t;
    });
    long first = Math.max(0, measureFrom - System.nanoTime());
    long period = every.toNanos();
    timer.schedule(() -> interval.getIntervalHistogram(), first, TimeUnit.NANOSECONDS); // drop the warm-up's
    timer.scheduleAtFixedRate(() -> {
      Histogram h = interval.getIntervalHistogram();
      System.out.printf(java.util.Locale.ROOT, "progress %6.0f s: %,8.0f req/s  p50 %7.2f ms  p99 %8.2f ms  "
              + "errors %d  heap after last GC %,d MB  resident %,d MB%n",
          (System.nanoTime() - measureFrom) / 1e9, h.getTotalCount() / (period / 1e9),
          h.getValueAtPercentile(50) / 1e6, h.getValueAtPercentile(99) / 1e6, errors.getAndSet(0),
          ProcessMemory.heapAfterLastGcBytes() >> 20, ProcessMemory.residentBytes() >> 20);
    }, first + period, period, TimeUnit.NANOSECONDS);
    return timer;
  }

  /** Starts a thread that reads this process's CPU time into {@code cpu} when the window opens and when it closes. */
  private static Thread cpuClock(long measureFrom, long stopAt, long[] cpu) {
    Thread clock = new Thread(() -> {
      for (int i = 0; i < 2; i++) {
        long at = i == 0 ? measureFrom : stopAt;
        for (long wait = at - System.nanoTime(); wait > 0; wait = at - System.nanoTime()) {
          LockSupport.parkNanos(wait);
        }
        cpu[i] = processCpuNanos();
      }
    }, "open-loop-cpu-clock");
    clock.setDaemon(true);
    clock.start();
    return clock;
  }

  /** Runs {@code workload}'s mix at {@code rate} requests per second through {@code send}. */
  public static Point run(Workload workload, Function<Request, CompletableFuture<?>> send, double rate,
                          Settings settings, long seed) throws InterruptedException {
    int ops = workload.operations().size();
    Recorder all = new Recorder(3);
    List<Recorder> perOp = new ArrayList<>();
    for (int i = 0; i < ops; i++) {
      perOp.add(new Recorder(3));
    }
    AtomicLong completed = new AtomicLong();
    AtomicLong errors = new AtomicLong();
    AtomicReference<String> firstError = new AtomicReference<>();
    Semaphore slots = new Semaphore(settings.maxInFlight());
    ConcurrentHashMap<Long, Long> outstanding = new ConcurrentHashMap<>();
    SplittableRandom random = new SplittableRandom(seed);
    long start = System.nanoTime();
    long measureFrom = start + settings.warmup().toNanos();
    long stopAt = measureFrom + settings.measure().toNanos();
    double intervalNs = 1e9 / rate;
    double offset = 0;
    long seq = 0;
    long[] cpu = {-1, -1}; // this process's CPU time when the measured window opens and when it closes
    Thread cpuClock = cpuClock(measureFrom, stopAt, cpu);
    int buckets = settings.timeline() ? (int) ((stopAt - start) / BUCKET_NANOS) + 1 : 0;
    AtomicLongArray slowest = new AtomicLongArray(buckets);
    AtomicLongArray counts = new AtomicLongArray(buckets);
    long wallStart = System.currentTimeMillis();
    Recorder interval = new Recorder(3);
    AtomicLong intervalErrors = new AtomicLong();
    java.util.concurrent.ScheduledExecutorService progress = settings.progress() == null ? null
        : startProgress(settings.progress(), measureFrom, interval, intervalErrors);
    try {
      while (true) {
        offset += settings.arrivals() == Arrivals.UNIFORM ? intervalNs
            : -Math.log(1 - random.nextDouble()) * intervalNs;
        long scheduled = start + (long) offset;
        if (scheduled - stopAt >= 0) {
          break;
        }
        long wait = scheduled - System.nanoTime();
        if (wait > 20_000) {
          LockSupport.parkNanos(wait);
        }
        Request request = workload.next(random);
        boolean measured = scheduled - measureFrom >= 0;
        long id = seq++;
        long untilWindowEnds = stopAt - System.nanoTime();
        if (untilWindowEnds <= 0 || !slots.tryAcquire(untilWindowEnds, TimeUnit.NANOSECONDS)) {
          break; // behind schedule at the window's end: what was not sent by then is not sent
        }
        if (measured) {
          outstanding.put(id, scheduled);
        }
        CompletableFuture<?> sent;
        try {
          sent = send.apply(request);
        } catch (RuntimeException e) {
          sent = CompletableFuture.failedFuture(e);
        }
        sent.whenComplete((r, err) -> {
          long now = System.nanoTime();
          slots.release();
          if (err == null && now - measureFrom >= 0 && now - stopAt < 0) {
            completed.incrementAndGet();
          }
          if (!measured || outstanding.remove(id) == null) {
            return;
          }
          if (err != null) {
            errors.incrementAndGet();
            intervalErrors.incrementAndGet();
            firstError.compareAndSet(null, String.valueOf(err.getMessage()));
            return;
          }
          long latency = now - scheduled;
          interval.recordValue(latency);
          if (buckets > 0) {
            int b = (int) Math.min(buckets - 1, (scheduled - start) / BUCKET_NANOS);
            slowest.accumulateAndGet(b, latency, Math::max);
            counts.incrementAndGet(b);
          }
          all.recordValue(latency);
          perOp.get(request.operation()).recordValue(latency);
        });
      }
    } finally {
      if (progress != null) {
        progress.shutdownNow();
      }
    }
    cpuClock.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(stopAt - System.nanoTime()) + 1_000));
    long drainUntil = Math.max(System.nanoTime(), stopAt) + settings.drain().toNanos();
    while (!outstanding.isEmpty() && System.nanoTime() - drainUntil < 0) {
      Thread.sleep(5);
    }
    for (Long id : new ArrayList<>(outstanding.keySet())) {
      Long scheduled = outstanding.remove(id);
      if (scheduled != null) {
        errors.incrementAndGet();
        firstError.compareAndSet(null, "no answer within the drain time of " + settings.drain());
      }
    }
    // Let the system finish what it still holds (unmeasured requests too), so the next point starts from idle.
    long idleBy = System.nanoTime() + IDLE_WAIT.toNanos();
    while (slots.availablePermits() < settings.maxInFlight() && System.nanoTime() - idleBy < 0) {
      Thread.sleep(5);
    }
    for (int b = 0; b < buckets; b++) {
      if (slowest.get(b) > SLOW_BUCKET_MS * 1_000_000L) {
        System.out.printf(java.util.Locale.ROOT, "timeline %.0f req/s: at %.1f s (wall-clock ms %d) %d requests, "
            + "slowest %.1f ms%n", rate, b / 10.0, wallStart + b * 100L, counts.get(b), slowest.get(b) / 1e6);
      }
    }
    List<Latency> opLatency = new ArrayList<>();
    for (Recorder r : perOp) {
      opLatency.add(Latency.of(r.getIntervalHistogram()));
    }
    double cpuPerRequest = completed.get() == 0 || cpu[0] < 0 || cpu[1] < 0 ? -1
        : (cpu[1] - cpu[0]) / 1e3 / completed.get();
    return new Point(rate, completed.get() / (settings.measure().toNanos() / 1e9),
        Latency.of(all.getIntervalHistogram()), opLatency, errors.get(), firstError.get(), cpuPerRequest);
  }
}
