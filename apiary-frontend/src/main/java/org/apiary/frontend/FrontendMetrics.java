package org.apiary.frontend;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.apiary.runtime.provenance.BacklogReport;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import org.apiary.FunctionFailedException;
import org.apiary.internal.Invocation;
import org.apiary.internal.wire.WireGuard;
import org.apiary.internal.wire.WireReply;
import org.apiary.frontend.metrics.ProcessMeters;

/**
 * A frontend's meters (issue 43), in a Prometheus registry of its own, scraped at {@code /metrics}. Labels hold only
 * registered graph and function names (taken from the catalog, never from a request) and fixed values, so no request
 * can add a series: the number of series is bounded by what is registered.
 *
 * <p>Cost on the request path: a graph's and a function's meters are looked up once, by name, when this frontend
 * first runs the graph (a graph's per invocation, a function's per graph version's dispatch plan), then kept; each
 * end adds one increment of a striped counter and one timer record. A frontend without metrics uses {@link #OFF},
 * whose meters are {@code null} and whose methods return at once.
 */
final class FrontendMetrics implements AutoCloseable {
  /** The label of a graph name a client sent that no registered graph has. */
  static final String UNKNOWN_GRAPH = "unknown";

  /** {@code apiary_graph_invocations_total}'s outcomes: "ok", then each error of {@link WireReply}, '-' as '_'. */
  static final List<String> GRAPH_OUTCOMES = List.of("ok", label(WireReply.FUNCTION_FAILED),
      label(WireReply.INVOCATION_FAILED), label(WireReply.CANCELLED), label(WireReply.INVALID_REQUEST),
      label(WireReply.OUTCOME_UNKNOWN), label(WireReply.DATABASE), label(WireReply.EXPIRED),
      label(WireReply.OVERLOADED), label(WireReply.FORBIDDEN), label(WireReply.UNAUTHENTICATED));
  private static final int OTHER_ERROR = GRAPH_OUTCOMES.indexOf(label(WireReply.INVOCATION_FAILED));

  /** A function execution's outcome and mode, the label pairs of {@code apiary_function_executions_total}. */
  enum Execution {
    /** Ran, and committed. */
    OK_RAN("ok", "ran"),
    /** Answered from its record of an earlier execution: the function did not run again. */
    OK_RECORD("ok", "record"),
    /** The function threw (ran, or its recorded failure was replayed: the database's answer does not say which). */
    FAILED("failed", "unknown"),
    /** Refused before it ran: a stale graph version, a conflicting request, past its deadline or the retention. */
    REFUSED("refused", "none"),
    /** No answer, or the database failed the call: the frontend cannot tell whether it ran. */
    ERROR("error", "unknown");

    final String outcome;
    final String mode;

    Execution(String outcome, String mode) {
      this.outcome = outcome;
      this.mode = mode;
    }
  }

  /** Off: no registry, every method returns at once. */
  static final FrontendMetrics OFF = new FrontendMetrics(null);

  private final PrometheusMeterRegistry registry;
  private final JvmGcMetrics gc;
  private final Map<String, GraphMeters> graphs = new ConcurrentHashMap<>();
  private final Map<String, FunctionMeters> functions = new ConcurrentHashMap<>();
  private final GraphMeters unknownGraph;
  private final GraphMeters offGraph = new GraphMeters(null, null);
  private final FunctionMeters offFunction = new FunctionMeters(null, null);
  private final Counter takenOver;
  private final Counter malformedRequests;
  private final Counter oversizedRequests;

  private FrontendMetrics(PrometheusMeterRegistry registry) {
    this.registry = registry;
    if (registry == null) {
      gc = null;
      unknownGraph = offGraph;
      takenOver = null;
      malformedRequests = null;
      oversizedRequests = null;
      return;
    }
    gc = ProcessMeters.bindJvm(registry);
    unknownGraph = graphMeters(UNKNOWN_GRAPH);
    takenOver = Counter.builder("apiary.invocations.taken.over")
        .description("Running invocations of dead frontends this frontend took over").register(registry);
    malformedRequests = wireRejected("malformed_request");
    oversizedRequests = wireRejected("request_too_large");
  }

