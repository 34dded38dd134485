package org.apiary.frontend.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.GraphResult;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.LocalCluster;
import org.apiary.database.ProvenanceConfig;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.FrontendServer;
import org.apiary.frontend.Registrar;
import org.apiary.provenance.PostgresTestSchema;
import org.apiary.provenance.ProvenanceQueries;
import org.apiary.provenance.TcpProxy;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Provenance from VoltDB server processes into the machine's PostgreSQL, through a proxy this test owns: the
 * scenario's events arrive exactly; then, with the proxy cut in the middle of a run, every event and every
 * function execution still arrives exactly once after it is restored; with durable capture, what a server killed
 * while the sink was down had captured is loaded from its spill files.
 */
@Tag("database")
class ProvenancePostgresTest {
  /**
   * Two servers from one deployment on one machine (so the same configured spill directory), capturing through the
   * proxy: the scenario's events arrive exactly; a run with the proxy cut in its middle arrives exactly once after it
   * is restored; then functions on either server all arrive, and each server spilled into a directory of its own.
   * (One cluster start serves what were two tests, one server through an outage and two servers without one.)
   */
  @Test
  void eventsArriveExactlyOnceThroughAnOutageAndFromBothServersOfOneDeployment() throws Exception {
    try (PostgresTestSchema pg = new PostgresTestSchema();
         TcpProxy proxy = new TcpProxy(5432);
         LocalCluster cluster = LocalCluster.start(2, 2, 0,
             ProvenanceConfig.sink(pg.urlThrough(proxy.port())).withCredentials("postgres", null),
             Duration.ofSeconds(120));
         ApiaryDatabase db = ApiaryDatabase.open(cluster.config())) {
      Registrar.register(db, ItemsApp.APP);
      try (FrontendServer frontend = FrontendServer.start(db, FrontendConfig.defaults());
           ApiaryClient client = ApiaryClient.connect(ClientConfig.of(frontend.endpoint()))) {
        client.invoke("itemLifecycle", 41L, "widget");
        assertEquals(4, pg.awaitScalar("SELECT COUNT(*) FROM itemsEvents WHERE id = 41", 4, Duration.ofSeconds(120)));
        assertEquals(List.of("insert|widget|1", "update|widget|5", "read|null|null", "delete|widget|5"),
            rows(pg, "SELECT event_type, name, qty FROM itemsEvents WHERE id = 41 ORDER BY "
                + ProvenanceQueries.EVENT_ORDER));

        int n = 400;
        int connectionsBeforeCut = -1;
        List<CompletableFuture<GraphResult>> calls = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          calls.add(client.invokeAsync("itemLifecycle", 1000L + i, "item" + i));
          if (i == n / 4) {
            connectionsBeforeCut = proxy.connectionsAccepted();
            proxy.cut();
          }
          if (i == n / 2) {
            Thread.sleep(2_000);
            proxy.restore();
          }
        }
        for (CompletableFuture<GraphResult> c : calls) {
          c.get(60, TimeUnit.SECONDS);
        }
        assertEquals(4L * n, pg.awaitScalar("SELECT COUNT(*) FROM itemsEvents WHERE id >= 1000", 4L * n,
            Duration.ofSeconds(120)));
        assertEquals(4L * n, pg.scalar("SELECT COUNT(*) FROM (SELECT DISTINCT exec_id, partition_id, event_type, event_seq "
            + "FROM itemsEvents WHERE id >= 1000) d"));
        assertEquals(2L * n, pg.awaitScalar("SELECT COUNT(*) FROM FunctionInvocations WHERE partition_key >= '1000'"
            + " AND LENGTH(partition_key) = 4", 2L * n, Duration.ofSeconds(120)));
        for (String type : List.of("insert", "update", "read", "delete")) {
          assertEquals((long) n, pg.scalar("SELECT COUNT(*) FROM itemsEvents WHERE id >= 1000 AND event_type = '"
              + type + "'"), type);
        }
        // Every invocation ended once, and its ending is in the sink once (issue 43), the outage notwithstanding.
        assertEquals(n + 1L, pg.awaitScalar("SELECT COUNT(*) FROM Invocations WHERE graph = 'itemLifecycle' AND "
            + "status = 'DONE' AND error IS NULL AND finished_at >= started_at AND attempts >= 1 AND traceparent IS NULL",
            n + 1L, Duration.ofSeconds(120)));
        assertEquals(n + 1L, pg.scalar("SELECT COUNT(DISTINCT invocation_id) FROM Invocations"));
        assertTrue(proxy.connectionsAccepted() > connectionsBeforeCut, "the sink connected again after the cut");

        // Both servers capture: keys spread over the four partitions, two on each server.
        int pairs = 40;
        List<CompletableFuture<GraphResult>> onEither = new ArrayList<>();
        for (int i = 0; i < pairs; i++) {
          onEither.add(client.invokeAsync("itemLifecycle", 7000L + i, "pair" + i));
        }
        for (CompletableFuture<GraphResult> c : onEither) {
          c.get(60, TimeUnit.SECONDS);
        }
        assertEquals(4L * pairs, pg.awaitScalar("SELECT COUNT(*) FROM itemsEvents WHERE id >= 7000 AND id < 8000",
            4L * pairs, Duration.ofSeconds(120)));
        assertEquals(2L * pairs, pg.awaitScalar("SELECT COUNT(*) FROM FunctionInvocations WHERE partition_key LIKE "
            + "'70%'", 2L * pairs, Duration.ofSeconds(120)));
      }
      try (var servers = java.nio.file.Files.list(cluster.directory().toPath().resolve("provenance-spill"))) {
        assertEquals(2, servers.count(), "a spill directory per server");
      }
    }
  }

  /**
   * Durable capture: with the sink cut off, a server executes functions and is then killed with SIGKILL; its
   * captured reads and executions were forced to disk before each transaction committed, so a spooler started on
   * its spill directory afterwards loads every one of them.
   */
  @Test
  void durableCaptureSurvivesAServerKilledWhileTheSinkIsDown() throws Exception {
    try (PostgresTestSchema pg = new PostgresTestSchema();
         TcpProxy proxy = new TcpProxy(5432);
         LocalCluster cluster = LocalCluster.start(1, 2, 0,
             ProvenanceConfig.sink(pg.urlThrough(proxy.port())).withCredentials("postgres", null)
                 .withDurableCapture(true),
             Duration.ofSeconds(120))) {
      int n = 50;
      try (ApiaryDatabase db = ApiaryDatabase.open(cluster.config())) {
        Registrar.register(db, ItemsApp.APP);
        proxy.cut();
        try (FrontendServer frontend = FrontendServer.start(db, FrontendConfig.defaults().withInvocationLog(false));
             ApiaryClient client = ApiaryClient.connect(ClientConfig.of(frontend.endpoint()))) {
          for (int i = 0; i < n; i++) {
            client.invoke("itemLifecycle", 5000L + i, "durable" + i);
          }
        }
        cluster.nodes().get(0).kill();
      }
      proxy.restore();
      assertEquals(0L, pg.scalar("SELECT COUNT(*) FROM FunctionInvocations WHERE graph_id = 'itemLifecycle' "
          + "AND partition_key LIKE '50%'"), "nothing reached the sink while it was cut off");
      java.nio.file.Path spill;
      try (var servers = java.nio.file.Files.list(cluster.directory().toPath().resolve("provenance-spill"))) {
        List<java.nio.file.Path> dirs = servers.toList();
        assertEquals(1, dirs.size(), "one spill directory per server: " + dirs);
        spill = dirs.get(0);
      }
      org.apiary.provenance.ProvenanceTable items = org.apiary.provenance.ProvenanceSchema.eventsTable("ITEMS",
          List.of(new org.apiary.provenance.ProvenanceColumn("id", org.apiary.provenance.ColumnType.BIGINT),
              new org.apiary.provenance.ProvenanceColumn("name", org.apiary.provenance.ColumnType.VARCHAR),
              new org.apiary.provenance.ProvenanceColumn("qty", org.apiary.provenance.ColumnType.BIGINT)),
          List.of("id"));
      try (org.apiary.provenance.ProvenanceSpooler recovered = org.apiary.provenance.ProvenanceSpooler.start(
          org.apiary.provenance.SpoolerConfig.defaults().withSpillDirectory(spill),
          org.apiary.provenance.ProvenanceSink.opener(pg.url(), PostgresTestSchema.props()))) {
        recovered.register(org.apiary.provenance.ProvenanceSchema.functionInvocations());
        recovered.register(items);
        assertTrue(recovered.flush(Duration.ofSeconds(60)), "the spill files were loaded");
      }
      assertEquals(2L * n, pg.scalar("SELECT COUNT(*) FROM FunctionInvocations WHERE graph_id = 'itemLifecycle' "
          + "AND partition_key LIKE '50%'"));
      assertEquals((long) n, pg.scalar("SELECT COUNT(*) FROM itemsEvents WHERE event_type = 'read' AND id >= 5000"));
    }
  }



  private static List<String> rows(PostgresTestSchema pg, String sql) throws Exception {
    try (Connection c = DriverManager.getConnection(pg.url(), PostgresTestSchema.props());
         Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      List<String> out = new ArrayList<>();
      while (rs.next()) {
        out.add(rs.getString(1) + "|" + rs.getString(2) + "|" + rs.getString(3));
      }
      return out;
    }
  }
}
