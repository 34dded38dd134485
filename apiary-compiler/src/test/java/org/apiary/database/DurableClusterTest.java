package org.apiary.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import org.apiary.runtime.FunctionInvoker;
import org.apiary.runtime.SystemSchema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A VoltDB server process started on a data directory keeps its data: after a clean stop every committed row is
 * there, and after a SIGKILL every row committed before the last completed automatic snapshot is. Apiary's system
 * schema and deployed functions come back with the data and work.
 */
class DurableClusterTest {
  private static ClusterConfig config(Path dir) {
    return ClusterConfig.of(1, 2, 0).withDataDirectory(dir).withSnapshotInterval(Duration.ofSeconds(2));
  }

  /**
   * One data directory through a clean stop and then a SIGKILL (each restart of a cluster costs tens of seconds, so
   * the two cases share their starts).
   */
  @Test
  void aCleanStopKeepsEveryCommittedRowAndASigkillAtMostWhatCameAfterTheLastSnapshot(@TempDir Path dir)
      throws Exception {
    try (LocalCluster cluster = LocalCluster.start(config(dir));
         ApiaryDatabase db = ApiaryDatabase.open(cluster.config())) {
      DurabilityFixture.write(DurabilityFixture.deploy(db), 0, 100);
      // A registered graph is a row of APIARY_GRAPHS (Registrar, in apiary-frontend, writes it); one stands in here.
      db.callAdmin("storing a graph", "@AdHoc", "INSERT INTO " + SystemSchema.GRAPHS
          + " (name, version, definition, registered_at) VALUES ('g', 1, x'7B7D', NOW)");
    }
    try (LocalCluster cluster = LocalCluster.start(config(dir));
         ApiaryDatabase db = ApiaryDatabase.open(cluster.config())) {
      assertEquals(100, DurabilityFixture.present(db, 0, 100), "after a clean stop every committed counter is there");
      FunctionInvoker invoker = DurabilityFixture.deploy(db); // the system schema is found, not created again
      assertEquals(SystemSchema.VERSION, DurabilityFixture.scalar(db,
          "SELECT MAX(version) FROM " + SystemSchema.VERSION_TABLE));
      assertEquals(1, DurabilityFixture.scalar(db, "SELECT COUNT(*) FROM " + SystemSchema.FUNCTIONS));
      assertEquals(1, DurabilityFixture.scalar(db, "SELECT COUNT(*) FROM " + SystemSchema.GRAPHS + " WHERE name = 'g'"),
          "the registered graph is there");
      assertEquals(7L, invoker.call("increment", 7L, 5L).value(Long.class) - 5, "the restored function runs");
      DurabilityFixture.write(invoker, 100, 110);
      DurabilityFixture.awaitAutomaticSnapshot(db, System.currentTimeMillis(), Duration.ofSeconds(30));
      DurabilityFixture.write(invoker, 200, 300);
      cluster.nodes().get(0).kill();
      assertFalse(cluster.nodes().get(0).isAlive());
    }
    try (LocalCluster cluster = LocalCluster.start(config(dir));
         ApiaryDatabase db = ApiaryDatabase.open(cluster.config())) {
      assertEquals(109, DurabilityFixture.present(db, 0, 110),
          "every counter committed before the last completed automatic snapshot is there (7 was incremented twice)");
      long later = DurabilityFixture.present(db, 200, 300);
      System.getLogger(getClass().getName()).log(System.Logger.Level.INFO,
          "after SIGKILL, " + later + " of the 100 counters written after the awaited snapshot survived");
      DurabilityFixture.deploy(db);
      DurabilityFixture.write(new FunctionInvoker(db, org.apiary.runtime.FunctionCatalog.load(db)), 1000, 1001);
      assertTrue(DurabilityFixture.present(db, 1000, 1001) == 1, "the restored database takes writes");
    }
    try (var files = java.nio.file.Files.list(Snapshots.snapshotDirectory(dir.resolve("node0")))) {
      assertEquals(1, files.filter(f -> f.getFileName().toString().endsWith(".finished"))
          .filter(f -> f.getFileName().toString().startsWith(Snapshots.STOP_PREFIX)).count(),
          "only the newest stop snapshot is kept");
    }
  }
}
