package org.apiary.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.apiary.RecordingMode;
import org.apiary.benchmarks.workload.Request;
import org.apiary.benchmarks.workload.Workload;
import org.apiary.benchmarks.workload.Workloads;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.DatabaseConfig;
import org.apiary.frontend.GraphCatalog;
import org.apiary.frontend.RegisteredGraph;
import org.apiary.frontend.Registrar;
import org.apiary.internal.Invocation;
import org.apiary.runtime.FunctionInvoker;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The capacity check (issue 12): the database, the frontends and the load generator as separate processes, so each
 * one's CPU per request can be read from the operating system and a capacity model built from them.
 * {@code scripts/bench-capacity.sh} starts the processes; this program registers the workload ({@code setup}) and
 * generates the load ({@code load}), reading the CPU time of every process it is given over the measured window.
 */
@Command(name = "capacity", mixinStandardHelpOptions = true, subcommands = {CapacityCheck.Setup.class,
    CapacityCheck.Load.class}, description = "Per-process CPU per request, with database, frontends and load apart.")
public final class CapacityCheck {
  private CapacityCheck() {}

  public static void main(String[] args) {
    int code = new CommandLine(new CapacityCheck()).execute(args);
    System.exit(code); // a benchmark program, not a library: VoltDB's client leaves non-daemon threads behind
  }

  /** Registers a workload's application in a running database and loads its data. */
  @Command(name = "setup", mixinStandardHelpOptions = true, description = "Register the workload and load its data.")
  static final class Setup implements Callable<Integer> {
    @Option(names = "--database", required = true, split = ",", description = "host:port[,host:port...]")
    List<String> database;

    @Option(names = "--workload", defaultValue = "counter", description = "Workload (default ${DEFAULT-VALUE}).")
    String workload;

    @Option(names = "--recording", defaultValue = "NONE",
        description = "NONE (no exactly-once records) or SELECTIVE (Algorithm 1) (default ${DEFAULT-VALUE}).")
    RecordingMode recording;

    @Override
    public Integer call() throws Exception {
      Workload w = Workloads.byName(workload);
      try (ApiaryDatabase db = ApiaryDatabase.open(DatabaseConfig.external(database.toArray(String[]::new)))) {
        Registrar.register(db, w.application(), recording);
        w.load(db, Workload.Scale.FULL);
      }
      System.out.println("capacity setup: " + workload + " registered (recording " + recording + ") and loaded");
      return 0;
    }
  }

  /** Generates an open-loop load and reports each given process's CPU per request over the measured window. */
  @Command(name = "load", mixinStandardHelpOptions = true,
      description = "Hold a load through frontends (or straight at the database) and print CPU per request.")
  static final class Load implements Callable<Integer> {
    @Option(names = "--frontends", split = ",", description = "Frontend endpoints, tcp://host:port[,...].")
    List<String> frontends;

    @Option(names = "--direct", split = ",",
        description = "Instead of frontends: call the one-function graphs' procedures at this database, host:port.")
    List<String> direct;

    @Option(names = "--workload", defaultValue = "counter", description = "Workload (default ${DEFAULT-VALUE}).")
    String workload;

    @Option(names = "--rate", required = true, description = "Offered requests per second.")
    double rate;

    @Option(names = "--seconds", defaultValue = "20", description = "Measured seconds (default ${DEFAULT-VALUE}).")
    int seconds;

    @Option(names = "--warmup", defaultValue = "10", description = "Unmeasured seconds first (default ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--process", split = ",",
        description = "Processes whose CPU to read, NAME=PID[,NAME=PID...] (this one is always read, as 'load').")
    Map<String, Long> processes = new LinkedHashMap<>();

