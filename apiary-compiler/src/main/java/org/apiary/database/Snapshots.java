package org.apiary.database;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.apiary.DatabaseException;
import org.voltdb.VoltTable;
import org.voltdb.client.Client;
import org.voltdb.client.ClientResponse;
import org.voltdb.client.ProcCallException;

/**
 * Durability on VoltDB Community Edition's own mechanisms (it has no command log): automatic snapshots declared in
 * the deployment, a snapshot when Apiary stops the database cleanly, and VoltDB's restore of the newest complete
 * snapshot when a server starts ({@code probe}) on an initialized root that holds snapshots. Verified on 9.3.2: a
 * {@code probe} start restores by itself from {@code voltdbroot/snapshots}, the newest complete snapshot whatever its
 * nonce, so Apiary restores nothing explicitly.
 */
final class Snapshots {
  /** The nonce prefix of automatic snapshots. */
  static final String AUTOMATIC_PREFIX = "apiary";
  /** Automatic snapshots kept: the newest, and one more in case the newest was cut short by a crash. */
  static final int RETAINED = 2;
  /** The nonce prefix of the snapshot taken on a clean stop (VoltDB's retention does not cover it; Apiary does). */
  static final String STOP_PREFIX = "apiary_stop_";

  private Snapshots() {}

  /** The deployment element for automatic snapshots every {@code interval}. */
  static String deploymentElement(Duration interval) {
    DatabaseConfig.checkSnapshotInterval(interval);
    return "  <snapshot prefix=\"" + AUTOMATIC_PREFIX + "\" frequency=\"" + interval.toSeconds() + "s\" retain=\""
        + RETAINED + "\" enabled=\"true\"/>\n";
  }

  /** Whether {@code root} (the directory given to {@code voltdb initialize voltdbroot}) has been initialized. */
  static boolean isInitialized(Path root) {
    return Files.exists(root.resolve("voltdbroot").resolve(".initialized"));
  }

  /** Where the servers of {@code root} write their snapshots. */
  static Path snapshotDirectory(Path root) {
    return root.resolve("voltdbroot").resolve("snapshots");
  }

  /** The number of sites (partitions on this host) an initialized root was set up with, or -1 if it does not say. */
  static int initializedSites(Path root) {
    Path paths = root.resolve("voltdbroot").resolve("config").resolve("path.properties");
    Properties p = new Properties();
    try (var in = Files.newInputStream(paths)) {
      p.load(in);
    } catch (IOException e) {
      throw new DatabaseException("cannot read " + paths + ": " + e.getMessage(), e);
    }
    String sites = p.getProperty("org.voltdb.local_sites_count");
    return sites == null ? -1 : Integer.parseInt(sites.strip());
  }

