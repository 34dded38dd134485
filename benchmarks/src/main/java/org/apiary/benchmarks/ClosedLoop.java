package org.apiary.benchmarks;

import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import picocli.CommandLine.Option;

/**
 * A closed-loop load: a fixed number of requests in flight, each started when the previous one of its loop
 * completes, over random keys. Latency is from send to completion (HdrHistogram); requests sent during the warm-up,
 * or completing after the measured window, are not counted. A loop that meets an error stops, and errors are
 * reported: none is expected in these benchmarks.
 */
public final class ClosedLoop {
  /** The load's shape, as command-line options shared by the benchmarks. */
  public static final class Options {
    @Option(names = "--seconds", defaultValue = "10", description = "Measured seconds per variant (default ${DEFAULT-VALUE}).")
    public int seconds;

    @Option(names = "--warmup", defaultValue = "4", description = "Warm-up seconds per variant (default ${DEFAULT-VALUE}).")
    public int warmup;

    @Option(names = "--keys", defaultValue = "10000", description = "Keys the requests spread over (default ${DEFAULT-VALUE}).")
    public int keys;
  }

  /**
   * What one run achieved.
   *
   * @param throughput completed requests per measured second
   * @param p50Ms median latency in milliseconds
   * @param p99Ms 99th-percentile latency in milliseconds
   * @param errors requests that failed
   */
  public record Result(double throughput, double p50Ms, double p99Ms, long errors) {}

  private ClosedLoop() {}

  /** Runs {@code request(key)} with {@code concurrency} requests in flight for the warm-up plus measured seconds. */
  public static Result run(LongFunction<CompletableFuture<?>> request, int concurrency, Options options)
      throws InterruptedException {
    Recorder recorder = new Recorder(3);
    AtomicLong completed = new AtomicLong();
    AtomicLong errors = new AtomicLong();
    long measureFrom = System.nanoTime() + TimeUnit.SECONDS.toNanos(options.warmup);
    long stopAt = measureFrom + TimeUnit.SECONDS.toNanos(options.seconds);
    CountDownLatch done = new CountDownLatch(concurrency);
    for (int i = 0; i < concurrency; i++) {
      new Loop(request, new SplittableRandom(i), options.keys, recorder, completed, errors, measureFrom, stopAt, done)
          .next();
    }
    if (!done.await(options.warmup + options.seconds + 120L, TimeUnit.SECONDS)) {
      throw new IllegalStateException("requests still in flight 120 s after the run ended");
    }
    Histogram h = recorder.getIntervalHistogram();
    return new Result(completed.get() / (double) options.seconds, h.getValueAtPercentile(50) / 1e6,
        h.getValueAtPercentile(99) / 1e6, errors.get());
  }

  private record Loop(LongFunction<CompletableFuture<?>> request, SplittableRandom random, int keys,
                      Recorder recorder, AtomicLong completed, AtomicLong errors, long measureFrom, long stopAt,
                      CountDownLatch done) {
    void next() {
      long sent = System.nanoTime();
      if (sent - stopAt >= 0) {
        done.countDown();
        return;
      }
      request.apply(random.nextInt(keys)).whenComplete((r, err) -> {
        long now = System.nanoTime();
        if (err != null) {
          errors.incrementAndGet();
          done.countDown();
          return;
        }
        if (sent - measureFrom >= 0 && now - stopAt < 0) {
          completed.incrementAndGet();
          recorder.recordValue(now - sent);
        }
        next();
      });
    }
  }
}
