package org.apiary.benchmarks.frontend;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongFunction;
import org.apiary.ApiaryFunction;
import org.apiary.Application;
import org.apiary.Graph;
import org.apiary.RecordingMode;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.DatabaseConfig;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.FrontendServer;
import org.apiary.frontend.Registrar;
import org.apiary.internal.Invocation;
import org.apiary.runtime.FunctionCatalog;
import org.apiary.runtime.FunctionInvoker;
import org.apiary.benchmarks.ClosedLoop;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * What the frontend and exactly-once cost. A closed loop keeps {@code --concurrency} requests in flight and measures
 * throughput and per-request latency (HdrHistogram), after a warm-up, for:
 * <ul>
 *   <li>the stored procedure of a function called directly through VoltDB's client (no frontend, no graph);</li>
 *   <li>the same function as a one-function graph through a frontend: no recording and no invocation log, no
 *       recording with the log, and exactly-once (recorded, with the log);</li>
 *   <li>a two-function graph (a write, then a read-only function) with no recording, selective recording
 *       (Algorithm 1: only the writer) and naive recording (both).</li>
 * </ul>
 * Database, frontend and client share this process, as on a one-machine deployment.
 */
@Command(name = "frontend-benchmark", mixinStandardHelpOptions = true,
    description = "Throughput and latency of graphs through a frontend against direct procedure calls.")
public final class FrontendBenchmark implements Callable<Integer> {
  static final String SCHEMA = """
      CREATE TABLE bench_counters (k BIGINT NOT NULL, v BIGINT NOT NULL, PRIMARY KEY (k));
      PARTITION TABLE bench_counters ON COLUMN k;
      """;

  @CommandLine.Mixin
  ClosedLoop.Options load = new ClosedLoop.Options();

  @Option(names = "--concurrency", defaultValue = "32", description = "Requests in flight (default ${DEFAULT-VALUE}).")
  int concurrency;

  @Option(names = "--partitions", defaultValue = "2", description = "Database partitions (default ${DEFAULT-VALUE}).")
  int partitions;

  @Option(names = "--rounds", defaultValue = "1", description = "Times to repeat the whole set of variants (default ${DEFAULT-VALUE}).")
  int rounds;

  @Option(names = "--only", description = "Run only the variants whose name contains this text (e.g. \"1-function\").")
  String only;

  private final PrintStream out = System.out;

  static Graph oneFunction(String name) {
    return Graph.named(name).addLocalFunction("add", Add.class)
        .addEdge(Graph.SOURCE, "add", ApiaryFunction.SOURCE, Long.class)
        .addEdge("add", Graph.SINK, "out");
  }

  static Graph twoFunctions(String name) {
    return Graph.named(name).addLocalFunction("add", Add.class).addLocalFunction("check", Check.class)
        .addEdge(Graph.SOURCE, "add", ApiaryFunction.SOURCE, Long.class)
        .addEdge("add", "check", "out")
        .addEdge("check", Graph.SINK, ApiaryFunction.SINK);
  }

  /** A first run of {@code add} that records its outputs under a new invocation ID, as a one-function graph does. */
  private static Invocation recorded(String invocationId) {
    return new Invocation(java.util.Map.of(ApiaryFunction.SOURCE, List.of(org.apiary.internal.Json.tree(1L))),
        invocationId, true, "one_eo", null, true, true, null, 0L);
  }

  /** A recorded execution of a logged invocation: it also reads retention's fence ({@link Invocation#notBefore}). */
  private static Invocation recordedFenced(String invocationId) {
    return new Invocation(java.util.Map.of(ApiaryFunction.SOURCE, List.of(org.apiary.internal.Json.tree(1L))),
        invocationId, true, "one_eo", null, true, true, null, 0L, null, null, 0L, null);
  }

  private final java.util.concurrent.atomic.AtomicLong directIds = new java.util.concurrent.atomic.AtomicLong();

  /** One measured variant: a name and how to start one request for a key. */
  private record Variant(String name, LongFunction<CompletableFuture<?>> request) {}

  @Override
  public Integer call() throws Exception {
    try (ApiaryDatabase db = ApiaryDatabase.open(DatabaseConfig.embedded(partitions))) {
      Registrar.register(db, new Application(SCHEMA, List.of(oneFunction("one_none"), twoFunctions("two_none"))),
          RecordingMode.NONE);
      Registrar.register(db, new Application(SCHEMA, List.of(oneFunction("one_eo"), twoFunctions("two_selective"))),
          RecordingMode.SELECTIVE);
      Registrar.register(db, new Application(SCHEMA, List.of(twoFunctions("two_naive"))), RecordingMode.NAIVE);
      FunctionInvoker direct = new FunctionInvoker(db, FunctionCatalog.load(db));
      try (FrontendServer logged = FrontendServer.start(db, FrontendConfig.defaults());
           FrontendServer unlogged = FrontendServer.start(db, FrontendConfig.defaults().withInvocationLog(false));
           ApiaryClient viaLogged = ApiaryClient.connect(ClientConfig.of(logged.endpoint()));
           ApiaryClient viaUnlogged = ApiaryClient.connect(ClientConfig.of(unlogged.endpoint()))) {
        List<Variant> variants = List.of(
            new Variant("procedure, called directly", k -> direct.callAsync("add", k, Invocation.ofArguments(1L))),
            new Variant("procedure, called directly, recorded", k -> direct.callAsync("add", k,
                recorded("direct-" + directIds.incrementAndGet()))),
            new Variant("procedure, called directly, recorded, fenced", k -> direct.callAsync("add", k,
                recordedFenced("fenced-" + directIds.incrementAndGet()))),
            new Variant("1-function graph, no recording, no log", k -> viaUnlogged.invokeAsync("one_none", k, 1L)),
            new Variant("1-function graph, no recording, log", k -> viaLogged.invokeAsync("one_none", k, 1L)),
            new Variant("1-function graph, exactly-once", k -> viaLogged.invokeAsync("one_eo", k, 1L)),
            new Variant("2-function graph, no recording, log", k -> viaLogged.invokeAsync("two_none", k, 1L)),
            new Variant("2-function graph, selective (Alg. 1)", k -> viaLogged.invokeAsync("two_selective", k, 1L)),
            new Variant("2-function graph, naive (record all)", k -> viaLogged.invokeAsync("two_naive", k, 1L)));
        out.printf(Locale.ROOT, "%d partitions, %d requests in flight, %d keys, %d s warm-up + %d s measured per variant%n",
            partitions, concurrency, load.keys, load.warmup, load.seconds);
        out.printf(Locale.ROOT, "%-42s %12s %10s %10s %8s%n", "variant", "ops/s", "p50 ms", "p99 ms", "errors");
        for (int round = 0; round < rounds; round++) {
          for (Variant v : variants) {
            if (only != null && !v.name().contains(only)) {
              continue;
            }
            ClosedLoop.Result r = measure(v);
            out.printf(Locale.ROOT, "%-42s %12.0f %10.2f %10.2f %8d%n", v.name(), r.throughput(), r.p50Ms(), r.p99Ms(),
                r.errors());
          }
        }
      }
    }
    return 0;
  }

  private ClosedLoop.Result measure(Variant v) throws InterruptedException {
    return ClosedLoop.run(v.request(), concurrency, load);
  }

  public static void main(String[] args) {
    System.exit(new CommandLine(new FrontendBenchmark()).execute(args));
  }
}
