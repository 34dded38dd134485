package org.apiary.benchmarks;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apiary.benchmarks.workload.Workload;
import org.apiary.benchmarks.workload.Workloads;
import org.apiary.database.LocalCluster;
import org.apiary.internal.Json;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The workload benchmarks (issue 5; paper section 7, Table 1, Figures 9, 11, 13, 14): runs each variant of a
 * workload in a process of its own, one after the other on this machine, and writes
 * {@code bench-results/WORKLOAD.json}, throughput-versus-latency plots beside it, and a table with the target ratios.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
    description = "Shop, Hotel, Retwis and counter on Apiary's variants and the baselines.")
public final class WorkloadBenchmark implements Callable<Integer> {
  @Parameters(index = "0", arity = "0..1", description = "shop, hotel, retwis, counter or all.")
  String workload;

  @Option(names = "--quick", description = "A smoke run (small data, short points): checks that everything runs, not how fast.")
  boolean quick;

  @Option(names = "--variants", split = ",", description = "Variants to run (default: all of ${COMPLETION-CANDIDATES}).")
  List<String> variants = Variant.ids();

  @Option(names = "--seconds", description = "Measured seconds per load point (default 5; --quick 2).")
  Integer seconds;

  @Option(names = "--warmup", description = "Warm-up seconds per load point (default 2; --quick 1).")
  Integer warmup;

  @Option(names = "--p99-bound-ms", defaultValue = "100",
      description = "A load is sustained if its p99 stays under this and it completes what is offered (default ${DEFAULT-VALUE}).")
  double p99BoundMs;

  @Option(names = "--bisections", defaultValue = "5", description = "Bisections of the sweep between the last "
      + "sustained load and the first that was not: each halves the step (geometrically) from a doubling, so 5 end "
      + "2^(1/32), about 2%%, apart, finer than the 5%% a guarantee may cost (default ${DEFAULT-VALUE}; --quick 0).")
  int bisections;

  @Option(names = "--hold", paramLabel = "RATE", description = "Profiling: instead of the sweep and the fixed loads, "
      + "hold this offered load (requests/s) for --seconds after --warmup in each variant's process, and print what it "
      + "achieved and its CPU per request; the log names the process to attach a profiler to.")
  Double hold;

  @Option(names = "--progress", paramLabel = "SECONDS", description = "With --hold (a soak): print every SECONDS "
      + "what the interval achieved, with the process's heap after its last GC and resident memory; the held point "
      + "also reports heap after a full GC and resident memory before and after.")
  Integer progress;

  @Option(names = "--retention", paramLabel = "SECONDS", description = "The frontend's retention of ended "
      + "invocations and recorded outputs (cleanup every quarter of it), so a long held load deletes while it runs "
      + "(default: the frontend's, an hour).")
  Integer retention;

  @Option(names = "--timeline", description = "Each load point prints, in its variant's log, every 100 ms whose "
      + "slowest request took over 20 ms, with its wall-clock time (to line up with GC logs and profiles).")
  boolean timeline;

  @Option(names = "--arrivals", defaultValue = "UNIFORM", description = "UNIFORM (as in the paper) or EXPONENTIAL.")
  OpenLoop.Arrivals arrivals;

  @Option(names = "--journal", defaultValue = "none", description = "The database's journal: none (a temporary "
      + "database, the default), asynchronous or synchronous (a data directory in the run's temporary directory, "
      + "checkpointed every 60 s).")
  String journal;

  @Option(names = "--partitions", defaultValue = "2", description = "Database partitions (default ${DEFAULT-VALUE}).")
  int partitions;

  @Option(names = "--rounds", defaultValue = "1", description = "Runs the variants in turn this many times (v1, v2, "
      + "v1, v2, ...) and reports each variant's median round by max sustained load: one sweep's max moves by up to "
      + "1.5x between runs of the same code on a small machine (default ${DEFAULT-VALUE}).")
  int rounds;

  @Option(names = "--out", defaultValue = "bench-results", description = "Output directory (default ${DEFAULT-VALUE}).")
  Path out;

  @Option(names = "--from-json", description = "Print the table and redraw the plots of an earlier run's JSON "
      + "(written beside it) instead of running anything.")
  Path fromJson;

  @Option(names = "--child-variant", hidden = true)
  String childVariant;

