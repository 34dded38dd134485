package org.apiary.drills;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.ClusterConfig;
import org.apiary.database.LocalCluster;
import org.apiary.journal.JournalMode;

/**
 * What {@link DurabilityDrill} crashes: {@code apiary start} (one process: embedded VoltDB and frontend), or a 2-node
 * journaled cluster with k-factor 1 and a frontend process in front of it, every node SIGKILLed at once.
 */
interface DurabilityTarget {
  /** Starts it for the first time and waits until clients may call. */
  void start() throws Exception;

  /** SIGKILLs every process that holds data, at once, and waits until they are gone. */
  void crash() throws Exception;

  /**
   * Starts it again on the same directory (now and then crashing it again during its recovery, reported on
   * {@code out}) and waits until clients may call.
   *
   * @throws IllegalStateException if it does not come back (recovery stopped)
   */
  void restart(SplittableRandom random, java.io.PrintStream out) throws Exception;

  /** A connection to its database as the administrator. */
  ApiaryDatabase admin() throws IOException;

  /** Where clients call (the same across restarts). */
  String endpoint();

  /** Stops it cleanly (what is left of it) and keeps its output. */
  void stop() throws Exception;

  /** What it is, for the drill's first line. */
  String describe();

  /** {@code apiary start} as its own process, killed as a whole and started again on the same directory and port. */
  final class Service implements DurabilityTarget {
    private static final Duration START = Duration.ofSeconds(180);
    private final Path dir;
    private final Path log;
    private final int port;
    private final List<String> options;
    private ServiceProcess service;

    Service(Path dir, Path log, String journal) {
      this.dir = dir;
      this.log = log;
      this.port = LocalCluster.freePorts(1)[0];
      this.options = List.of("--port", String.valueOf(port), "--no-credentials", "--no-provenance",
          "--snapshot-interval-s", "5", "--journal", journal);
    }

    @Override
    public void start() throws Exception {
      service = ServiceProcess.launch(dir, options);
      service.awaitReady(START);
    }

    @Override
    public void crash() throws Exception {
      service.kill();
      keepLog();
    }

    @Override
    public void restart(SplittableRandom random, java.io.PrintStream out) throws Exception {
      service = ServiceProcess.launch(dir, options);
      if (random.nextInt(4) == 0) { // now and then, kill it again while it recovers
        Thread.sleep(500 + random.nextInt(2_500));
        if (!service.output().contains(ServiceProcess.READY)) {
          service.kill();
          out.println("   ... and again during its recovery");
          keepLog();
          service = ServiceProcess.launch(dir, options);
        }
      }
      service.awaitReady(START);
    }

    @Override
    public ApiaryDatabase admin() throws IOException {
      return service.admin(dir);
    }

    @Override
    public String endpoint() {
      return "tcp://127.0.0.1:" + port;
    }

    @Override
    public void stop() throws Exception {
      if (service != null) {
        service.stop(Duration.ofSeconds(60));
        keepLog();
      }
    }

    @Override
    public String describe() {
      return "apiary start (journal " + options.get(options.size() - 1) + ")";
    }

    private void keepLog() throws IOException {
      Files.writeString(log, "==== apiary start\n" + service.output(), java.nio.file.StandardOpenOption.APPEND);
      service.deleteLog();
    }
  }

  /**
   * A journaled cluster of two nodes with k-factor 1 ({@link LocalCluster}, started by this process as
   * {@code apiary cluster start} would, so recovery runs here), with one frontend process on a fixed port in front.
   * A crash SIGKILLs both nodes at once (and the frontend, which would only wait for them); a restart recovers the
   * cluster from the nodes' journals and starts a frontend on the same port.
   */
  final class Cluster implements DurabilityTarget {
    private static final Duration START = Duration.ofSeconds(180);
    private final Path dir;
    private final Path log;
    private final int port;
    private final ClusterConfig config;
    private LocalCluster cluster;
    private FrontendProcess frontend;

    Cluster(Path dir, Path log, JournalMode journal) {
      this.dir = dir;
      this.log = log;
      this.port = LocalCluster.freePorts(1)[0];
      this.config = ClusterConfig.of(2, 2, 1).withDataDirectory(dir).withSnapshotInterval(Duration.ofSeconds(5))
          .withStartTimeout(START).withJournal(journal);
    }

    @Override
    public void start() {
      cluster = LocalCluster.start(config);
      frontend = FrontendProcess.start(cluster.clientAddresses(), List.of("--port", String.valueOf(port)), START);
    }

    @Override
    public void crash() throws Exception {
      List<ProcessHandle> all = new ArrayList<>();
      for (LocalCluster.Node n : cluster.nodes()) {
        ProcessHandle.of(n.pid()).ifPresent(all::add);
      }
      if (frontend != null) {
        ProcessHandle.of(frontend.pid()).ifPresent(all::add);
      }
      all.forEach(ProcessHandle::destroyForcibly); // every one at once, then wait
      for (ProcessHandle h : all) {
        h.onExit().get(30, TimeUnit.SECONDS);
      }
      keepLogs();
      cluster.close(); // every node is dead: nothing to save, the directory is kept
      cluster = null;
      frontend = null;
    }

    @Override
    public void restart(SplittableRandom random, java.io.PrintStream out) {
      try {
        cluster = LocalCluster.start(config);
      } catch (RuntimeException e) {
        throw new IllegalStateException("the cluster did not recover: " + e.getMessage(), e);
      }
      frontend = FrontendProcess.start(cluster.clientAddresses(), List.of("--port", String.valueOf(port)), START);
    }

    @Override
    public ApiaryDatabase admin() {
      return ApiaryDatabase.open(cluster.config());
    }

    @Override
    public String endpoint() {
      return "tcp://127.0.0.1:" + port;
    }

    /** Kills what runs: the drill deletes the directory next, so a clean stop's checkpoint would be wasted time. */
    @Override
    public void stop() throws Exception {
      if (cluster != null) {
        crash();
      } else if (frontend != null) {
        frontend.close();
      }
    }

    @Override
    public String describe() {
      return "a 2-node cluster with k-factor 1 (journal " + config.journal().name().toLowerCase(java.util.Locale.ROOT)
          + "; every node at once) and a frontend process";
    }

    private void keepLogs() throws IOException {
      StringBuilder b = new StringBuilder();
      for (LocalCluster.Node n : cluster.nodes()) {
        b.append("==== node ").append(n.index()).append('\n');
        if (Files.exists(n.log())) {
          b.append(Files.readString(n.log()));
        }
      }
      if (frontend != null) {
        b.append("==== frontend\n").append(frontend.output());
      }
      Files.writeString(log, b.toString(), java.nio.file.StandardOpenOption.APPEND);
    }
  }
}
