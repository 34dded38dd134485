package org.apiary.database;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apiary.runtime.journal.ServerJournal;
import org.voltdb.VoltDB;
import org.voltdb.client.Client;

/**
 * The checkpointer of a journaled cluster, in every node's JVM and active in the one with the lowest live host ID
 * (another takes over when that node dies): once recovery has opened the cluster, it checkpoints every snapshot
 * interval, at once after a catalog change (a deployment: the records after it cannot be replayed on an older
 * catalog), and when asked ({@link ClusterCheckpoints#request}). It reaches the cluster as a client of its own
 * node's admin port.
 */
final class NodeCheckpointer implements Runnable {
  private static final System.Logger LOG = System.getLogger(NodeCheckpointer.class.getName());
  private static final long POLL_MS = 20;

  private final Duration interval;
  private final DatabaseLogin login;
  private Client admin;

  NodeCheckpointer(Duration interval, DatabaseLogin login) {
    this.interval = interval;
    this.login = login;
  }

  @Override
  public void run() {
    long last = 0;
    int catalog = -1;
    String lastFailure = null;
    long lastFailureLogged = 0;
    while (true) {
      try {
        Thread.sleep(POLL_MS);
      } catch (InterruptedException e) {
        return;
      }
      ServerJournal journal = ServerJournal.current();
      if (journal == null || journal.writer() == null) {
        continue; // recovery has not finished
      }
      int now = ServerJournal.catalogVersion();
      if (catalog < 0) { // recovery's checkpoint holds the catalog as it is
        catalog = now;
        last = System.nanoTime();
        continue;
      }
      boolean requested = journal.takeCheckpointRequest();
      if (!requested && now == catalog && System.nanoTime() - last < interval.toNanos()) {
        continue;
      }
      if (!leads()) {
        last = System.nanoTime();
        catalog = now;
        continue;
      }
      try {
        ClusterCheckpoints.take(admin(), journal.writer().timeline(), false);
        last = System.nanoTime();
        catalog = now;
        lastFailure = null;
      } catch (RuntimeException e) {
        if (requested) {
          journal.control(ServerJournal.CHECKPOINT_REQUESTED, 0); // still wanted: try again
        }
        closeAdmin();
        boolean again = String.valueOf(e.getMessage()).equals(lastFailure);
        if (!again || System.nanoTime() - lastFailureLogged > TimeUnit.MINUTES.toNanos(1)) {
          lastFailure = String.valueOf(e.getMessage());
          lastFailureLogged = System.nanoTime();
          LOG.log(System.Logger.Level.WARNING, "a journal checkpoint failed (every node's journal keeps its records "
              + "since the last one, so nothing is lost; it is tried again): " + e.getMessage());
        }
      }
    }
  }

  /** Whether this node has the lowest live host ID. */
  private static boolean leads() {
    var messenger = VoltDB.instance().getHostMessenger();
    return messenger.getLiveHostIds().stream().mapToInt(Integer::intValue).min()
        .orElse(Integer.MAX_VALUE) == messenger.getHostId();
  }

  private Client admin() {
    if (admin == null) {
      VoltDB.Configuration c = VoltDB.instance().getConfig();
      String host = c.m_adminInterface == null || c.m_adminInterface.isEmpty() ? "127.0.0.1" : c.m_adminInterface;
      admin = ApiaryDatabase.connect(List.of(host + ":" + c.m_adminPort), Duration.ofSeconds(10), interval.plusMinutes(2),
          login);
    }
    return admin;
  }

  private void closeAdmin() {
    if (admin != null) {
      try {
        admin.close();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      admin = null;
    }
  }
}