  private final PrintStream stdout = System.out;

  VariantRun.Plan plan() {
    Workload.Scale scale = quick ? Workload.Scale.QUICK : Workload.Scale.FULL;
    int w = warmup != null ? warmup : quick ? 1 : 2;
    int s = seconds != null ? seconds : quick ? 2 : 5;
    return new VariantRun.Plan(scale, Duration.ofSeconds(w), Duration.ofSeconds(s), quick ? 1 : 10,
        quick ? 0 : bisections, p99BoundMs, partitions, arrivals, hold, timeline,
        progress == null ? null : Duration.ofSeconds(progress), retention == null ? null : Duration.ofSeconds(retention),
        org.apiary.journal.JournalMode.parse(journal));
  }

  @Override
  public Integer call() throws Exception {
    if (childVariant != null) {
      VariantRun.Outcome o = VariantRun.run(Workloads.byName(workload), Variant.byId(childVariant), plan());
      stdout.println("RESULT " + Json.MAPPER.writeValueAsString(o));
      return 0;
    }
    if (fromJson != null) {
      return report(fromJson);
    }
    if (workload == null) {
      throw new CommandLine.ParameterException(new CommandLine(this),
          "name a workload (" + String.join(", ", Workloads.NAMES) + " or all), or give --from-json");
    }
    variants.forEach(Variant::byId);
    if (hold != null && !(hold > 0)) {
      throw new CommandLine.ParameterException(new CommandLine(this), "--hold must be a positive rate, not " + hold);
    }
    if (progress != null && (hold == null || progress < 1)) {
      throw new CommandLine.ParameterException(new CommandLine(this), "--progress needs --hold and at least 1 second");
    }
    if (retention != null && retention < 4) {
      throw new CommandLine.ParameterException(new CommandLine(this), "--retention must be at least 4 seconds");
    }
    List<String> workloads = workload.equals("all") ? Workloads.NAMES : List.of(Workloads.byName(workload).name());
    Files.createDirectories(out.resolve("logs"));
    int failures = 0;
    for (String w : workloads) {
      failures += runWorkload(w);
    }
    return failures == 0 ? 0 : 1;
  }

