package org.apiary.frontend.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.ClusterConfig;
import org.apiary.database.LocalCluster;
import org.apiary.database.ProvenanceConfig;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.FrontendServer;
import org.apiary.frontend.Registrar;
import org.apiary.provenance.loader.LoaderServer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A database server process whose capture goes to a provenance loader run apart ({@link ProvenanceConfig#loader}):
 * the sink ends up with what in-process loading gives it, and with durable capture a loader killed by SIGKILL while
 * functions run loses nothing acknowledged and duplicates nothing once it is back.
 */
@Tag("database")
class LoaderApartTest {
  @TempDir
  Path dir;

  private static final String COUNTED = "'itemLifecycle'";

  /** Runs {@code n} item lifecycles (ids from {@code first}) through a frontend of a fresh one-server cluster. */
  private void runLifecycles(ProvenanceConfig provenance, Path data, long first, int n) throws Exception {
    ClusterConfig config = ClusterConfig.of(1, 2, 0).withDataDirectory(data).withStartTimeout(Duration.ofSeconds(120))
        .withProvenance(provenance);
    try (LocalCluster cluster = LocalCluster.start(config);
         ApiaryDatabase db = ApiaryDatabase.open(cluster.config())) {
      Registrar.register(db, ItemsApp.APP);
      try (FrontendServer frontend = FrontendServer.start(db, FrontendConfig.defaults().withInvocationLog(false));
           ApiaryClient client = ApiaryClient.connect(ClientConfig.of(frontend.endpoint()))) {
        for (int i = 0; i < n; i++) {
          client.invoke("itemLifecycle", first + i, "item" + i);
        }
      }
    } // a clean stop: what the servers hold is loaded (or spilled, for their next start)
  }

  /** Per table of the sink (lower-case), its row count. */
  private static Map<String, Long> tableCounts(String url) throws Exception {
    Map<String, Long> counts = new TreeMap<>();
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
      List<String> tables = new ArrayList<>();
      try (ResultSet rs = s.executeQuery("SELECT table_name FROM information_schema.tables WHERE table_type = "
          + "'BASE TABLE'")) {
        while (rs.next()) {
          tables.add(rs.getString(1).toLowerCase(java.util.Locale.ROOT));
        }
      }
      for (String table : tables) {
        try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM " + table)) {
          rs.next();
          counts.put(table, rs.getLong(1));
        }
      }
    }
    return counts;
  }

  private static List<String> events(String url) throws Exception {
    List<String> events = new ArrayList<>();
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
         ResultSet rs = s.executeQuery("SELECT id, event_type, name, qty FROM itemsEvents ORDER BY id, event_type, "
             + "name, qty")) {
      while (rs.next()) {
        events.add(rs.getLong(1) + " " + rs.getString(2) + " " + rs.getString(3) + " " + rs.getObject(4));
      }
    }
    return events;
  }

  private static long scalar(String url, String sql) throws Exception {
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
         ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  @Test
  void captureThroughALoaderApartEqualsInProcessLoading() throws Exception {
    int n = 30;
    String inProcess = "jdbc:duckdb:" + dir.resolve("in-process.duckdb");
    String apart = "jdbc:duckdb:" + dir.resolve("apart.duckdb");
    runLifecycles(ProvenanceConfig.sink(inProcess).withSpillDirectory(dir.resolve("spill-in")), dir.resolve("db-in"),
        9000, n);
    try (LoaderServer loader = LoaderServer.start(LoaderServer.Settings.of(apart, new Properties(),
        new InetSocketAddress("127.0.0.1", 0)))) {
      runLifecycles(ProvenanceConfig.loader(loader.address(), apart).withSpillDirectory(dir.resolve("spill-apart")),
          dir.resolve("db-apart"), 9000, n);
      assertTrue(loader.stats().rowsLoaded() > 0, "rows came through the loader: " + loader.stats());
    }
    Map<String, Long> expected = tableCounts(inProcess);
    assertEquals(2L * n, scalar(inProcess, "SELECT COUNT(*) FROM FunctionInvocations WHERE graph_id = " + COUNTED));
    assertEquals(4L * n, expected.get("itemsevents"), "a read and three writes per lifecycle");
    assertEquals(expected, tableCounts(apart), "the same tables with the same counts");
    assertEquals(events(inProcess), events(apart), "the same events");
  }

  private static int freePort() throws Exception {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  /** A loader in a process of its own on {@code port}, once it listens. */
  private Process startLoaderProcess(String sinkUrl, int port, String secret) throws Exception {
    Path log = Files.createTempFile(dir, "loader-", ".log");
    Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), LoaderChild.class.getName(), sinkUrl, String.valueOf(port), secret)
        .redirectError(log.toFile()).start();
    BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      String line = out.readLine(); // the child prints one line, or exits (null)
      if (line == null) {
        break;
      }
      if (line.equals("listening " + port)) {
        return process;
      }
    }
    process.destroyForcibly();
    throw new AssertionError("the loader process did not start: " + Files.readString(log));
  }

  /** Stops a loader process cleanly: closing its input ends it. */
  private static void stopLoaderProcess(Process process) throws Exception {
    process.getOutputStream().close();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError("the loader process did not stop within 30 s");
    }
  }

  @Test
  void durableCaptureLosesAndDuplicatesNothingWhenTheLoaderIsKilled() throws Exception {
    String sink = "jdbc:duckdb:" + dir.resolve("killed.duckdb");
    int port = freePort();
    String secret = "secret-" + System.nanoTime();
    Process loader = startLoaderProcess(sink, port, secret);
    AtomicLong acknowledged = new AtomicLong();
    AtomicBoolean stop = new AtomicBoolean();
    List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
    ClusterConfig config = ClusterConfig.of(1, 2, 0).withDataDirectory(dir.resolve("db"))
        .withStartTimeout(Duration.ofSeconds(120))
        .withProvenance(ProvenanceConfig.loader("127.0.0.1:" + port, sink).withLoaderSecret(secret)
            .withDurableCapture(true)
            .withSpillDirectory(dir.resolve("spill")));
    try (LocalCluster cluster = LocalCluster.start(config);
         ApiaryDatabase db = ApiaryDatabase.open(cluster.config())) {
      Registrar.register(db, ItemsApp.APP);
      try (FrontendServer frontend = FrontendServer.start(db, FrontendConfig.defaults().withInvocationLog(false));
           ApiaryClient client = ApiaryClient.connect(ClientConfig.of(frontend.endpoint()))) {
        Thread calls = new Thread(() -> {
          for (long id = 20_000; !stop.get(); id++) {
            try {
              client.invoke("itemLifecycle", id, "item" + id);
              acknowledged.incrementAndGet();
            } catch (RuntimeException e) {
              failures.add(e);
              return;
            }
          }
        }, "lifecycles");
        calls.start();
        awaitAcknowledged(acknowledged, 40);
        loader.destroyForcibly(); // SIGKILL, mid-stream
        assertTrue(loader.waitFor(30, TimeUnit.SECONDS), "the loader died");
        long atKill = acknowledged.get();
        awaitAcknowledged(acknowledged, atKill + 60); // functions go on; their capture waits on the servers' disk
        // The server's own report (apiary status reads it): loads through the loader fail, rows wait on its disk.
        org.apiary.runtime.provenance.BacklogReport away = awaitOutageReport(dir.resolve("spill"));
        assertTrue(away.rowsOnDisk() > 0 && away.lastError().contains("loader"), away.toString());
        loader = startLoaderProcess(sink, port, secret);
        awaitAcknowledged(acknowledged, acknowledged.get() + 40);
        stop.set(true);
        calls.join(TimeUnit.SECONDS.toMillis(60));
        assertEquals(List.of(), failures, "every call was answered");
      }
    } finally {
      stop.set(true);
    }
    stopLoaderProcess(loader); // after the servers' clean stop loaded everything through it
    long n = acknowledged.get();
    assertTrue(n >= 140, "calls ran before, during and after the outage: " + n);
    assertEquals(2 * n, scalar(sink, "SELECT COUNT(*) FROM FunctionInvocations WHERE graph_id = " + COUNTED),
        "every acknowledged execution, once");
    assertEquals(2 * n, scalar(sink, "SELECT COUNT(DISTINCT exec_id) FROM FunctionInvocations "
        + "WHERE graph_id = " + COUNTED));
    assertEquals(n, scalar(sink, "SELECT COUNT(*) FROM itemsEvents WHERE event_type = 'read'"), "every read, once");
    assertEquals(3 * n, scalar(sink, "SELECT COUNT(*) FROM itemsEvents WHERE event_type <> 'read'"),
        "every write, once");
    assertEquals(4 * n, scalar(sink, "SELECT COUNT(*) FROM (SELECT DISTINCT exec_id, partition_id, event_type, "
        + "event_seq FROM itemsEvents)"), "no event twice");
  }

  /** The server's backlog report once it says the loader did not take its last load. */
  private static org.apiary.runtime.provenance.BacklogReport awaitOutageReport(Path spill) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    List<org.apiary.runtime.provenance.BacklogReport> reports = List.of();
    while (System.nanoTime() < deadline) {
      reports = org.apiary.runtime.provenance.BacklogReport.readAll(spill);
      for (org.apiary.runtime.provenance.BacklogReport r : reports) {
        if (Boolean.FALSE.equals(r.sinkReachable())) {
          return r;
        }
      }
      Thread.sleep(200);
    }
    throw new AssertionError("no backlog report says the loader is unreachable: " + reports);
  }

  private static void awaitAcknowledged(AtomicLong acknowledged, long atLeast) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (acknowledged.get() < atLeast) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("only " + acknowledged.get() + " calls answered, waited for " + atLeast);
      }
      Thread.sleep(50);
    }
  }
}
