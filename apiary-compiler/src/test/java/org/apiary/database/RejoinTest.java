package org.apiary.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apiary.runtime.FunctionInvoker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node of a running k-safe cluster that died comes back without a stop: it rejoins (issue 41, item 5) and holds
 * its replicas again. Three nodes with k-factor 1 and three partitions, each on two nodes: node 2 is killed, writes
 * go on, node 2 rejoins, then node 0 is killed. The partitions node 0 shared with node 2 are now on node 2 alone, so
 * every row is there only if the rejoined node took a current copy of them; a rejoin that did not would leave those
 * partitions with no replica and VoltDB would stop the cluster.
 */
class RejoinTest {
  @Test
  void aDeadNodeRejoinsAndHoldsItsReplicasAgain(@TempDir Path dir) throws Exception {
    ClusterConfig config = ClusterConfig.of(3, 2, 1).withDataDirectory(dir)
        .withStartTimeout(Duration.ofSeconds(180));
    try (LocalCluster cluster = LocalCluster.start(config)) {
      try (ApiaryDatabase db = ApiaryDatabase.open(cluster.config())) {
        DurabilityFixture.write(DurabilityFixture.deploy(db), 0, 60);
      }
      cluster.nodes().get(2).kill();
      awaitHosts(cluster, 2);
      try (ApiaryDatabase db = ApiaryDatabase.open(live(cluster))) {
        FunctionInvoker invoker = DurabilityFixture.deploy(db);
        DurabilityFixture.write(invoker, 60, 120);
        assertEquals(2, hosts(db), "the cluster runs on without node 2");
      }

      LocalCluster.Node rejoined = cluster.rejoin(2);
      assertTrue(rejoined.isAlive());
      awaitHosts(cluster, 3);
      try (ApiaryDatabase db = ApiaryDatabase.open(live(cluster))) {
        assertEquals(3, hosts(db), "node 2 is back in the cluster");
        DurabilityFixture.write(DurabilityFixture.deploy(db), 120, 150);
      }

      cluster.nodes().get(0).kill();
      assertFalse(cluster.nodes().get(0).isAlive());
      awaitHosts(cluster, 2);
      try (ApiaryDatabase db = ApiaryDatabase.open(live(cluster))) {
        assertEquals(150, DurabilityFixture.present(db, 0, 150),
            "every row, with node 0 gone: node 2's copies of the partitions it shared with node 0 were current");
        assertEquals(2, hosts(db));
      }
    }
  }

  /**
   * Waits (60 s at most) until the live nodes answer a read across every partition and count {@code expected}
   * hosts: after a node's death VoltDB drops the transactions in flight ("change in mastership") until its
   * partitions' replicas have taken over.
   */
  private static void awaitHosts(LocalCluster cluster, int expected) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    RuntimeException last = null;
    while (System.nanoTime() < deadline) {
      try (ApiaryDatabase db = ApiaryDatabase.open(live(cluster))) {
        db.callAdmin("reading every partition", "@AdHoc", "SELECT COUNT(*) FROM counters");
        if (hosts(db) == expected) {
          return;
        }
      } catch (RuntimeException e) {
        last = e;
      }
      Thread.sleep(500);
    }
    throw new AssertionError("the cluster did not settle on " + expected + " hosts within 60 s", last);
  }

  private static DatabaseConfig live(LocalCluster cluster) {
    return DatabaseConfig.external(cluster.nodes().stream().filter(LocalCluster.Node::isAlive)
        .map(LocalCluster.Node::clientAddress).toArray(String[]::new));
  }

  private static long hosts(ApiaryDatabase db) {
    org.voltdb.VoltTable t = db.callAdmin("reading the hosts", "@SystemInformation", "OVERVIEW").getResults()[0];
    java.util.Set<Long> hosts = new java.util.TreeSet<>();
    while (t.advanceRow()) {
      hosts.add(t.getLong("HOST_ID"));
    }
    return hosts.size();
  }
}
