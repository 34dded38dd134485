package org.apiary.benchmarks.counter;

import java.util.List;
import java.util.Map;
import java.util.random.RandomGenerator;
import org.apiary.ApiaryFunction;
import org.apiary.Application;
import org.apiary.Graph;
import org.apiary.benchmarks.rpc.ServiceDefinition;
import org.apiary.benchmarks.workload.DataLoader;
import org.apiary.benchmarks.workload.Request;
import org.apiary.benchmarks.workload.Workload;
import org.apiary.database.ApiaryDatabase;
import org.voltdb.VoltTable;

/**
 * The counter microbenchmark (paper section 7.5, Figure 11): read a counter picked at random among 100,000 and
 * write it back incremented.
 */
public final class CounterWorkload implements Workload {
  public static final int COUNTERS = 100_000;

  static final String SCHEMA = """
      CREATE TABLE bench_counters (k BIGINT NOT NULL, v BIGINT NOT NULL, PRIMARY KEY (k));
      PARTITION TABLE bench_counters ON COLUMN k;
      """;

  static final Graph INCREMENT = Graph.named("increment").addLocalFunction("readIncrement", ReadIncrement.class)
      .addEdge(Graph.SOURCE, "readIncrement", ApiaryFunction.SOURCE, Long.class)
      .addEdge("readIncrement", Graph.SINK, ApiaryFunction.SINK);

  @Override
  public String name() {
    return "counter";
  }

  @Override
  public Application application() {
    return Application.of(SCHEMA, INCREMENT);
  }

  @Override
  public List<String> operations() {
    return List.of("increment");
  }

  @Override
  public List<String> writtenTables() {
    return List.of("bench_counters");
  }

  @Override
  public void load(ApiaryDatabase db, Scale scale) throws InterruptedException {
    DataLoader loader = new DataLoader(db);
    for (long k = 0; k < COUNTERS; k++) {
      loader.insert("bench_counters", k, 0L);
    }
    loader.finish();
  }

  @Override
  public Request next(RandomGenerator random) {
    return new Request(0, "increment", (long) random.nextInt(COUNTERS), 1L);
  }

  @Override
  public List<Double> fixedLoads(Scale scale) {
    return scale == Scale.QUICK ? List.of(500.0) : List.of(1_000.0, 5_000.0);
  }

  @Override
  public String rpcProcedures() {
    return """
        CREATE PROCEDURE rpc_counter_get PARTITION ON TABLE bench_counters COLUMN k PARAMETER 0
          AS SELECT k, v FROM bench_counters WHERE k = ?;
        CREATE PROCEDURE rpc_counter_put PARTITION ON TABLE bench_counters COLUMN k PARAMETER 1
          AS UPDATE bench_counters SET v = ? WHERE k = ?;
        """;
  }

  @Override
  public List<ServiceDefinition> rpcServices() {
    return List.of(
        new ServiceDefinition(ServiceDefinition.FRONTEND, Map.of(
            "increment", (ctx, args) -> ctx.call("counter", "increment", args.get(0).asLong()))),
        new ServiceDefinition("counter", Map.of("increment", (ctx, args) -> {
          long k = args.get(0).asLong();
          VoltTable row = ctx.query("rpc_counter_get", k);
          if (!row.advanceRow()) {
            throw new IllegalArgumentException("no counter " + k);
          }
          long v = row.getLong("v") + 1;
          ctx.query("rpc_counter_put", v, k);
          return v;
        })));
  }
}
