package org.apiary.provenance.loader;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.function.Supplier;
import org.apiary.provenance.BatchSink;
import org.apiary.provenance.ProvenanceRow;
import org.apiary.provenance.ProvenanceSchema;
import org.apiary.provenance.ProvenanceSink;
import org.apiary.provenance.ProvenanceSpooler;
import org.apiary.provenance.ProvenanceTable;
import org.apiary.provenance.SpoolerConfig;

/**
 * A measurement, not a test: offers {@code ROWS} FunctionInvocations rows (10 per offer, as executions come; at a
 * held rate with {@code -Drate=ROWS_PER_SECOND}) to a
 * spooler loading into DuckDB in this process, then to one loading through a loader in a process of its own, and
 * prints each run's rows per second and CPU per row of this ("the database server's") process and of the loader's.
 * {@code LoaderThroughput measure DIR ROWS}; {@code LoaderThroughput serve URL PORT} is the loader process.
 */
public final class LoaderThroughput {
  private LoaderThroughput() {}

  /** The held rate rows are offered at (system property {@code rate}); 0: as fast as the spooler takes them. */
  private static final long RATE_ROWS_PER_SECOND = Long.getLong("rate", 0);

  public static void main(String[] args) throws Exception {
    if (args[0].equals("serve")) {
      try (LoaderServer server = LoaderServer.start(LoaderServer.Settings.of(args[1], new Properties(),
          new InetSocketAddress("127.0.0.1", Integer.parseInt(args[2]))))) {
        System.out.println("listening " + server.port());
        System.out.flush();
        while (System.in.read() >= 0) {
          // until the parent closes our input
        }
      }
      return;
    }
    Path dir = Path.of(args[1]);
    int rows = Integer.parseInt(args[2]);
    Files.createDirectories(dir);
    // Warm-up of both paths (JIT), then the measured runs.
    run("discarding warm-up", dir.resolve("w0"), rows, "discard");
    run("discarding (the spooler alone: the floor)", dir.resolve("z"), rows, "discard");
    run("in-process warm-up", dir.resolve("w1"), rows, null);
    run("in-process", dir.resolve("a"), rows, null);
    int port;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Process loader = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), LoaderThroughput.class.getName(), "serve",
        "jdbc:duckdb:" + dir.resolve("apart.duckdb"), String.valueOf(port)).redirectErrorStream(true).start();
    BufferedReader out = new BufferedReader(new InputStreamReader(loader.getInputStream(), StandardCharsets.UTF_8));
    String line;
    while ((line = out.readLine()) != null && !line.startsWith("listening")) {
      // the loader's log lines before it listens
    }
    try {
      run("apart warm-up", dir.resolve("w2"), rows, "127.0.0.1:" + port);
      Duration loaderBefore = loader.toHandle().info().totalCpuDuration().orElseThrow();
      run("apart", dir.resolve("b"), rows, "127.0.0.1:" + port);
      Duration loaderCpu = loader.toHandle().info().totalCpuDuration().orElseThrow().minus(loaderBefore);
      System.out.printf("apart: loader process %.2f us CPU per row%n", loaderCpu.toNanos() / 1000.0 / rows);
    } finally {
      loader.getOutputStream().close();
      loader.waitFor(30, java.util.concurrent.TimeUnit.SECONDS);
      loader.destroyForcibly();
    }
  }

  private static void run(String name, Path dir, int count, String loader) throws Exception {
    ProvenanceTable table = ProvenanceSchema.functionInvocations();
    Supplier<? extends BatchSink> sinks = loader == null
        ? ProvenanceSink.opener("jdbc:duckdb:" + dir.resolve("in.duckdb"), new Properties())
        : loader.equals("discard") ? () -> new BatchSink() {
          @Override
          public String url() {
            return "discard";
          }

          @Override
          public void ensureTable(ProvenanceTable t) {}

          @Override
          public int loadBatch(ProvenanceTable t, List<ProvenanceRow> r, boolean fresh) {
            return r.size();
          }

          @Override
          public void close() {}
        }
        : LoaderClient.opener(loader, "throughput-" + dir, null, Duration.ofSeconds(60));
    List<List<ProvenanceRow>> offers = new ArrayList<>();
    String prefix = dir.getFileName().toString();
    for (int i = 0; i < count; i += 10) {
      List<ProvenanceRow> offer = new ArrayList<>(10);
      for (int j = i; j < Math.min(count, i + 10); j++) {
        offer.add(new ProvenanceRow(table.name(), Arrays.asList(Instant.now(), prefix + "-" + j, (long) j, 0L,
            j % 8, "increment", "counter", "inv-" + j, String.valueOf(j % 1000), "alice", 120L, null, null, "ran")));
      }
      offers.add(offer);
    }
    Files.createDirectories(dir);
    var os = (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
        .getOperatingSystemMXBean();
    var threads = java.lang.management.ManagementFactory.getThreadMXBean();
    long cpu0 = os.getProcessCpuTime();
    long main0 = threads.getCurrentThreadCpuTime();
    long t0 = System.nanoTime();
    try (ProvenanceSpooler spooler = ProvenanceSpooler.start(SpoolerConfig.defaults()
        .withSpillDirectory(dir.resolve("spill")), sinks)) {
      spooler.register(table);
      long started = System.nanoTime();
      long perOffer = RATE_ROWS_PER_SECOND <= 0 ? 0 : 10 * 1_000_000_000L / RATE_ROWS_PER_SECOND;
      for (int i = 0; i < offers.size(); i++) {
        long due = started + i * perOffer;
        long now;
        while ((now = System.nanoTime()) < due) {
          java.util.concurrent.locks.LockSupport.parkNanos(due - now);
        }
        spooler.offer(offers.get(i));
      }
      if (!spooler.flush(Duration.ofMinutes(5))) {
        throw new IllegalStateException(name + ": not flushed in 5 minutes: " + spooler.stats());
      }
      long wall = System.nanoTime() - t0;
      long cpu = os.getProcessCpuTime() - cpu0;
      long spoolerCpu = Thread.getAllStackTraces().keySet().stream()
          .filter(t -> t.getName().equals("apiary-provenance-spooler")).mapToLong(t -> threads.getThreadCpuTime(t.getId()))
          .sum();
      long offering = threads.getCurrentThreadCpuTime() - main0;
      System.out.printf("%s: %d rows in %.2f s = %.0f rows/s; this process %.2f us CPU per row, of which the "
          + "offering thread %.2f and the spooler's thread %.2f (spilled %d)%n", name, count, wall / 1e9,
          count / (wall / 1e9), cpu / 1000.0 / count, offering / 1000.0 / count, spoolerCpu / 1000.0 / count,
          spooler.stats().rowsSpilled());
    }
  }
}
