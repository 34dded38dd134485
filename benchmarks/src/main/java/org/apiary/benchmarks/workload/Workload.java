package org.apiary.benchmarks.workload;

import java.util.List;
import java.util.random.RandomGenerator;
import org.apiary.Application;
import org.apiary.benchmarks.rpc.ServiceDefinition;
import org.apiary.database.ApiaryDatabase;

/**
 * A benchmark workload: an Apiary application (schema, functions, graphs), its data, its operation mix, and the
 * same logic written as microservices for the RPC-servers baseline (paper section 7.3, Table 1).
 */
public interface Workload {
  /** How much data to load. */
  enum Scale { QUICK, FULL }

  /** The command-line name: shop, hotel, retwis or counter. */
  String name();

  /** The application registered for every Apiary variant (and called directly by {@code raw-voltdb}). */
  Application application();

  /** Operation names, in the order {@link Request#operation()} indexes them. */
  List<String> operations();

  /**
   * The tables the workload writes: the ones whose writes provenance captures (at most two, see
   * docs/provenance.md).
   */
  List<String> writtenTables();

  /** Loads the initial data; {@code scale} bounds how long that takes. */
  void load(ApiaryDatabase db, Scale scale) throws InterruptedException;

  /**
   * The next operation, drawn by the workload's mix. Called from the generator's thread and, during the capacity
   * probe, from many threads at once, so implementations are thread-safe.
   */
  Request next(RandomGenerator random);

  /** Offered loads (requests per second) at which every variant's latency is reported side by side. */
  List<Double> fixedLoads(Scale scale);

  /**
   * The RPC-servers baseline: one-statement procedures (DDL) standing for the queries the services send, one
   * database round trip each.
   */
  String rpcProcedures();

  /** The RPC-servers baseline's services; the one named {@code frontend} receives the clients' requests. */
  List<ServiceDefinition> rpcServices();
}