  /** Metrics in a registry of their own, with the JVM's meters. */
  static FrontendMetrics create() {
    return new FrontendMetrics(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
  }

  boolean enabled() {
    return registry != null;
  }

  /** The registry's meters in Prometheus' text format (version 0.0.4). */
  String scrape() {
    return registry == null ? "" : registry.scrape();
  }

  /**
   * Gauges and counters read when scraped: invocations running, the lease's remaining time (if it holds one), and
   * the wire guard's refusals by reason.
   */
  void bind(FrontendServer frontend, WireGuard guard, ToDoubleFunction<FrontendServer> leaseRemainingSeconds,
            boolean holdsLease) {
    if (registry == null) {
      return;
    }
    Gauge.builder("apiary.invocations.running", frontend, FrontendServer::inFlight)
        .description("Invocations this frontend is running").register(registry);
    if (holdsLease) {
      Gauge.builder("apiary.frontend.lease.remaining", frontend, leaseRemainingSeconds).baseUnit("seconds")
          .description("Time left on this frontend's lease since its last renewal began (0: expired)")
          .register(registry);
    }
    for (WireGuard.Refusal reason : WireGuard.Refusal.values()) {
      FunctionCounter.builder("apiary.wire.rejected", guard, g -> g.refusals().get(reason))
          .tag("reason", reason.name().toLowerCase(Locale.ROOT))
          .description("Connections or requests the frontend's wire refused, by reason").register(registry);
    }
  }

  /**
   * Meters of the provenance capture of the database servers whose backlog reports {@code reports} reads
   * ({@link ProcessMeters#bindProvenanceBacklog}).
   */
  void bindProvenanceBacklog(java.util.function.Supplier<java.util.List<BacklogReport>> reports) {
    if (registry != null) {
      ProcessMeters.bindProvenanceBacklog(registry, reports);
    }
  }

  private Counter wireRejected(String reason) {
    return Counter.builder("apiary.wire.rejected").tag("reason", reason)
        .description("Connections or requests the frontend's wire refused, by reason").register(registry);
  }

  /** The meters of a registered graph (its name from the catalog, never from a request). */
  GraphMeters graph(String registeredName) {
    if (registry == null) {
      return offGraph;
    }
    GraphMeters m = graphs.get(registeredName);
    return m != null ? m : graphs.computeIfAbsent(registeredName, this::graphMeters);
  }

  /** The meters of the graph name a client sent that is not registered: one series for all such names. */
  GraphMeters unknownGraph() {
    return unknownGraph;
  }

  /** The meters of a registered function (its name from a registered graph). */
  FunctionMeters function(String registeredName) {
    if (registry == null) {
      return offFunction;
    }
    FunctionMeters m = functions.get(registeredName);
    return m != null ? m : functions.computeIfAbsent(registeredName, this::functionMeters);
  }

  /** Invocations of dead frontends taken over here. */
  void tookOver(long invocations) {
    if (takenOver != null) {
      takenOver.increment(invocations);
    }
  }

  /** A request frame that could not be read as a request. */
  void malformedRequest() {
    if (malformedRequests != null) {
      malformedRequests.increment();
    }
  }

  /** A request frame above the frontend's request limit. */
  void oversizedRequest() {
    if (oversizedRequests != null) {
      oversizedRequests.increment();
    }
  }

  private GraphMeters graphMeters(String graph) {
    Counter[] outcomes = new Counter[GRAPH_OUTCOMES.size()];
    for (int i = 0; i < outcomes.length; i++) {
      outcomes[i] = Counter.builder("apiary.graph.invocations").tag("graph", graph).tag("outcome", GRAPH_OUTCOMES.get(i))
          .description("Invocations that ended at this frontend, by graph and outcome").register(registry);
    }
    Timer duration = Timer.builder("apiary.graph.duration").tag("graph", graph)
        .description("From an invocation's arrival (or recovery) here to its end").register(registry);
    return new GraphMeters(outcomes, duration);
  }

  private FunctionMeters functionMeters(String function) {
    Counter[] executions = new Counter[Execution.values().length];
    for (Execution e : Execution.values()) {
      executions[e.ordinal()] = Counter.builder("apiary.function.executions").tag("function", function)
          .tag("outcome", e.outcome).tag("mode", e.mode)
          .description("Function executions (one per partition key of a fan-out), by outcome and mode")
          .register(registry);
    }
    Timer duration = Timer.builder("apiary.function.duration").tag("function", function)
        .description("From a function execution's call to its answer (retries of a replay included)")
        .register(registry);
    return new FunctionMeters(executions, duration);
  }

  @Override
  public void close() {
    if (registry != null) {
      gc.close();
      registry.close();
    }
  }

  /** A label value from a wire error code. */
  private static String label(String code) {
    return code.replace('-', '_');
  }

  /** One graph's invocation counters by outcome and its duration timer; {@code null} meters when off. */
  static final class GraphMeters {
    private final Counter[] outcomes;
    private final Timer duration;

    GraphMeters(Counter[] outcomes, Timer duration) {
      this.outcomes = outcomes;
      this.duration = duration;
    }

    /** Whether these meters record nothing (metrics are off). */
    boolean off() {
      return outcomes == null;
    }

    /** An invocation ended with {@code reply}, {@code nanos} after it started here. */
    void ended(WireReply reply, long nanos) {
      if (outcomes == null) {
        return;
      }
      outcomes[outcomeIndex(reply)].increment();
      duration.record(nanos, TimeUnit.NANOSECONDS);
    }

    /** A request refused before it started (no duration). */
    void refused(String errorCode) {
      if (outcomes != null) {
        outcomes[errorIndex(errorCode)].increment();
      }
    }

    private static int outcomeIndex(WireReply reply) {
      return WireReply.OK.equals(reply.status()) ? 0 : errorIndex(reply.error());
    }

    static int errorIndex(String code) {
      if (code == null) {
        return OTHER_ERROR;
      }
      return switch (code) {
        case WireReply.FUNCTION_FAILED -> 1;
        case WireReply.INVOCATION_FAILED -> 2;
        case WireReply.CANCELLED -> 3;
        case WireReply.INVALID_REQUEST -> 4;
        case WireReply.OUTCOME_UNKNOWN -> 5;
        case WireReply.DATABASE -> 6;
        case WireReply.EXPIRED -> 7;
        case WireReply.OVERLOADED -> 8;
        case WireReply.FORBIDDEN -> 9;
        case WireReply.UNAUTHENTICATED -> 10;
        default -> OTHER_ERROR;
      };
    }
  }

  /** One function's execution counters by outcome and mode and its duration timer; {@code null} meters when off. */
  static final class FunctionMeters {
    private final Counter[] executions;
    private final Timer duration;

    FunctionMeters(Counter[] executions, Timer duration) {
      this.executions = executions;
      this.duration = duration;
    }

    boolean off() {
      return executions == null;
    }

    /** An execution answered: {@code replayed} if from its record. */
    void succeeded(boolean replayed, long nanos) {
      if (executions != null) {
        executions[(replayed ? Execution.OK_RECORD : Execution.OK_RAN).ordinal()].increment();
        duration.record(nanos, TimeUnit.NANOSECONDS);
      }
    }

    /** An execution failed with {@code error} (a completion's error, perhaps wrapped). */
    void failed(Throwable error, long nanos) {
      if (executions != null) {
        executions[classify(error).ordinal()].increment();
        duration.record(nanos, TimeUnit.NANOSECONDS);
      }
    }

    static Execution classify(Throwable error) {
      Throwable cause = InvocationCoordinator.unwrap(error);
      if (cause instanceof org.apiary.internal.ExecutionRefusedException) {
        return Execution.REFUSED;
      }
      if (cause instanceof FunctionFailedException) {
        return Execution.FAILED;
      }
      return Execution.ERROR;
    }
  }
}
