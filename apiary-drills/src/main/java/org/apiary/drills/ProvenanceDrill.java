package org.apiary.drills;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apiary.FunctionFailedException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.GraphResult;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.LocalCluster;
import org.apiary.database.ProvenanceConfig;
import org.apiary.drills.ProvenanceCheck.Sink;
import org.apiary.drills.ProvenanceWorkload.Client;
import org.apiary.drills.ProvenanceWorkload.Invocation;
import org.apiary.drills.ProvenanceWorkload.Outcome;
import org.apiary.drills.ProvenanceWorkload.Step;
import org.apiary.drills.provenance.ProvDrillApp;
import org.apiary.drills.provenance.ProvDrillApp.Shape;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.FrontendServer;
import org.apiary.frontend.Registrar;
import org.apiary.provenance.ProvenanceSink;
import org.apiary.provenance.ProvenanceSpooler;
import org.apiary.provenance.SpoolerConfig;
import org.apiary.provenance.SpoolerStats;

/**
 * The randomized provenance checker behind {@code apiary drill provenance}: a bounded mixed workload runs while the
 * sink goes away and a database server dies, then what the provenance sink holds is compared with what the workload
 * knows it did.
 *
 * <p><b>Setup.</b> A 2-node {@link LocalCluster} with kfactor 1 (every partition on both servers), capturing
 * provenance durably (each execution's reads and row forced to disk before its transaction commits) into a fresh
 * PostgreSQL schema reached through a {@link SinkProxy} the drill owns; the {@link ProvDrillApp} application; an
 * in-process frontend; several client threads.
 *
 * <p><b>Load.</b> Each client owns its keys (so it knows every row's state without reading it back) and invokes the
 * application's graphs one at a time under its own invocation IDs: single-partition writers, read-only functions
 * (recorded and not), multi-partition readers and writers, and functions that write, read and then abort, alone or
 * after a writer that commits. Every plan is drawn from the seed and spells out each function's operations, so the
 * client computes, from its own model of its rows, every read event (the rows present when read) and write event
 * (the row written, or for a delete the row deleted) each execution must leave.
 *
 * <p><b>Faults</b>, at times drawn from the seed: the proxy cuts the sink off for a few seconds, either resetting
 * live connections and refusing new ones or silently (connections stay open, nothing is forwarded until the end of
 * the cut), and node 1 is killed with SIGKILL, half the time while the sink is cut off (node 1: VoltDB's
 * partition detection stops the surviving half of an evenly split cluster unless it holds the lowest host ID, so
 * killing node 0 would stop the database). After the load the killed server's spill directory is loaded into the sink
 * by a spooler of the drill's own, as a restarted server would.
 *
 * <p><b>Oracle.</b> Only what the clients saw: an answer ({@code ok}), a {@link FunctionFailedException} of the
 * planned aborting function ({@code aborted}; the functions before it committed), or no definite answer
 * ({@code unknown}, asked again with {@code result(id)} at the end; still unknown, the invocation is excluded from the
 * strict checks, its keys are left alone from then on, and it is counted). A read-only function that the
 * exactly-once analysis does not record runs again when its invocation is attempted again, which happens when a call
 * is lost with the killed server: within {@value ProvenanceCheck#FAULT_WINDOW_MS} ms of the kill, such a function may
 * have more than one execution row, each of which must be exact.
 *
 * <p><b>Check.</b> Once the sink stops changing (bounded): every committed execution has exactly one
 * {@code FunctionInvocations} row with its graph, partition key and caller; exactly its expected reads and writes are
 * there, once each, joined to it by {@code exec_id} ({@code missing}, {@code duplicates}, {@code misattributed}:
 * joined to another execution or to none); nothing of an aborted function is ({@code aborted_captured}); and each
 * record's write and read events, global functions' included, are in the documented commit order. A global
 * function's writes are joined to it through the sink's {@code MultiPartitionPositions}, as docs/provenance.md says.
 */
final class ProvenanceDrill {
  /**
   * What the drill runs with.
   *
   * @param sinkUrl a PostgreSQL JDBC URL; the drill creates a schema of its own there and drops it at the end
   * @param sinkPassword from the environment ({@code PGPASSWORD}), or {@code null}
   * @param skip faults left out, among {@link #FAULTS}
   * @param settleSeconds how long, at most, to wait for the sink to stop changing after the load
   */
  record Settings(long seed, int seconds, int clients, String sinkUrl, String sinkUser, String sinkPassword,
                  Set<String> skip, int settleSeconds) {}

