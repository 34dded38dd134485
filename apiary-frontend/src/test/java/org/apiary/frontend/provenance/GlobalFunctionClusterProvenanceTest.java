package org.apiary.frontend.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.InvocationRequest;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.LocalCluster;
import org.apiary.database.ProvenanceConfig;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.FrontendServer;
import org.apiary.frontend.Registrar;
import org.apiary.provenance.PostgresTestSchema;
import org.apiary.provenance.ProvenanceSchema;
import org.apiary.runtime.FunctionCatalog;
import org.apiary.runtime.FunctionInvoker;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 41's check of a global function's writes, on the cluster the provenance drill runs (two server processes,
 * two sites each, kfactor 1: every partition has a replica on the other server, and the multi-partition coordinator
 * is on one of them): a global function updating one row on each of two partitions, five runs, and all ten update
 * events join the execution that made them, through the sink's {@code MultiPartitionPositions}, which the servers
 * add to a sink an earlier release created. The expected attribution is the calls this test made.
 */
@Tag("database")
class GlobalFunctionClusterProvenanceTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  @Test
  void everyWriteOfAGlobalFunctionJoinsItsExecutionOnAKSafeCluster() throws Exception {
    try (PostgresTestSchema pg = new PostgresTestSchema()) {
      createOlderSink(pg);
      try (LocalCluster cluster = LocalCluster.start(2, 2, 1,
               ProvenanceConfig.sink(pg.url()).withCredentials("postgres", null).withDurableCapture(true),
               Duration.ofSeconds(120));
           ApiaryDatabase db = ApiaryDatabase.open(cluster.config());
           FrontendServer frontend = FrontendServer.start(db, FrontendConfig.defaults());
           ApiaryClient client = ApiaryClient.connect(ClientConfig.of(frontend.endpoint()))) {
        Registrar.register(db, ItemsApp.APP);
        check(pg, db, client);
      }
    }
  }

  private static void check(PostgresTestSchema pg, ApiaryDatabase db, ApiaryClient client) throws Exception {
    // Ten items, so that both partitions hold some.
    FunctionInvoker invoker = new FunctionInvoker(db, FunctionCatalog.load(db));
    for (long k = 8100; k < 8110; k++) { // the function alone, not its graph (whose next function deletes the item)
      invoker.call("stock", k, "item");
    }
    assertEquals(10L, pg.awaitScalar("SELECT COUNT(*) FROM FunctionInvocations WHERE function_name = 'stock'",
        10, WAIT));
    List<String> keys = rows(pg, "SELECT MIN(partition_key) FROM FunctionInvocations WHERE function_name = 'stock' "
        + "GROUP BY partition_id ORDER BY 1");
    assertEquals(2, keys.size(), "items on both partitions: " + keys);
    long a = Long.parseLong(keys.get(0));
    long b = Long.parseLong(keys.get(1));
    for (int run = 0; run < 5; run++) {
      client.invoke(InvocationRequest.of("setTwo", null, List.of(a, b, 100L + run)).withId("inv-global-set-" + run));
    }
    String updates = "FROM itemsEvents e WHERE e.id IN (" + a + ", " + b + ") AND e.event_type = 'update' "
        + "AND e.qty >= 100";
    assertEquals(10L, pg.awaitScalar("SELECT COUNT(*) " + updates, 10, WAIT), "five runs, two updates each");
    assertEquals(5L, pg.awaitScalar("SELECT COUNT(*) FROM FunctionInvocations WHERE function_name = 'setTwo'", 5, WAIT));
    List<String> joined = rows(pg, "SELECT f.execution_id || '|' || e.id || '|' || e.qty " + updates.replace(
        "FROM itemsEvents e", "FROM itemsEvents e JOIN FunctionInvocations f ON f.exec_id = "
            + ProvenanceSchema.writerExecId("e")) + " ORDER BY f.execution_id, e.id");
    List<String> expected = new ArrayList<>();
    for (int run = 0; run < 5; run++) {
      expected.add("inv-global-set-" + run + "|" + a + "|" + (100 + run));
      expected.add("inv-global-set-" + run + "|" + b + "|" + (100 + run));
    }
    assertEquals(expected, joined, "each update event joins the execution that made it");
    assertEquals(List.of("old-1|ran"), rows(pg, "SELECT exec_id || '|' || mode FROM FunctionInvocations WHERE "
        + "execution_id = 'inv-old'"), "the older sink's rows are kept");
  }

  /**
   * A sink an earlier release wrote, before {@code MultiPartitionPositions}: its {@code FunctionInvocations}, created
   * with that release's DDL and holding a row. The servers' capture must add the new table to it.
   */
  private static void createOlderSink(PostgresTestSchema pg) throws Exception {
    try (Connection c = DriverManager.getConnection(pg.url(), PostgresTestSchema.props());
         Statement s = c.createStatement()) {
      s.execute("CREATE TABLE FunctionInvocations (event_time TIMESTAMP, exec_id TEXT, tx_id BIGINT, exec_seq BIGINT, "
          + "partition_id INTEGER, function_name TEXT, graph_id TEXT, execution_id TEXT, partition_key TEXT, "
          + "caller TEXT, latency_us BIGINT, purpose TEXT, caller_roles TEXT, mode TEXT, PRIMARY KEY (exec_id))");
      s.execute("INSERT INTO FunctionInvocations VALUES (TIMESTAMP '2026-11-29 09:00:00', 'old-1', 1, 0, 1, 'f', 'g', "
          + "'inv-old', '7', 'alice', 10, NULL, NULL, 'ran')");
    }
  }

  /** The first column of each row of {@code query} in the test's schema. */
  private static List<String> rows(PostgresTestSchema pg, String query) throws Exception {
    try (Connection c = DriverManager.getConnection(pg.url(), PostgresTestSchema.props());
         Statement s = c.createStatement(); ResultSet rs = s.executeQuery(query)) {
      List<String> rows = new ArrayList<>();
      while (rs.next()) {
        rows.add(rs.getString(1));
      }
      return rows;
    }
  }
}