  /**
   * Takes the snapshot of a clean stop through the servers' admin ports ({@code @Pause} is refused on client ports):
   * pauses the database (client writes are refused from here on, so nothing commits after the snapshot), saves a
   * blocking snapshot into every server's snapshot directory and checks that every site wrote its part; then, if
   * {@code shutdown}, asks the servers to shut down (without waiting: they exit without answering).
   *
   * @param adminAddresses {@code host:port} admin addresses of the live servers
   * @param login the administrator's login where the database's security is on, else {@code null}
   * @return the snapshot's nonce
   * @throws DatabaseException if the database could not be reached or paused, or any part of the snapshot failed
   */
  static String saveForStop(List<String> adminAddresses, Duration connectTimeout, Duration callTimeout,
                            boolean shutdown, DatabaseLogin login) {
    Client client = ApiaryDatabase.connect(adminAddresses, connectTimeout, callTimeout, login);
    try {
      call(client, "pausing the database before its stop snapshot", "@Pause");
      drainExport(client, callTimeout);
      String nonce = STOP_PREFIX + System.currentTimeMillis();
      VoltTable result = call(client, "the stop snapshot", "@SnapshotSave",
          "{nonce:\"" + nonce + "\",block:true,format:\"native\"}").getResults()[0];
      StringBuilder failures = new StringBuilder();
      while (result.advanceRow()) {
        if (!"SUCCESS".equals(result.getString("RESULT"))) {
          failures.append("\n  host ").append(result.getLong("HOST_ID")).append(": ")
              .append(result.getString("RESULT")).append(' ').append(result.getString("ERR_MSG"));
        }
      }
      if (failures.length() > 0) {
        throw new DatabaseException("the stop snapshot " + nonce + " failed; the database is stopped without it "
            + "and will restart from its last automatic snapshot:" + failures);
      }
      if (shutdown) {
        shutdown(client, callTimeout);
      }
      return nonce;
    } finally {
      try {
        client.close();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Asks the servers at {@code adminAddresses} to shut down, without a snapshot (see {@link #shutdown(Client, Duration)}). */
  static void shutdown(List<String> adminAddresses, Duration timeout, DatabaseLogin login) {
    Client client = ApiaryDatabase.connect(adminAddresses, timeout, timeout, login);
    try {
      shutdown(client, timeout);
    } finally {
      try {
        client.close();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Asks the servers to shut down and waits, at most {@code callTimeout}, for the connections they drop as they exit.
   * The request's answer is the lost connection; since a client that reconnects need not pass that on to the
   * request's callback, the wait also ends once the client has no connection left.
   */
  private static void shutdown(Client client, Duration callTimeout) {
    // Waiting keeps close() from racing the request out of the client's queue, which would leave the servers running.
    CompletableFuture<ClientResponse> answered = new CompletableFuture<>();
    try {
      client.callProcedure(answered::complete, "@Shutdown");
    } catch (IOException e) {
      throw new DatabaseException("could not ask VoltDB to shut down: " + e.getMessage(), e);
    }
    long deadline = System.nanoTime() + callTimeout.toNanos();
    try {
      while (true) {
        try {
          answered.get(200, TimeUnit.MILLISECONDS);
          return;
        } catch (TimeoutException e) {
          if (client.getConnectedHostList().isEmpty() || System.nanoTime() > deadline) {
            // Gone, or no answer within the bound: the caller waits for the processes to exit, and stops them if not.
            return;
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      throw new IllegalStateException("the @Shutdown callback never completes exceptionally", e);
    }
  }

  /** Deletes the stop snapshots in {@code directory} other than {@code keep}'s; the server must be stopped. */
  static void deleteOtherStopSnapshots(Path directory, String keep) {
    if (!Files.isDirectory(directory)) {
      return;
    }
    try (Stream<Path> files = Files.list(directory)) {
      List<Path> old = files.filter(f -> {
        String name = f.getFileName().toString();
        return name.startsWith(STOP_PREFIX) && !name.startsWith(keep + "-") && !name.startsWith(keep + ".");
      }).toList();
      for (Path f : old) {
        Files.delete(f);
      }
    } catch (IOException e) {
      throw new DatabaseException("cannot delete old stop snapshots in " + directory + ": " + e.getMessage(), e);
    }
  }

  /**
   * Waits, at most {@code timeout}, until VoltDB holds no exported row that its connector has not taken (provenance's
   * captured writes); the database must be paused. VoltDB 9.3 treats every exported row a restored snapshot covers as
   * acknowledged and deletes it unseen at the next start ({@code ExportDataSource.resetStateInRejoinOrRecover}), so a
   * stop snapshot taken with rows still pending would lose their events. The connector takes a block by loading it
   * or, if the sink is unreachable, by writing it to the server's spill files, so this wait is short either way.
   * {@code @Statistics} answers from a cache, and rows still in the execution engine's buffers (pushed to the
   * connector every export flush interval, 100 ms) are not counted yet, so the count must be zero twice, a second
   * apart. ({@code @Quiesce}, which would push them at once, left the database unanswering after a restart in the same
   * process.)
   *
   * @return the rows still pending when the wait ended: 0, or what a stop at this moment loses (logged as a warning)
   */
  static long drainExport(Client client, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    int zeros = 0;
    long pending;
    while (true) {
      pending = 0;
      VoltTable stats = call(client, "reading export statistics", "@Statistics", "EXPORT", 0).getResults()[0];
      if (stats.getRowCount() == 0) {
        return 0; // nothing is exported (no provenance capture)
      }
      while (stats.advanceRow()) {
        pending += stats.getLong("TUPLE_PENDING");
      }
      zeros = pending == 0 ? zeros + 1 : 0;
      if (zeros == 2 || System.nanoTime() > deadline) {
        break;
      }
      try {
        Thread.sleep(pending == 0 ? 1_000 : 100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    if (pending > 0) {
      System.getLogger(Snapshots.class.getName()).log(System.Logger.Level.WARNING, pending + " captured writes were "
          + "still in VoltDB's export buffers after " + timeout.toSeconds() + " s; the stop snapshot goes ahead, and "
          + "their provenance events are lost (VoltDB drops exported rows a restored snapshot covers)");
    }
    return pending;
  }

  private static ClientResponse call(Client client, String what, String procedure, Object... params) {
    try {
      return client.callProcedure(procedure, params);
    } catch (ProcCallException e) {
      throw ApiaryDatabase.failure(what, e.getClientResponse(), e);
    } catch (IOException e) {
      throw new DatabaseException(what + ": cannot reach VoltDB: " + e.getMessage(), e);
    }
  }
}
