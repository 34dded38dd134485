package org.apiary.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 45, finding 1: nothing VoltDB or Apiary writes in a data directory (the deployment VoltDB copies, with its
 * users' passwords; snapshots; logs) can be read by another local user, after start and after a snapshot, for the
 * embedded server and for every node of a local cluster. The data directory's parent is readable by everyone, as a
 * home directory is.
 */
class OwnerOnlyDataTest {
  @TempDir
  Path work;

  @Test
  void embeddedDataDirectoryIsOwnerOnly() throws Exception {
    assumeTrue(OtherUser.available(), "needs root and runuser");
    Path data = opened().resolve("data");
    try (ApiaryDatabase db = ApiaryDatabase.open(DatabaseConfig.embedded(1).withDataDirectory(data)
        .withUsers(DatabaseUsers.generate()).withSnapshotInterval(Duration.ofSeconds(1)))) {
      assertEquals(List.of(), OtherUser.readable(data), "readable by another user after start");
      awaitSnapshot(data);
      assertEquals(List.of(), OtherUser.readable(data), "readable by another user after a snapshot");
    }
  }

  @Test
  void clusterNodesAreOwnerOnly() throws Exception {
    assumeTrue(OtherUser.available(), "needs root and runuser");
    Path data = opened().resolve("cluster");
    try (LocalCluster cluster = LocalCluster.start(ClusterConfig.of(1, 1, 0).withDataDirectory(data)
        .withUsers(DatabaseUsers.generate()).withSnapshotInterval(Duration.ofSeconds(1)))) {
      awaitSnapshot(cluster.nodes().get(0).root());
      assertEquals(List.of(), OtherUser.readable(data), "readable by another user in a node's directory");
    }
  }

  /** The test's directory opened to everyone, and proof that the check sees what another user can read. */
  private Path opened() throws Exception {
    OtherUser.openUp(work);
    Path probe = Files.writeString(work.resolve("probe"), "readable");
    assertEquals(List.of(probe.toString()), OtherUser.readable(probe), "the check itself");
    Files.delete(probe);
    return work;
  }

  private static void awaitSnapshot(Path root) throws InterruptedException, java.io.IOException {
    Path snapshots = Snapshots.snapshotDirectory(root);
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (System.nanoTime() < deadline) {
      if (Files.isDirectory(snapshots)) {
        try (var files = Files.list(snapshots)) {
          if (files.anyMatch(f -> f.getFileName().toString().endsWith(".finished"))) {
            return;
          }
        }
      }
      Thread.sleep(200);
    }
    throw new AssertionError("no snapshot completed in " + snapshots + " within 60 s");
  }
}
