package org.apiary.frontend.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import org.apiary.runtime.provenance.BacklogReport;

/**
 * The meters every Apiary process that serves {@code /metrics} shares (issue 43): the JVM's, and the provenance
 * backlog of the database servers as their reports tell it. Frontends and the console bind them to registries of
 * their own; not an API.
 */
public final class ProcessMeters {
  private ProcessMeters() {}

  /**
   * Binds the JVM's meters (memory, garbage collection, threads, class loading, processor, uptime).
   *
   * @return the garbage-collection meters, which hold a listener: close them with the registry
   */
  public static JvmGcMetrics bindJvm(MeterRegistry registry) {
    new JvmMemoryMetrics().bindTo(registry);
    JvmGcMetrics gc = new JvmGcMetrics();
    gc.bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ClassLoaderMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    return gc;
  }

  /**
   * Meters of the provenance capture of the database servers whose backlog reports {@code reports} reads (each
   * server's {@code BacklogReport}, rewritten every 2 s): rows waiting (in memory and spilled), rows spilled and
   * their bytes, the oldest unloaded row's age (the largest), rows loaded and dropped, and the age of the newest
   * report (how stale the others are). Read at most every 500 ms,
   * however often the endpoint is scraped.
   */
  public static void bindProvenanceBacklog(MeterRegistry registry,
                                           java.util.function.Supplier<java.util.List<BacklogReport>> reports) {
    BacklogSample sample = new BacklogSample(reports);
    Gauge.builder("apiary.provenance.backlog.rows", sample, s -> s.sum(BacklogReport::rowsWaiting))
        .description("Captured rows (function executions, reads, denials) waiting to be loaded into the sink, in "
            + "memory and spilled, over every database server that reports").register(registry);
    Gauge.builder("apiary.provenance.spill.rows", sample, s -> s.sum(BacklogReport::rowsOnDisk))
        .description("Of those, rows waiting in spill files").register(registry);
    Gauge.builder("apiary.provenance.spill", sample,
            s -> s.sum(r -> r.spillBytes() == null ? 0L : r.spillBytes())).baseUnit("bytes")
        .description("Bytes of the spill files holding those rows, over every database server that reports")
        .register(registry);
    Gauge.builder("apiary.provenance.lag", sample, BacklogSample::oldestUnloadedSeconds).baseUnit("seconds")
        .description("Age of the oldest captured row not yet loaded into the sink, the largest over the servers as "
            + "each last reported it (0: nothing waits; NaN: no server reports it)").register(registry);
    FunctionCounter.builder("apiary.provenance.rows.loaded", sample, s -> s.sum(BacklogReport::rowsLoaded))
        .description("Rows loaded into the sink since each server's capture started").register(registry);
    FunctionCounter.builder("apiary.provenance.rows.dropped", sample, s -> s.sum(BacklogReport::rowsDropped))
        .description("Rows dropped for want of room in memory and on disk since each server's capture started")
        .register(registry);
    Gauge.builder("apiary.provenance.report.age", sample, BacklogSample::newestAgeSeconds).baseUnit("seconds")
        .description("Age of the newest backlog report (servers rewrite theirs every 2 s; NaN: none yet)")
        .register(registry);
  }

  /** The servers' reports, read again when the last reading is older than 500 ms. */
  private static final class BacklogSample {
    private final java.util.function.Supplier<java.util.List<BacklogReport>> source;
    private java.util.List<BacklogReport> reports = java.util.List.of();
    private long readAtNanos;

    BacklogSample(java.util.function.Supplier<java.util.List<BacklogReport>> source) {
      this.source = source;
    }

    private synchronized java.util.List<BacklogReport> reports() {
      long now = System.nanoTime();
      if (readAtNanos == 0 || now - readAtNanos > 500_000_000L) {
        try {
          reports = source.get();
        } catch (java.io.UncheckedIOException e) {
          // A report being replaced as it is read: the previous reading stands until the next scrape.
          java.lang.System.getLogger(ProcessMeters.class.getName()).log(java.lang.System.Logger.Level.DEBUG,
              "reading the provenance backlog reports: " + e.getMessage());
        }
        readAtNanos = now;
      }
      return reports;
    }

    double sum(java.util.function.ToLongFunction<BacklogReport> field) {
      return reports().stream().mapToLong(field).sum();
    }

    double oldestUnloadedSeconds() {
      return reports().stream().map(BacklogReport::oldestUnloadedSeconds).filter(java.util.Objects::nonNull)
          .mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
    }

    double newestAgeSeconds() {
      return reports().stream().map(r -> java.time.Instant.parse(r.at()))
          .max(java.util.Comparator.naturalOrder())
          .map(at -> java.time.Duration.between(at, java.time.Instant.now()).toMillis() / 1000.0)
          .orElse(Double.NaN);
    }
  }
}
