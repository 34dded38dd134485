package org.apiary.benchmarks;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.apiary.benchmarks.rpc.RpcServers;
import org.apiary.benchmarks.workload.Request;
import org.apiary.benchmarks.workload.Workload;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.DatabaseConfig;
import org.apiary.database.ProvenanceConfig;
import org.apiary.frontend.Dispatcher;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.FrontendServer;
import org.apiary.frontend.GraphCatalog;
import org.apiary.frontend.RegisteredGraph;
import org.apiary.frontend.Registrar;
import org.apiary.internal.Invocation;
import org.apiary.internal.Json;
import org.apiary.runtime.FunctionCatalog;
import org.apiary.runtime.FunctionInvoker;
import org.apiary.runtime.SystemSchema;
import org.apiary.runtime.provenance.ExportBacklog;
import org.apiary.runtime.provenance.ServerProvenance;

/**
 * One variant of one workload, measured in this process (VoltDB runs once per process): start the database and the
 * system under test, load the data, find the saturated throughput with a short closed loop, then run the open-loop
 * points: the workload's fixed offered loads and a sweep of fractions of the saturated throughput.
 */
final class VariantRun {
  /**
   * How a variant is measured.
   *
   * @param hold if not {@code null}, one load point at this rate instead of the sweep and the fixed loads (profiling,
   *     or a soak)
   * @param timeline whether each load point prints its slow 100 ms stretches ({@link OpenLoop.Settings#timeline})
   * @param progress if not {@code null}, a held load prints what each such interval achieved
   *     ({@link OpenLoop.Settings#progress})
   * @param retention if not {@code null}, the frontend's retention of ended invocations and recorded outputs (its
   *     cleanup runs every quarter of it), so a soak deletes while it loads; otherwise the frontend's default
   */
  record Plan(Workload.Scale scale, Duration warmup, Duration measure, int doublings, int bisections,
              double p99BoundMs, int partitions, OpenLoop.Arrivals arrivals, Double hold, boolean timeline,
              Duration progress, Duration retention, org.apiary.journal.JournalMode journal) {}

  /** What a variant achieved; serialized as one JSON line for the parent process. */
  record Outcome(String variant, List<OpenLoop.Point> fixed, List<OpenLoop.Point> sweep, long provenanceRows,
                 String note) {}

  private VariantRun() {}

  /**
   * The sweep of offered load: doubles the load from {@code start} until a point is not sustained (or the plan's
   * doublings run out), or halves it until one is if the first was not, then bisects (geometrically) between the
   * last sustained load and the first that was not.
   */
  static List<OpenLoop.Point> search(Function<Double, OpenLoop.Point> measure, double start, Plan plan) {
    List<OpenLoop.Point> points = new ArrayList<>();
    double good = 0;
    double bad = 0;
    double load = start;
    for (int i = 0; i <= plan.doublings(); i++, load *= 2) {
      OpenLoop.Point p = measure.apply(load);
      points.add(p);
      if (!BenchmarkReport.sustained(p, plan.p99BoundMs())) {
        bad = load;
        break;
      }
      good = load;
    }
    // Not even the first load was sustained: halve until one is (a few times at most).
    for (int i = 0; i < plan.bisections() && good == 0 && bad > 0; i++) {
      load = bad / 2;
      OpenLoop.Point p = measure.apply(load);
      points.add(p);
      if (BenchmarkReport.sustained(p, plan.p99BoundMs())) {
        good = load;
      } else {
        bad = load;
      }
    }
    for (int i = 0; i < plan.bisections() && good > 0 && bad > 0; i++) {
      double mid = Math.round(Math.sqrt(good * bad));
      OpenLoop.Point p = measure.apply(mid);
      points.add(p);
      if (BenchmarkReport.sustained(p, plan.p99BoundMs())) {
        good = mid;
      } else {
        bad = mid;
      }
    }
    return points;
  }

  static Outcome run(Workload workload, Variant variant, Plan plan) throws Exception {
    Path dir = Files.createTempDirectory("apiary-bench-" + workload.name() + "-");
    try {
      return run(workload, variant, plan, dir);
    } finally {
      deleteTree(dir); // the provenance database and spill files of a run are hundreds of MB; nothing reads them after
    }
  }