  /** Faults that can be left out: the sink cut off through the proxy, a server killed. */
  static final List<String> FAULTS = List.of("cut", "kill");

  /** The sink when none is given: the local PostgreSQL server's default database. */
  static final String DEFAULT_SINK_URL = "jdbc:postgresql://127.0.0.1:5432/postgres";

  /** How long each attempt of a client's call waits, and how many attempts it makes. */
  static final Duration ATTEMPT_TIMEOUT = Duration.ofSeconds(5);
  static final int MAX_ATTEMPTS = 4;
  private static final Duration CLUSTER_TIMEOUT = Duration.ofSeconds(120);

  private final Settings settings;
  private final PrintStream out;
  private final long startNanos = System.nanoTime();
  private final List<String> crashes = Collections.synchronizedList(new ArrayList<>());
  private volatile long killAtMs = -1;
  private volatile int victim = -1;
  private volatile long cutAtMs = -1;
  private volatile long restoredAtMs = -1;

  ProvenanceDrill(Settings settings, PrintStream out) {
    this.settings = settings;
    this.out = out;
  }

  private long now() {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
  }

  /** Prints a line with one write, so the servers' and the frontend's log lines never land inside it. */
  private void line(String text) {
    out.print(text + System.lineSeparator());
  }

  private void say(String what) {
    line(String.format("-> %s (+%.1f s)", what, now() / 1e3));
  }

  // ------------------------------------------------------------------------------------------------- setup

  /** Runs the drill; 0 if the sink agreed with the workload, 1 if not, 2 if the drill could not run. */
  int run() throws Exception {
    line("-> seed " + settings.seed() + " (repeat this run with --seed " + settings.seed() + ")");
    SinkUrl sink;
    try {
      sink = SinkUrl.parse(settings.sinkUrl());
    } catch (IllegalArgumentException e) {
      line(e.getMessage());
      return 2;
    }
    Properties props = ProvenanceSink.credentials(settings.sinkUser(), settings.sinkPassword());
    props.setProperty("connectTimeout", "5");
    props.setProperty("socketTimeout", "60");
    byte[] random = new byte[6];
    new SecureRandom().nextBytes(random);
    String schema = "apiary_provdrill_" + HexFormat.of().formatHex(random);
    try (Connection c = DriverManager.getConnection(settings.sinkUrl(), props); Statement s = c.createStatement()) {
      s.execute("CREATE SCHEMA " + schema);
    } catch (SQLException e) {
      line("cannot create a schema in the provenance sink " + settings.sinkUrl() + " as user "
          + settings.sinkUser() + ": " + e.getMessage() + "\n(is PostgreSQL running? Pass --sink-url and --sink-user, "
          + "and PGPASSWORD in the environment if it needs a password)");
      return 2;
    }
    try {
      return run(sink, schema, props);
    } finally {
      try (Connection c = DriverManager.getConnection(settings.sinkUrl(), props); Statement s = c.createStatement()) {
        s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
      } catch (SQLException e) {
        line("-> could not drop the drill's schema " + schema + ": " + e.getMessage());
      }
    }
  }

  private int run(SinkUrl sink, String schema, Properties props) throws Exception {
    String direct = sink.url(sink.host(), sink.port(), schema);
    try (SinkProxy proxy = new SinkProxy(sink.host(), sink.port())) {
      ProvenanceConfig capture = ProvenanceConfig.sink(sink.url("127.0.0.1", proxy.port(), schema))
          .withCredentials(settings.sinkUser(), settings.sinkPassword())
          .withDurableCapture(true);
      say("starting a 2-node VoltDB cluster (2 sites per node, kfactor 1) capturing provenance durably into schema "
          + schema + " of " + settings.sinkUrl() + " through a proxy on 127.0.0.1:" + proxy.port());
      try (LocalCluster cluster = LocalCluster.start(2, 2, 1, capture, CLUSTER_TIMEOUT)) {
        say("cluster up: " + cluster.clientAddresses());
        try {
          return drive(cluster, proxy, direct, props);
        } catch (org.apiary.DatabaseException e) {
          line("!! " + e.getMessage());
          for (LocalCluster.Node node : cluster.nodes()) { // the cluster's directory goes with it: show its logs now
            line("!! node " + node.index() + " (" + (node.isAlive() ? "running" : "not running")
                + "), the end of its log:");
            tail(node.log(), 25).forEach(line -> line("!!   " + line));
          }
          throw e;
        }
      }
    }
  }

