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
 * node's admin port. Every node's also writes its journal's status to its root
 * ({@link org.apiary.runtime.journal.JournalStatusReport}), for {@code apiary status}.
 */
final class NodeCheckpointer implements Runnable {
  private static final System.Logger LOG = System.getLogger(NodeCheckpointer.class.getName());
  private static final long POLL_MS = 20;

  private final Duration interval;
  private final DatabaseLogin login;
  private final java.nio.file.Path root;
  private Client admin;
  private long lastReport;
  private String lastReportFailure;

  NodeCheckpointer(Duration interval, DatabaseLogin login, java.nio.file.Path root) {
    this.interval = interval;
    this.login = login;
    this.root = root;
  }

  /** Writes the journal's status every {@code JournalStatusReport.INTERVAL}; a failure is said once until it changes. */
  private void report(ServerJournal journal) {
    if (System.nanoTime() - lastReport < org.apiary.runtime.journal.JournalStatusReport.INTERVAL.toNanos()) {
      return;
    }
    lastReport = System.nanoTime();
    try {
      org.apiary.runtime.journal.JournalStatusReport.of(journal).ifPresent(r -> r.writeTo(root));
      lastReportFailure = null;
    } catch (java.io.UncheckedIOException e) {
      if (!String.valueOf(e.getMessage()).equals(lastReportFailure)) {
        lastReportFailure = String.valueOf(e.getMessage());
        LOG.log(System.Logger.Level.WARNING, e.getMessage() + " (said again only if it changes)");
      }
    }
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
      report(journal);
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
