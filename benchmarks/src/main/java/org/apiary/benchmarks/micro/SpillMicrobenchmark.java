package org.apiary.benchmarks.micro;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import org.apiary.provenance.ProvenanceRow;
import org.apiary.provenance.ProvenanceSchema;
import org.apiary.provenance.ProvenanceSink;
import org.apiary.provenance.ProvenanceSpooler;
import org.apiary.provenance.SpoolerConfig;

/**
 * What spilling a provenance row costs: the spooler's public path with rows kept in memory against every row spilled
 * ({@code maxMemoryRows} 0, as when the loader has fallen behind or the sink is down). Rows are shaped like a counter
 * call's {@code FunctionInvocations} row and offered one execution at a time, as sites offer them, into a DuckDB
 * file. Per round and way, the offering thread's CPU per row (for spilled rows: encoding and appending them to the
 * spill file) and the spooler thread's (reading them back, for spilled rows, and loading them), until all are loaded.
 *
 * <pre>java -cp ... org.apiary.benchmarks.micro.SpillMicrobenchmark [rows per round] [rounds]</pre>
 */
public final class SpillMicrobenchmark {
  private SpillMicrobenchmark() {}

  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    System.out.printf(Locale.ROOT, "%d rows per round, offered one at a time; CPU µs per row%n", rows);
    System.out.printf(Locale.ROOT, "%-6s %-22s %12s %12s%n", "round", "way", "offering", "spooler");
    long seq = 0;
    for (int round = 1; round <= rounds; round++) {
      for (boolean spill : new boolean[] {false, true}) {
        Path dir = Files.createTempDirectory("spill-bench-");
        SpoolerConfig config = SpoolerConfig.defaults().withSpillDirectory(dir.resolve("spill"));
        if (spill) {
          config = config.withMaxMemoryRows(0);
        }
        try (ProvenanceSpooler spooler = ProvenanceSpooler.start(config,
            ProvenanceSink.opener("jdbc:duckdb:" + dir.resolve("p.duckdb"), new Properties()))) {
          spooler.register(ProvenanceSchema.functionInvocations());
          Thread loader = Thread.getAllStackTraces().keySet().stream()
              .filter(t -> t.getName().equals("apiary-provenance-spooler")).findFirst().orElseThrow();
          long loaderBefore = threads.getThreadCpuTime(loader.getId());
          long before = threads.getCurrentThreadCpuTime();
          for (int i = 0; i < rows; i++, seq++) {
            spooler.offer(List.of(new ProvenanceRow(ProvenanceSchema.FUNCTION_INVOCATIONS, Arrays.asList(
                Instant.ofEpochSecond(1_700_000_000L, seq * 1_000), Long.toString(3_619_632_746_577_920L + seq),
                3_619_632_746_577_920L + seq, 0L, (int) (seq % 2), "readIncrement", "increment",
                "01a21f55-9c64-7013-9edb-" + (100_000_000_000L + seq), Long.toString(seq % 10_000), null,
                40L + seq % 100, null, null, "ran"))));
          }
          long offering = threads.getCurrentThreadCpuTime() - before;
          if (!spooler.flush(Duration.ofMinutes(5))) {
            throw new IllegalStateException("the spooler did not load " + rows + " rows within 5 minutes");
          }
          long loading = threads.getThreadCpuTime(loader.getId()) - loaderBefore;
          System.out.printf(Locale.ROOT, "%-6d %-22s %12.2f %12.2f%n", round, spill ? "every row spilled" : "kept in memory",
              offering / 1e3 / rows, loading / 1e3 / rows);
        }
      }
    }
  }
}