  private int drive(LocalCluster cluster, SinkProxy proxy, String sinkUrl, Properties props) throws Exception {
    List<Client> clients = new ArrayList<>();
    try (ApiaryDatabase db = ApiaryDatabase.open(cluster.config())) {
      Registrar.register(db, ProvDrillApp.APP);
      say("registered the provenance drill application (" + Shape.values().length + " graphs)");
      try (FrontendServer frontend = FrontendServer.start(db, FrontendConfig.defaults())) {
        load(frontend.endpoint(), cluster, proxy, clients);
        say(resolveUnknown(clients, this::now, frontend.endpoint()));
      }
    }
    List<Invocation> all = clients.stream().flatMap(c -> c.invocations.stream()).toList();
    long expectedExecutions = 0;
    long expectedEvents = 0;
    for (Invocation inv : all) {
      for (Step s : inv.committedSteps()) {
        expectedExecutions++;
        expectedEvents += s.reads.size() + s.writes.size();
      }
    }
    if (victim >= 0) {
      if (!cluster.nodes().get(1 - victim).isAlive()) {
        crashes.add("the surviving node " + (1 - victim) + " stopped too, so the database did not survive the kill");
      }
      recoverSpill(cluster, sinkUrl, props);
    }
    say(settle(sinkUrl, props, null, expectedExecutions, expectedEvents, settings.settleSeconds(),
        this::now));
    Sink snapshot = Sink.read(sinkUrl, props);
    return new ProvenanceCheck(out, new ProvenanceCheck.Faults(cutAtMs, restoredAtMs, killAtMs, victim), crashes)
        .check(all, snapshot);
  }

  // ------------------------------------------------------------------------------------------------- the run

