package org.apiary.benchmarks.provenance;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apiary.ApiaryFunction;
import org.apiary.Application;
import org.apiary.Graph;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.DatabaseConfig;
import org.apiary.database.LocalCluster;
import org.apiary.database.ProvenanceConfig;
import org.apiary.frontend.Registrar;
import org.apiary.internal.Invocation;
import org.apiary.runtime.FunctionCatalog;
import org.apiary.runtime.FunctionInvoker;
import org.apiary.runtime.provenance.ServerProvenance;
import org.apiary.benchmarks.ClosedLoop;
import org.apiary.benchmarks.ManualLog;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * What provenance capture costs. A function reads a counter and writes it back; a closed loop keeps
 * {@code --concurrency} calls in flight for {@code --seconds} after a warm-up. Variants: capture off; writes only
 * (change data capture and function executions); reads and writes (plus every row read); and manual logging
 * (capture off, the function appends JSON lines to a file instead). VoltDB runs once per process, so each variant
 * runs in a process of its own; {@code --variant all} starts them one after the other and prints the table.
 */
@Command(name = "provenance-benchmark", mixinStandardHelpOptions = true,
    description = "Throughput and latency of a read-write function under each provenance capture level.")
public final class ProvenanceBenchmark implements Callable<Integer> {
  static final String SCHEMA = """
      CREATE TABLE prov_counters (k BIGINT NOT NULL, v BIGINT NOT NULL, PRIMARY KEY (k));
      PARTITION TABLE prov_counters ON COLUMN k;
      """;
  static final List<String> VARIANTS = List.of("off", "writes", "reads-and-writes", "durable", "manual-log");

  @Option(names = "--variant", defaultValue = "all",
      description = "off, writes, reads-and-writes, durable (reads and writes, forced to disk), manual-log or all.")
  String variant;

  @CommandLine.Mixin
  ClosedLoop.Options load = new ClosedLoop.Options();

  @Option(names = "--concurrency", defaultValue = "64", description = "Calls in flight (default ${DEFAULT-VALUE}).")
  int concurrency;

  @Option(names = "--sink", description = "JDBC URL of the provenance sink (default: a DuckDB file in a temporary directory).")
  String sink;

  @Option(names = "--sink-user", description = "User for the sink.")
  String sinkUser;

  @Option(names = "--flush-ms", defaultValue = "10",
      description = "How often captured reads and executions are loaded into the sink (default ${DEFAULT-VALUE}).")
  int flushMs;

  private final PrintStream out = System.out;

  @Override
  public Integer call() throws Exception {
    if (variant.equals("all")) {
      out.printf(Locale.ROOT, "2 partitions, %d calls in flight, %d keys, %d s warm-up + %d s measured per variant, "
          + "flush every %d ms, sink %s%n", concurrency, load.keys, load.warmup, load.seconds, flushMs,
          sink == null ? "DuckDB file" : sink);
      out.printf(Locale.ROOT, "%-18s %10s %9s %9s %12s%n", "variant", "ops/s", "p50 ms", "p99 ms", "captured");
      for (String v : VARIANTS) {
        int code = runInOwnProcess(v);
        if (code != 0) {
          return code;
        }
      }
      return 0;
    }
    if (!VARIANTS.contains(variant)) {
      throw new CommandLine.ParameterException(new CommandLine(this), "unknown variant " + variant);
    }
    return measure();
  }

  private int runInOwnProcess(String v) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(LocalCluster.VOLTDB_JVM_FLAGS);
    cmd.addAll(List.of("-Xmx3g", "-cp", System.getProperty("java.class.path"), ProvenanceBenchmark.class.getName(),
        "--variant", v, "--seconds", String.valueOf(load.seconds), "--warmup", String.valueOf(load.warmup),
        "--concurrency", String.valueOf(concurrency), "--keys", String.valueOf(load.keys),
        "--flush-ms", String.valueOf(flushMs)));
    if (sink != null) {
      cmd.addAll(List.of("--sink", sink));
    }
    if (sinkUser != null) {
      cmd.addAll(List.of("--sink-user", sinkUser));
    }
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    List<String> lines = new String(p.getInputStream().readAllBytes()).lines().toList();
    if (!p.waitFor(load.warmup + load.seconds + 300L, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException("variant " + v + " did not finish");
    }
    lines.stream().filter(l -> l.startsWith("RESULT ")).forEach(l -> out.println(l.substring(7)));
    if (p.exitValue() != 0) {
      lines.forEach(out::println);
    }
    return p.exitValue();
  }

  private int measure() throws Exception {
    Path dir = Files.createTempDirectory("apiary-prov-bench-");
    boolean capture = variant.equals("writes") || variant.equals("reads-and-writes") || variant.equals("durable");
    DatabaseConfig config = DatabaseConfig.embedded(2);
    if (capture) {
      ProvenanceConfig provenance = sink == null ? ProvenanceConfig.duckdb(dir.resolve("provenance.duckdb"))
          : ProvenanceConfig.sink(sink).withCredentials(sinkUser, null);
      config = config.withProvenance(provenance.withFlushInterval(Duration.ofMillis(flushMs))
          .withDurableCapture(variant.equals("durable")));
    }
    Path manualLog = dir.resolve("manual-log.jsonl");
    if (variant.equals("manual-log")) {
      ManualLog.open(manualLog);
    }
    String mode = switch (variant) {
      case "writes" -> "WRITES";
      case "reads-and-writes", "durable" -> "READS_AND_WRITES";
      case "manual-log" -> "MANUAL";
      default -> "NONE";
    };
    try (ApiaryDatabase db = ApiaryDatabase.open(config)) {
      Graph g = Graph.named("readWrite").addLocalFunction("readWrite", ReadWrite.class)
          .addEdge(Graph.SOURCE, "readWrite", ApiaryFunction.SOURCE, String.class)
          .addEdge("readWrite", Graph.SINK, ApiaryFunction.SINK);
      Registrar.register(db, Application.of(SCHEMA, g));
      FunctionInvoker invoker = new FunctionInvoker(db, FunctionCatalog.load(db));
      ClosedLoop.Result r = ClosedLoop.run(key -> invoker.callAsync("readWrite", key, Invocation.ofArguments(mode)),
          concurrency, load);
      String captured = "-";
      if (capture) {
        ServerProvenance p = ServerProvenance.active().orElseThrow();
        p.flush(Duration.ofSeconds(60));
        captured = p.spooler().stats().rowsLoaded() + " rows";
      } else if (variant.equals("manual-log")) {
        ManualLog.close();
        captured = Files.size(manualLog) / 1024 + " KiB";
      }
      out.printf(Locale.ROOT, "RESULT %-18s %10.0f %9.2f %9.2f %12s%n", variant, r.throughput(), r.p50Ms(),
          r.p99Ms(), captured);
      if (r.errors() > 0) {
        out.println("RESULT   (" + r.errors() + " calls failed)");
      }
    }
    return 0;
  }

  public static void main(String[] args) {
    System.exit(new CommandLine(new ProvenanceBenchmark()).execute(args));
  }
}