  private int runWorkload(String name) throws Exception {
    Workload w = Workloads.byName(name);
    stdout.printf(Locale.ROOT, "%n== %s%s: %d variants, each in its own process ==%n", name, quick ? " (quick)" : "",
        variants.size());
    if (rounds < 1) {
      throw new CommandLine.ParameterException(new CommandLine(this), "--rounds must be at least 1");
    }
    Map<String, List<VariantRun.Outcome>> byVariant = new LinkedHashMap<>();
    List<String> failed = new ArrayList<>();
    for (int round = 1; round <= rounds; round++) {
      for (String v : variants) {
        if (failed.contains(v)) {
          continue;
        }
        long started = System.nanoTime();
        VariantRun.Outcome o = runChild(name, v, round);
        if (o == null) {
          failed.add(v);
          stdout.printf(Locale.ROOT, "  %-18s FAILED (see %s)%n", v, log(name, v, round));
        } else {
          byVariant.computeIfAbsent(v, k -> new ArrayList<>()).add(o);
          stdout.printf(Locale.ROOT, "  %-18s done in %d s%s%n", v,
              TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started), rounds > 1 ? " (round " + round + ")" : "");
        }
      }
    }
    byVariant.keySet().removeAll(failed);
    if (hold != null) {
      printHeld(byVariant);
      return failed.size();
    }
    List<VariantRun.Outcome> outcomes = new ArrayList<>();
    Map<String, List<Double>> maxima = new LinkedHashMap<>();
    byVariant.forEach((v, runs) -> {
      List<VariantRun.Outcome> sorted = new ArrayList<>(runs);
      sorted.sort(java.util.Comparator.comparingDouble(o -> maxAchieved(w, o)));
      outcomes.add(sorted.get(sorted.size() / 2)); // the median round (the upper one of an even count)
      maxima.put(v, runs.stream().map(o -> maxAchieved(w, o)).toList());
    });
    BenchmarkReport report = new BenchmarkReport(w, outcomes, failed, p99BoundMs);
    ObjectNode json = report.toJson();
    json.set("machine", machine());
    json.put("command", "scripts/bench.sh " + name + (quick ? " --quick" : "") + (rounds > 1 ? " --rounds " + rounds : ""));
    if (rounds > 1) {
      ObjectNode perRound = json.putObject("maxSustainedPerRound");
      maxima.forEach((v, m) -> m.forEach(perRound.putArray(v)::add));
    }
    json.put("finished", Instant.now().toString());
    VariantRun.Plan plan = plan();
    ObjectNode planJson = json.putObject("plan");
    planJson.put("scale", plan.scale().name());
    planJson.put("warmupSeconds", plan.warmup().toSeconds());
    planJson.put("measuredSeconds", plan.measure().toSeconds());
    planJson.put("doublings", plan.doublings());
    planJson.put("bisections", plan.bisections());
    planJson.put("partitions", plan.partitions());
    planJson.put("journal", plan.journal().name().toLowerCase(java.util.Locale.ROOT));
    planJson.put("arrivals", plan.arrivals().name());
    Path file = out.resolve(name + ".json");
    Json.MAPPER.writer().with(SerializationFeature.INDENT_OUTPUT).writeValue(file.toFile(), json);
    List<Path> plots = Plots.write(out, name, outcomes);
    if (rounds > 1) {
      stdout.printf(Locale.ROOT, "%nmax sustained per round (req/s); the table below shows each variant's median round%n");
      maxima.forEach((v, m) -> stdout.printf(Locale.ROOT, "  %-18s %s%n", v, m.stream()
          .map(x -> String.format(Locale.ROOT, "%,.0f", x)).collect(java.util.stream.Collectors.joining("  "))));
      BenchmarkReport.pairedCosts(maxima).forEach(line -> stdout.println("  " + line));
    }
    report.print(stdout);
    stdout.println("wrote " + file + plots.stream().map(p -> ", " + p).reduce("", String::concat));
    return failed.size();
  }

  private static String millis(OpenLoop.Point p, double ms) {
    return p.all().count() == 0 ? "-" : String.format(Locale.ROOT, "%.2f", ms);
  }

  /** What each variant achieved at the --hold load, round by round. */
  private void printHeld(Map<String, List<VariantRun.Outcome>> byVariant) {
    stdout.printf(Locale.ROOT, "%n%-18s %10s %10s %9s %9s %9s %8s   (held %,.0f req/s for %d s; round by round)%n",
        "variant", "offered", "achieved", "p50 ms", "p99 ms", "max ms", "cpu µs", hold, plan().measure().toSeconds());
    // Far above capacity no call scheduled in the window may finish in it: its latency is unknown, not zero.
    byVariant.forEach((v, runs) -> runs.forEach(o -> o.fixed().forEach(p -> stdout.printf(Locale.ROOT,
        "%-18s %10.0f %10.0f %9s %9s %9s %8.0f  errors %d%s%n", v, p.offered(), p.achieved(), millis(p, p.all().p50Ms()),
        millis(p, p.all().p99Ms()), millis(p, p.all().maxMs()), p.cpuMicrosPerRequest(), p.errors(),
        o.note() == null ? "" : "  " + o.note()))));
    Map<String, List<Double>> achieved = new LinkedHashMap<>();
    Map<String, List<Double>> cpu = new LinkedHashMap<>();
    byVariant.forEach((v, runs) -> runs.forEach(o -> o.fixed().forEach(p -> {
      achieved.computeIfAbsent(v, k -> new ArrayList<>()).add(p.achieved());
      // CPU per request stands for capacity on a machine the whole benchmark saturates: its inverse is the load
      cpu.computeIfAbsent(v, k -> new ArrayList<>()).add(p.cpuMicrosPerRequest() > 0 ? 1 / p.cpuMicrosPerRequest() : 0);
    })));
    BenchmarkReport.pairedCosts(achieved).forEach(line -> stdout.println("by load achieved: " + line));
    BenchmarkReport.pairedCosts(cpu).forEach(line -> stdout.println("by CPU per request: " + line));
  }

  /** Rebuilds the report of a saved run: its outcomes are the variants' fixed-load and sweep points. */
  private int report(Path file) throws Exception {
    JsonNode json = Json.MAPPER.readTree(file.toFile());
    Workload w = Workloads.byName(json.get("workload").asText());
    List<VariantRun.Outcome> outcomes = new ArrayList<>();
    json.get("variants").fields().forEachRemaining(e -> outcomes.add(new VariantRun.Outcome(e.getKey(),
        List.of(Json.MAPPER.convertValue(e.getValue().get("fixedLoads"), OpenLoop.Point[].class)),
        List.of(Json.MAPPER.convertValue(e.getValue().get("sweep"), OpenLoop.Point[].class)),
        e.getValue().path("provenanceRowsLoaded").asLong(), e.getValue().path("note").asText(null))));
    List<String> failed = new ArrayList<>();
    json.path("failedVariants").forEach(f -> failed.add(f.asText()));
    BenchmarkReport report = new BenchmarkReport(w, outcomes, failed, json.path("p99BoundMs").asDouble(p99BoundMs));
    ObjectNode updated = report.toJson();
    List.of("machine", "command", "finished", "plan").forEach(k -> updated.set(k, json.get(k)));
    Json.MAPPER.writer().with(SerializationFeature.INDENT_OUTPUT).writeValue(file.toFile(), updated);
    List<Path> plots = Plots.write(file.toAbsolutePath().getParent(), w.name(), outcomes);
    report.print(stdout);
    stdout.println("rewrote " + file + plots.stream().map(p -> ", " + p).reduce("", String::concat));
    return 0;
  }

  private Path log(String workloadName, String variant, int round) {
    return out.resolve("logs").resolve(workloadName + "-" + variant + (rounds > 1 ? "-" + round : "") + ".log");
  }

  /** A run's highest sustained load, 0 if it sustained none. */
  private double maxAchieved(Workload w, VariantRun.Outcome o) {
    return new BenchmarkReport(w, List.of(o), List.of(), p99BoundMs).maxSustained(o.variant())
        .map(OpenLoop.Point::achieved).orElse(0.0);
  }

  /** Runs one variant in its own JVM; its output goes to a log file, its result comes back as a JSON line. */
  private VariantRun.Outcome runChild(String workloadName, String variant, int round) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
    cmd.addAll(LocalCluster.VOLTDB_JVM_FLAGS);
    cmd.addAll(List.of("-Xmx4g", "-Djava.awt.headless=true", "-cp", System.getProperty("java.class.path"),
        WorkloadBenchmark.class.getName(), workloadName, "--child-variant", variant,
        "--partitions", String.valueOf(partitions), "--journal", journal, "--arrivals", arrivals.name(),
        "--p99-bound-ms", String.valueOf(p99BoundMs), "--bisections", String.valueOf(bisections)));
    if (hold != null) {
      cmd.addAll(List.of("--hold", String.valueOf(hold)));
    }
    if (timeline) {
      cmd.add("--timeline");
    }
    if (progress != null) {
      cmd.addAll(List.of("--progress", String.valueOf(progress)));
    }
    if (retention != null) {
      cmd.addAll(List.of("--retention", String.valueOf(retention)));
    }
    if (quick) {
      cmd.add("--quick");
    }
    if (seconds != null) {
      cmd.addAll(List.of("--seconds", String.valueOf(seconds)));
    }
    if (warmup != null) {
      cmd.addAll(List.of("--warmup", String.valueOf(warmup)));
    }
    Path log = log(workloadName, variant, round);
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!p.waitFor(30, TimeUnit.MINUTES)) {
      p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      return null;
    }
    for (String line : Files.readAllLines(log)) {
      if (line.startsWith("RESULT ")) {
        return Json.MAPPER.readValue(line.substring(7), VariantRun.Outcome.class);
      }
    }
    return null;
  }

  private static JsonNode machine() {
    ObjectNode m = Json.MAPPER.createObjectNode();
    m.put("cores", Runtime.getRuntime().availableProcessors());
    if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
      m.put("memoryBytes", os.getTotalMemorySize());
    }
    try {
      Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name")).findFirst()
          .ifPresent(l -> m.put("cpu", l.substring(l.indexOf(':') + 1).trim()));
    } catch (java.io.IOException e) {
      m.put("cpu", "unknown (" + e.getMessage() + ")");
    }
    m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
    m.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
    return m;
  }

  public static void main(String[] args) {
    System.exit(new CommandLine(new WorkloadBenchmark()).setCaseInsensitiveEnumValuesAllowed(true).execute(args));
  }
}
