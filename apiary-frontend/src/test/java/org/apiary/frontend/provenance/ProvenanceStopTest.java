package org.apiary.frontend.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Duration;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.ClusterConfig;
import org.apiary.database.LocalCluster;
import org.apiary.database.ProvenanceConfig;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.FrontendServer;
import org.apiary.frontend.Registrar;
import org.apiary.provenance.PostgresTestSchema;
import org.apiary.provenance.TcpProxy;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A clean stop of a server process whose sink is unreachable keeps what it captured: the rows a function execution
 * offered (its reads and its {@code FunctionInvocations} row, held in memory with capture that is not durable) are
 * written to the server's spill files when it stops, and the next start on the same data directory loads them, and
 * the events of its writes, once the sink is back. Before, nothing closed the capture when a server stopped, and
 * those rows went with the process.
 */
@Tag("database")
class ProvenanceStopTest {
  @Test
  void aCleanStopSpillsWhatTheSinkHadNotTakenAndTheNextStartLoadsIt(@TempDir Path dir) throws Exception {
    int n = 40;
    try (PostgresTestSchema pg = new PostgresTestSchema(); TcpProxy proxy = new TcpProxy(5432)) {
      ClusterConfig config = ClusterConfig.of(1, 2, 0).withDataDirectory(dir.resolve("data"))
          .withStartTimeout(Duration.ofSeconds(120))
          .withProvenance(ProvenanceConfig.sink(pg.urlThrough(proxy.port())).withCredentials("postgres", null)
              .withSpillDirectory(dir.resolve("spill")));
      try (LocalCluster cluster = LocalCluster.start(config);
           ApiaryDatabase db = ApiaryDatabase.open(cluster.config())) {
        Registrar.register(db, ItemsApp.APP);
        proxy.cut();
        try (FrontendServer frontend = FrontendServer.start(db, FrontendConfig.defaults().withInvocationLog(false));
             ApiaryClient client = ApiaryClient.connect(ClientConfig.of(frontend.endpoint()))) {
          for (int i = 0; i < n; i++) {
            client.invoke("itemLifecycle", 7000L + i, "kept" + i);
          }
        }
      }
      assertEquals(0L, pg.scalar("SELECT COUNT(*) FROM FunctionInvocations WHERE graph_id = 'itemLifecycle' "
          + "AND partition_key LIKE '70%'"), "nothing reached the sink while it was cut off");
      proxy.restore();
      try (LocalCluster cluster = LocalCluster.start(config)) {
        assertEquals(2L * n, pg.awaitScalar("SELECT COUNT(*) FROM FunctionInvocations WHERE graph_id = "
            + "'itemLifecycle' AND partition_key LIKE '70%'", 2L * n, Duration.ofSeconds(60)),
            "every function execution arrives");
        assertEquals((long) n, pg.awaitScalar("SELECT COUNT(*) FROM itemsEvents WHERE event_type = 'read' "
            + "AND id >= 7000", n, Duration.ofSeconds(60)), "every read arrives");
        assertEquals(3L * n, pg.awaitScalar("SELECT COUNT(*) FROM itemsEvents WHERE event_type <> 'read' "
            + "AND id >= 7000", 3L * n, Duration.ofSeconds(60)), "every write arrives");
      }
    }
  }


}
