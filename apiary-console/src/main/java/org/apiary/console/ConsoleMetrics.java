package org.apiary.console;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apiary.frontend.metrics.ProcessMeters;

/**
 * The console's own meters (issue 43), scraped at its {@code /metrics}: requests by page and status, their duration
 * by page, the JVM's, and (where the console knows the servers' spill directory) the provenance backlog as the
 * frontends report it. Labels are a fixed set of page names and HTTP statuses, never a path, an ID or a key.
 */
final class ConsoleMetrics implements AutoCloseable {
  /** The page names a request is counted under; anything else is {@code other}. */
  static final List<String> PAGES = List.of("executions", "execution", "graphs", "cluster", "lineage", "sql",
      "provenance", "metrics", "health", "ready", "page", "other");

  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final JvmGcMetrics gc;
  private final Map<String, Counter> requests = new ConcurrentHashMap<>();
  private final Map<String, Timer> durations = new ConcurrentHashMap<>();

  ConsoleMetrics(ConsoleConfig config) {
    gc = ProcessMeters.bindJvm(registry);
    if (config.spillRoot() != null) {
      ProcessMeters.bindProvenanceBacklog(registry,
          () -> org.apiary.runtime.provenance.BacklogReport.readAll(config.spillRoot()));
    }
  }

  /** The page a path is counted under. */
  static String page(String path) {
    if (path.equals("/api/executions")) {
      return "executions";
    } else if (path.startsWith("/api/executions/")) {
      return "execution";
    } else if (path.equals("/api/graphs") || path.equals("/api/cluster") || path.equals("/api/lineage")
        || path.equals("/api/sql")) {
      return path.substring("/api/".length());
    } else if (path.startsWith("/api/provenance/")) {
      return "provenance";
    } else if (path.equals("/metrics") || path.equals("/health") || path.equals("/ready")) {
      return path.substring(1);
    } else if (!path.startsWith("/api/")) {
      return "page";
    }
    return "other";
  }

  /** A request to {@code page} answered with {@code status} after {@code nanos}. */
  void served(String page, int status, long nanos) {
    String statusLabel = status >= 100 && status <= 599 ? Integer.toString(status) : "other";
    requests.computeIfAbsent(page + " " + statusLabel, k -> Counter.builder("apiary.console.requests")
        .tag("page", page).tag("status", statusLabel)
        .description("Requests the console answered, by page and HTTP status").register(registry)).increment();
    durations.computeIfAbsent(page, k -> Timer.builder("apiary.console.request.duration").tag("page", page)
        .description("From a request's arrival to its answer, by page").register(registry))
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  /** The meters in Prometheus' text format (version 0.0.4). */
  String scrape() {
    return registry.scrape();
  }

  @Override
  public void close() {
    gc.close();
    registry.close();
  }
}