    @Override
    public Integer call() throws Exception {
      if ((frontends == null) == (direct == null)) {
        throw new CommandLine.ParameterException(new CommandLine(this), "give --frontends or --direct, not both");
      }
      Workload w = Workloads.byName(workload);
      List<AutoCloseable> resources = new ArrayList<>();
      try {
        Function<Request, CompletableFuture<?>> send = frontends != null ? viaFrontends(resources) : direct(w, resources);
        OpenLoop.run(w, send, rate, new OpenLoop.Settings(Duration.ofSeconds(warmup), Duration.ofSeconds(1),
            OpenLoop.Arrivals.UNIFORM, 5_000, Duration.ofSeconds(10), false), 0);
        Map<String, Long> pids = new LinkedHashMap<>(processes);
        pids.put("load", ProcessHandle.current().pid());
        Map<String, Long> before = cpuTicks(pids);
        long start = System.nanoTime();
        OpenLoop.Point p = OpenLoop.run(w, send, rate, new OpenLoop.Settings(Duration.ZERO,
            Duration.ofSeconds(seconds), OpenLoop.Arrivals.UNIFORM, 5_000, Duration.ofSeconds(10), false), 1);
        double elapsed = (System.nanoTime() - start) / 1e9;
        Map<String, Long> after = cpuTicks(pids);
        long completed = p.all().count();
        System.out.printf(Locale.ROOT, "capacity load: offered %.0f/s, achieved %.0f/s, p50 %.2f ms, p99 %.2f ms, "
            + "errors %d%s%n", p.offered(), p.achieved(), p.all().p50Ms(), p.all().p99Ms(), p.errors(),
            p.firstError() == null ? "" : " (first: " + p.firstError() + ")");
        System.out.printf(Locale.ROOT, "%-12s %8s %12s%n", "process", "cpu %", "cpu us/req");
        double total = 0;
        for (String name : pids.keySet()) {
          double cpuSeconds = (after.get(name) - before.get(name)) / (double) TICKS_PER_SECOND;
          total += cpuSeconds;
          System.out.printf(Locale.ROOT, "%-12s %8.1f %12.1f%n", name, 100 * cpuSeconds / elapsed,
              1e6 * cpuSeconds / Math.max(1, completed));
        }
        System.out.printf(Locale.ROOT, "%-12s %8.1f %12.1f%n", "all", 100 * total / elapsed,
            1e6 * total / Math.max(1, completed));
        return p.errors() == 0 ? 0 : 1;
      } finally {
        for (AutoCloseable r : resources) {
          r.close();
        }
      }
    }

    private Function<Request, CompletableFuture<?>> viaFrontends(List<AutoCloseable> resources) {
      ApiaryClient client = ApiaryClient.connect(ClientConfig.of(frontends.toArray(String[]::new))
          .withAttemptTimeout(Duration.ofSeconds(60)).withMaxAttempts(1));
      resources.add(client);
      return r -> client.invokeAsync(r.graph(), r.key(), r.args());
    }

    private Function<Request, CompletableFuture<?>> direct(Workload w, List<AutoCloseable> resources) {
      ApiaryDatabase db = ApiaryDatabase.open(DatabaseConfig.external(direct.toArray(String[]::new)));
      resources.add(db);
      GraphCatalog catalog = new GraphCatalog(db, Duration.ZERO);
      FunctionInvoker invoker = new FunctionInvoker(db, catalog.functions());
      Map<String, String> firstFunction = new LinkedHashMap<>();
      for (String name : catalog.graphNames()) {
        RegisteredGraph g = catalog.graph(name).orElseThrow();
        if (g.nodes().size() == 1) {
          firstFunction.put(g.name(), g.nodes().get(0).function());
        }
      }
      return r -> {
        String fn = firstFunction.get(r.graph());
        if (fn == null) {
          return CompletableFuture.failedFuture(new IllegalArgumentException("--direct calls one-function graphs "
              + "only; " + r.graph() + " is not one"));
        }
        return invoker.callAsync(fn, r.key(), Invocation.ofArguments(r.args()));
      };
    }
  }

  /** Clock ticks per second of /proc/PID/stat's times (USER_HZ, 100 on Linux). */
  private static final int TICKS_PER_SECOND = 100;

  private static Map<String, Long> cpuTicks(Map<String, Long> pids) throws java.io.IOException {
    Map<String, Long> ticks = new LinkedHashMap<>();
    for (Map.Entry<String, Long> e : pids.entrySet()) {
      String stat = Files.readString(Path.of("/proc/" + e.getValue() + "/stat"));
      String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      ticks.put(e.getKey(), Long.parseLong(fields[11]) + Long.parseLong(fields[12])); // utime, stime
    }
    return ticks;
  }
}
