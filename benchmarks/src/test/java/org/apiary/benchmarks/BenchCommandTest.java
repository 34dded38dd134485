package org.apiary.benchmarks;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.apiary.internal.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The smoke run of {@code scripts/bench.sh WORKLOAD --quick}: every variant starts in its own process, serves its
 * load without a single failed request, and the JSON and plots are written. It checks that everything runs, never
 * how fast.
 */
class BenchCommandTest {
  private static final byte[] PNG_MAGIC = {(byte) 0x89, 'P', 'N', 'G'};

  @TempDir
  Path out;

  /**
   * {@code -Dapiary.test.full=true} runs every variant below; CI runs the short form, one process per code path that
   * no other variant in the list takes: the direct call, every guarantee with read capture, write-only capture, the
   * RPC servers, naive recording. Each variant costs a process with its own VoltDB, registration and data load (about
   * half a minute), so the short form leaves out variants that only switch parts of those paths off.
   */
  private static final boolean FULL = Boolean.getBoolean("apiary.test.full");

  @Test
  void counterQuickRunsEachCodePathWithoutErrors() throws Exception {
    JsonNode json = run("counter", FULL
        ? List.of("raw-voltdb", "apiary", "apiary-bare", "apiary-write-prov", "apiary-manual-log", "rpc-servers")
        : List.of("raw-voltdb", "apiary", "apiary-write-prov", "rpc-servers"));
    assertTrue(json.path("machine").path("cores").asInt() > 0, json.path("machine").toString());
    assertEquals(List.of("increment"), Json.MAPPER.convertValue(json.get("operations"), List.class));
  }

  @Test
  void shopQuickRunsTheBaselineAndBothWaysOfRecording() throws Exception {
    run("shop", FULL ? List.of("apiary", "apiary-naive-eo", "rpc-servers") : List.of("apiary-naive-eo"));
  }

  private JsonNode run(String workload, List<String> variants) throws Exception {
    int code = new CommandLine(new WorkloadBenchmark()).execute(workload, "--quick", "--seconds", "1",
        "--warmup", "0", "--out", out.toString(), "--variants", String.join(",", variants));
    if (code != 0) {
      // The temporary directory goes with the test: show the variant logs' ends here, so a CI failure says why.
      StringBuilder logs = new StringBuilder();
      try (var files = Files.list(out.resolve("logs"))) {
        for (Path log : (Iterable<Path>) files.sorted()::iterator) {
          List<String> lines = Files.readAllLines(log);
          logs.append("\n== ").append(log.getFileName()).append('\n')
              .append(String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size())));
        }
      }
      assertEquals(0, code, "the benchmark failed; the variant logs end:" + logs);
    }
    JsonNode json = Json.MAPPER.readTree(out.resolve(workload + ".json").toFile());
    assertEquals(0, json.get("failedVariants").size(), json.get("failedVariants").toString());
    for (String v : variants) {
      JsonNode variant = json.path("variants").path(v);
      assertTrue(variant.isObject(), "no result for " + v);
      JsonNode points = variant.get("sweep");
      assertTrue(points.size() >= 1, v + " measured no load point");
      for (JsonNode p : elements(variant.get("fixedLoads"), points)) {
        assertEquals(0, p.get("errors").asLong(), v + ": " + p.path("firstError").asText());
        assertTrue(p.path("all").path("count").asLong() > 0, v + " completed no measured request at " + p.get("offered"));
      }
    }
    for (String percentile : List.of("p50", "p99")) {
      byte[] png = Files.readAllBytes(out.resolve(workload + "-" + percentile + ".png"));
      assertArrayEquals(PNG_MAGIC, Arrays.copyOf(png, 4));
    }
    return json;
  }

  private static List<JsonNode> elements(JsonNode... arrays) {
    List<JsonNode> all = new java.util.ArrayList<>();
    for (JsonNode a : arrays) {
      a.forEach(all::add);
    }
    return all;
  }
}