  private void load(String endpoint, LocalCluster cluster, SinkProxy proxy, List<Client> clients)
      throws InterruptedException {
    SplittableRandom master = new SplittableRandom(settings.seed());
    long loadMs = settings.seconds() * 1000L;
    long loadStart = now();
    long stopAt = loadStart + loadMs;
    for (int c = 0; c < settings.clients(); c++) {
      clients.add(new Client(c, Long.toUnsignedString(settings.seed(), 36), master.split(), this::now, crashes));
    }
    // The faults' times, from the seed: the cut between 15% and 30% of the load, 2 to 4 s long; the kill during
    // the cut half the time (so the killed server's captured rows are on its disk only), else at 45% to 65%.
    SplittableRandom f = master.split();
    long cutAt = loadStart + (long) (loadMs * (0.15 + 0.15 * f.nextDouble()));
    long cutFor = Math.min(2000 + f.nextLong(2001), Math.max(500, loadMs / 3));
    boolean killDuringCut = f.nextBoolean() && !settings.skip().contains("cut");
    long killAt = killDuringCut ? cutAt + (long) (cutFor * (0.3 + 0.4 * f.nextDouble()))
        : loadStart + (long) (loadMs * (0.45 + 0.2 * f.nextDouble()));
    // Node 1: VoltDB's partition detection stops the surviving half of an evenly split cluster unless it holds the
    // lowest host ID, so killing node 0 of two would stop the database, not test a server failure.
    int killWhich = 1;
    boolean silentCut = f.nextBoolean();
    List<Thread> threads = new ArrayList<>();
    for (Client c : clients) {
      threads.add(new Thread(guarded(() -> c.work(stopAt, endpoint)), "provdrill-client-" + c.index));
    }
    Thread nemesis = new Thread(guarded(() -> {
      TreeMap<Long, Runnable> timeline = new TreeMap<>();
      if (!settings.skip().contains("cut")) {
        timeline.put(cutAt, () -> {
          if (silentCut) {
            proxy.blackHole();
          } else {
            proxy.cut();
          }
          cutAtMs = now();
          say("fault: the sink is cut off " + (silentCut ? "silently (connections stay open, no byte is forwarded)"
              : "(live connections reset, new ones refused)") + " for " + cutFor + " ms");
        });
        timeline.put(cutAt + cutFor, () -> {
          proxy.restore();
          restoredAtMs = now();
          say("fault over: the sink is reachable again");
        });
      }
      if (!settings.skip().contains("kill")) {
        timeline.put(killAt + (timeline.containsKey(killAt) ? 1 : 0), () -> {
          LocalCluster.Node node = cluster.nodes().get(killWhich);
          killAtMs = now();
          victim = killWhich;
          try {
            node.kill();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          say("fault: VoltDB node " + killWhich + " of 2 (" + node.clientAddress() + ") killed with SIGKILL"
              + (cutAtMs >= 0 && restoredAtMs < 0 ? ", while the sink is cut off" : ""));
        });
      }
      try {
        for (Map.Entry<Long, Runnable> e : timeline.entrySet()) {
          sleep(e.getKey() - now());
          e.getValue().run();
        }
      } finally {
        proxy.restore();
      }
    }), "provdrill-nemesis");
    say(settings.clients() + " clients for " + settings.seconds() + " s over " + ProvenanceWorkload.PARTITION_KEYS
        + " partition keys" + (settings.skip().isEmpty() ? "" : "; skipping " + settings.skip()));
    threads.forEach(Thread::start);
    nemesis.start();
    Duration callBound = ATTEMPT_TIMEOUT.multipliedBy(MAX_ATTEMPTS).plusSeconds(10);
    DrillThreads.joinAll(threads, Duration.ofMillis(loadMs).plus(callBound));
    DrillThreads.joinAll(List.of(nemesis), Duration.ofSeconds(40));
    long n = clients.stream().mapToLong(c -> c.invocations.size()).sum();
    say("load over: " + n + " invocations");
  }

  /**
   * Asks {@code result(id)} about every invocation whose outcome the client did not learn, for a bounded time (20 s
   * of {@code now}); says how many it resolved.
   */
  static String resolveUnknown(List<Client> clients, java.util.function.LongSupplier now, String... endpoints) {
    List<Invocation> open = new ArrayList<>();
    for (Client c : clients) {
      c.invocations.stream().filter(i -> i.outcome == Outcome.UNKNOWN).forEach(open::add);
    }
    if (open.isEmpty()) {
      return "every invocation has a definite answer";
    }
    long deadline = now.getAsLong() + 20_000;
    ClientConfig config = ClientConfig.of(endpoints).withAttemptTimeout(ATTEMPT_TIMEOUT).withMaxAttempts(2);
    int resolved = 0;
    try (ApiaryClient client = ApiaryClient.connect(config)) {
      while (!open.isEmpty() && now.getAsLong() < deadline) {
        List<Invocation> still = new ArrayList<>();
        for (Invocation inv : open) {
          if (now.getAsLong() >= deadline) {
            still.add(inv);
            continue;
          }
          try {
            Optional<GraphResult> r = client.result(inv.id);
            if (r.isPresent()) {
              inv.resolve(r.get(), null);
            }
          } catch (FunctionFailedException e) {
            inv.resolve(null, e);
          } catch (RuntimeException e) {
            inv.lookup = e.getClass().getSimpleName() + ": " + e.getMessage();
          }
          if (inv.outcome == Outcome.UNKNOWN) {
            still.add(inv);
          } else {
            resolved++;
          }
        }
        open = still;
        if (!open.isEmpty()) {
          sleep(500);
        }
      }
    }
    return "asked result(id) about the invocations without a definite answer: " + resolved + " resolved, "
        + open.size() + " still unknown";
  }

  /** Loads the killed server's spill directory with a spooler of the drill's own, as the server rejoining would. */
  private void recoverSpill(LocalCluster cluster, String sinkUrl, Properties props) throws IOException {
    Path root = cluster.directory().toPath().resolve("provenance-spill");
    Pattern mine = Pattern.compile("(^|.*_)node" + victim + "(_.*|$)");
    List<Path> dirs;
    try (var list = Files.list(root)) {
      dirs = list.filter(Files::isDirectory).filter(d -> mine.matcher(d.getFileName().toString()).matches())
          .toList();
    }
    if (dirs.size() != 1) {
      crashes.add("cannot tell the killed node's spill directory among " + list(root));
      line("!! cannot tell the killed node " + victim + "'s spill directory among " + list(root));
      return;
    }
    Path dir = dirs.get(0);
    long files;
    try (var list = Files.list(dir)) {
      files = list.filter(p -> p.getFileName().toString().endsWith(".spill")).count();
    }
    // The cluster ran on without the node (kfactor 1): as the node rejoining would, load only what ran nowhere else.
    try (ProvenanceSpooler spooler = ProvenanceSpooler.start(SpoolerConfig.defaults().withSpillDirectory(dir)
        .withRecovery(SpoolerConfig.Recovery.REPLICATED), ProvenanceSink.opener(sinkUrl, props))) {
      boolean flushed = spooler.flush(Duration.ofSeconds(30));
      SpoolerStats stats = spooler.stats();
      say("the killed node's spill directory (" + files + " spill file(s)): " + stats.rowsRecovered()
          + " rows recovered, " + stats.rowsLoaded() + " loaded, " + stats.rowsSetAside() + " of single-partition "
          + "writers set aside (the replica captured those that committed)" + (stats.rowsDamaged() > 0 ? ", "
          + stats.rowsDamaged() + " DAMAGED" : "") + (flushed ? "" : "; NOT all loaded within 30 s: "
          + stats.lastError()));
      if (!flushed) {
        crashes.add("the killed node's spill files did not load: " + stats.lastError());
      }
    }
  }

  private static List<String> tail(Path log, int lines) {
    try {
      List<String> all = Files.readAllLines(log);
      return all.subList(Math.max(0, all.size() - lines), all.size());
    } catch (IOException | java.io.UncheckedIOException e) {
      return List.of("(unreadable: " + e.getMessage() + ")");
    }
  }

  private static String list(Path dir) {
    try (var l = Files.list(dir)) {
      return l.map(p -> p.getFileName().toString()).toList().toString();
    } catch (IOException e) {
      return "(" + e.getMessage() + ")";
    }
  }

  /**
   * Waits until the sink stops changing: quiet for 3 s with at least the expected rows, or quiet for 10 s, at most
   * {@code settleSeconds}; says what it saw. Counts the {@code FunctionInvocations} rows {@code executionsWhere}
   * only, if not {@code null} (a sink other workloads capture into as well).
   */
  static String settle(String url, Properties props, String executionsWhere, long executions, long events, int settleSeconds,
                       java.util.function.LongSupplier clock) throws InterruptedException {
    long deadline = clock.getAsLong() + settleSeconds * 1000L;
    long[] last = Sink.counts(url, props, executionsWhere);
    long lastChange = clock.getAsLong();
    boolean settled = false;
    while (clock.getAsLong() < deadline) {
      Thread.sleep(500);
      long[] c = Sink.counts(url, props, executionsWhere);
      if (c[0] != last[0] || c[1] != last[1]) {
        last = c;
        lastChange = clock.getAsLong();
        continue;
      }
      long quiet = clock.getAsLong() - lastChange;
      if (quiet >= 3000 && c[0] >= executions && c[1] >= events || quiet >= 10_000) {
        settled = true;
        break;
      }
    }
    return "the sink " + (settled ? "stopped changing" : "was still changing after " + settleSeconds + " s")
        + ": " + last[0] + " FunctionInvocations rows, " + last[1] + " " + ProvDrillApp.TABLE + " event rows";
  }

  /** A thread body whose failure is reported and fails the drill instead of vanishing. */
  private Runnable guarded(Runnable body) {
    return DrillThreads.guarded(body, crashes, this::line);
  }

  private static void sleep(long ms) {
    if (ms <= 0) {
      return;
    }
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // ------------------------------------------------------------------------------------------------- the sink's URL

  /** A PostgreSQL JDBC URL taken apart, so the servers can reach the same database through the proxy. */
  record SinkUrl(String host, int port, String database, String params) {
    private static final Pattern URL = Pattern.compile(
        "jdbc:postgresql://([^/:?\\[\\]]+|\\[[^\\]]+\\])(?::(\\d+))?/([^?]*)(?:\\?(.*))?");

    static SinkUrl parse(String url) {
      Matcher m = URL.matcher(url);
      if (!m.matches()) {
        throw new IllegalArgumentException("the provenance drill's sink must be a PostgreSQL URL "
            + "jdbc:postgresql://host[:port]/database[?parameters] (several servers capture into it at once, which "
            + "an embedded DuckDB file does not allow), not '" + url + "'");
      }
      String params = m.group(4) == null ? "" : m.group(4);
      if (params.contains("currentSchema=")) {
        throw new IllegalArgumentException("leave currentSchema out of --sink-url: the drill uses a fresh schema of "
            + "its own");
      }
      return new SinkUrl(m.group(1), m.group(2) == null ? 5432 : Integer.parseInt(m.group(2)), m.group(3), params);
    }

    /** The URL of {@code schema} in this database at another host and port. */
    String url(String atHost, int atPort, String schema) {
      return "jdbc:postgresql://" + atHost + ":" + atPort + "/" + database + "?" + (params.isEmpty() ? ""
          : params + "&") + "currentSchema=" + schema;
    }
  }
}