  private static void deleteTree(Path dir) throws java.io.IOException {
    try (var paths = Files.walk(dir)) {
      for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  private static Outcome run(Workload workload, Variant variant, Plan plan, Path dir) throws Exception {
    DatabaseConfig config = DatabaseConfig.embedded(plan.partitions());
    if (plan.journal() != org.apiary.journal.JournalMode.NONE) {
      config = config.withDataDirectory(dir.resolve("database")).withJournal(plan.journal());
    }
    if (variant.capture() == Variant.Capture.WRITES || variant.capture() == Variant.Capture.READS_AND_WRITES) {
      config = config.withProvenance(ProvenanceConfig.duckdb(dir.resolve("provenance.duckdb"))
          .withSpillDirectory(dir.resolve("spill"))
          .withWriteCaptureOnly(workload.writtenTables().toArray(String[]::new))
          .withReadCapture(variant.capture() == Variant.Capture.READS_AND_WRITES));
    }
    try (ApiaryDatabase db = ApiaryDatabase.open(config)) {
      List<RegisteredGraph> graphs = Registrar.register(db, workload.application(),
          variant.recording() == null ? org.apiary.RecordingMode.NONE : variant.recording());
      workload.load(db, plan.scale());
      if (variant.capture() == Variant.Capture.MANUAL_LOG) {
        ManualLog.open(dir.resolve("manual-log.jsonl"));
      }
      FrontendConfig frontendConfig = FrontendConfig.defaults().withInvocationLog(variant.invocationLog());
      if (plan.retention() != null) {
        frontendConfig = frontendConfig.withRetention(plan.retention(), plan.retention().dividedBy(4));
      }
      try (SystemUnderTest sut = SystemUnderTest.start(db, workload, variant, graphs, frontendConfig)) {
        OpenLoop.Settings settings = new OpenLoop.Settings(plan.warmup(), plan.measure(), plan.arrivals(), 5_000,
            Duration.ofSeconds(10), plan.timeline(), plan.progress());
        long[] seed = {1};
        Function<Double, OpenLoop.Point> measure = load -> {
          try {
            awaitProvenanceBacklog(db);
            return OpenLoop.run(workload, sut::send, load, settings, seed[0]++);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
          }
        };
        // Unmeasured: the JIT compiles the hot paths and the provenance sink creates its tables before any point.
        OpenLoop.run(workload, sut::send, workload.fixedLoads(plan.scale()).get(0) / 2,
            new OpenLoop.Settings(plan.warmup().multipliedBy(3), Duration.ofSeconds(1), plan.arrivals(), 5_000,
                Duration.ofSeconds(10), false), 0);
        if (plan.hold() != null) {
          System.out.println("holding " + plan.hold() + " req/s in process " + ProcessHandle.current().pid());
          long heapBefore = ProcessMemory.heapAfterFullGcBytes();
          long residentBefore = ProcessMemory.residentBytes();
          long systemRowsBefore = systemRows(db);
          long tablesBefore = voltDbTableBytes(db);
          long provenanceBefore = treeBytes(dir.resolve("provenance.duckdb"), dir);
          OpenLoop.Point held = measure.apply(plan.hold());
          String memory = String.format(java.util.Locale.ROOT, "heap after full GC %,d -> %,d MB, resident %,d -> "
                  + "%,d MB, VoltDB tables (tuples, indexes, strings) %,d -> %,d MB, provenance files %,d -> %,d MB, "
                  + "recorded outputs and logged invocations %,d -> %,d rows", heapBefore >> 20,
              ProcessMemory.heapAfterFullGcBytes() >> 20, residentBefore >> 20, ProcessMemory.residentBytes() >> 20,
              tablesBefore >> 20, voltDbTableBytes(db) >> 20, provenanceBefore >> 20,
              treeBytes(dir.resolve("provenance.duckdb"), dir) >> 20, systemRowsBefore, systemRows(db));
          System.out.println(memory);
          return new Outcome(variant.id(), List.of(held), List.of(), 0, memory);
        }
        // The sweep first: a fixed load above what the variant sustains leaves a backlog behind.
        List<OpenLoop.Point> sweep = search(measure, workload.fixedLoads(plan.scale()).get(0) / 2, plan);
        List<OpenLoop.Point> fixed = new ArrayList<>();
        for (double load : workload.fixedLoads(plan.scale())) {
          fixed.add(measure.apply(load));
        }
        long provenanceRows = 0;
        if (ServerProvenance.active().isPresent()) {
          ServerProvenance p = ServerProvenance.active().get();
          p.flush(Duration.ofSeconds(60));
          provenanceRows = p.spooler().stats().rowsLoaded();
        }
        ManualLog.close();
        String note = variant.capture() == Variant.Capture.MANUAL_LOG
            ? "manual log " + Files.size(dir.resolve("manual-log.jsonl")) / 1024 + " KiB" : null;
        return new Outcome(variant.id(), fixed, sweep, provenanceRows, note);
      }
    }
  }

  /** Memory VoltDB's tables take (tuples, indexes and out-of-line strings, every site), from {@code @Statistics}. */
  private static long voltDbTableBytes(ApiaryDatabase db) {
    org.voltdb.VoltTable t = db.callAdmin("reading memory statistics", "@Statistics", "MEMORY", 0).getResults()[0];
    long kb = 0;
    while (t.advanceRow()) {
      kb += t.getLong("TUPLEALLOCATED") + t.getLong("INDEXMEMORY") + t.getLong("STRINGMEMORY");
    }
    return kb * 1024;
  }

  /** Bytes of the DuckDB provenance file and its write-ahead log, and of the spill files, under {@code dir}. */
  private static long treeBytes(Path duckdb, Path dir) throws java.io.IOException {
    long bytes = 0;
    for (Path p : List.of(duckdb, duckdb.resolveSibling(duckdb.getFileName() + ".wal"), dir.resolve("spill"))) {
      if (Files.isDirectory(p)) {
        try (var files = Files.walk(p)) {
          for (Path f : files.filter(Files::isRegularFile).toList()) {
            bytes += Files.size(f);
          }
        }
      } else if (Files.exists(p)) {
        bytes += Files.size(p);
      }
    }
    return bytes;
  }

  /** Rows retention keeps in check: every recorded-outputs table's and the invocation log's. */
  private static long systemRows(ApiaryDatabase db) {
    long rows = 0;
    List<String> tables = new ArrayList<>(SystemSchema.recordedTables());
    tables.add(SystemSchema.INVOCATIONS);
    for (String table : tables) {
      rows += db.callAdmin("counting " + table, "@AdHoc", "SELECT COUNT(*) FROM " + table).getResults()[0]
          .asScalarLong();
    }
    return rows;
  }

  /**
   * Waits (at most {@link #BACKLOG_WAIT}) until the provenance captured so far is loaded: the spooler's rows and the
   * writes VoltDB's export streams hold. A load above what a variant sustains leaves a backlog that the next point
   * would otherwise pay for (measured: after the sweep's step to twice the counter's capacity, every lower step
   * failed while an held load at the same rate passed), which only variants with provenance have.
   */
  private static void awaitProvenanceBacklog(ApiaryDatabase db) throws InterruptedException {
    if (ServerProvenance.active().isEmpty()) {
      return;
    }
    long started = System.nanoTime();
    long deadline = started + BACKLOG_WAIT.toNanos();
    ServerProvenance.active().get().flush(BACKLOG_WAIT);
    while (ExportBacklog.bySource(db).values().stream().mapToLong(Long::longValue).sum() > 0
        && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    long waitedMs = (System.nanoTime() - started) / 1_000_000;
    if (waitedMs >= 500) {
      System.out.println("waited " + waitedMs + " ms for the previous load's provenance backlog");
    }
  }

  private static final Duration BACKLOG_WAIT = Duration.ofSeconds(120);

  /** How requests reach the system under test. */
  private static final class SystemUnderTest implements AutoCloseable {
    private final Function<Request, CompletableFuture<?>> send;
    private final List<AutoCloseable> resources;
    private volatile String firstError;

    private SystemUnderTest(Function<Request, CompletableFuture<?>> send, List<AutoCloseable> resources) {
      this.send = send;
      this.resources = resources;
    }

    static SystemUnderTest start(ApiaryDatabase db, Workload workload, Variant variant, List<RegisteredGraph> graphs,
                                 FrontendConfig frontendConfig) throws Exception {
      if (variant == Variant.RAW_VOLTDB) {
        return direct(db, graphs);
      }
      List<AutoCloseable> resources = new ArrayList<>();
      String endpoint;
      if (variant == Variant.RPC_SERVERS) {
        db.loadSchema(workload.rpcProcedures());
        RpcServers servers = RpcServers.start(workload, db.clientAddresses().get(0));
        resources.add(servers);
        endpoint = servers.endpoint();
      } else {
        FrontendServer frontend = FrontendServer.start(db, frontendConfig);
        resources.add(frontend);
        endpoint = frontend.endpoint();
      }
      ApiaryClient client = ApiaryClient.connect(ClientConfig.of(endpoint).withAttemptTimeout(Duration.ofSeconds(60))
          .withMaxAttempts(1));
      resources.add(0, client);
      return new SystemUnderTest(r -> client.invokeAsync(r.graph(), r.key(), r.args()), resources);
    }

    /**
     * The stored procedures called directly: a one-function graph is one procedure call; a larger graph is walked
     * by a dispatcher in this process, with nothing recorded and nothing logged.
     */
    private static SystemUnderTest direct(ApiaryDatabase db, List<RegisteredGraph> graphs) {
      GraphCatalog catalog = new GraphCatalog(db, Duration.ZERO);
      FunctionInvoker invoker = new FunctionInvoker(db, FunctionCatalog.load(db));
      Dispatcher dispatcher = new Dispatcher(db, catalog, (graph, invocation, function, result) -> { });
      Map<String, RegisteredGraph> byName = new ConcurrentHashMap<>();
      graphs.forEach(g -> byName.put(g.name(), g));
      AtomicLong ids = new AtomicLong();
      return new SystemUnderTest(r -> {
        RegisteredGraph g = byName.get(r.graph());
        if (g.nodes().size() == 1) {
          return invoker.callAsync(g.nodes().get(0).function(), r.key(), Invocation.ofArguments(r.args()));
        }
        List<JsonNode> args = Arrays.stream(r.args()).map(Json::tree).toList();
        return dispatcher.execute(g, "raw-" + ids.incrementAndGet(), Json.tree(r.key()), args, null, false, null);
      }, List.of());
    }

    CompletableFuture<?> send(Request r) {
      return send.apply(r).whenComplete((x, err) -> {
        if (err != null && firstError == null) {
          firstError = String.valueOf(err.getMessage());
        }
      });
    }

    String firstError() {
      return firstError;
    }

    @Override
    public void close() throws Exception {
      for (AutoCloseable r : resources) {
        r.close();
      }
    }
  }
}
