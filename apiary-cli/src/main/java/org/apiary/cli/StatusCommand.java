package org.apiary.cli;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.RegisteredGraph;
import org.apiary.frontend.query.ExecutionQueries;
import org.apiary.runtime.SystemSchema;
import org.apiary.runtime.provenance.BacklogReport;
import org.apiary.runtime.provenance.ExportBacklog;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** Prints what a running Apiary holds: its database, graphs, frontends and invocations. Reads only. */
@Command(name = "status", mixinStandardHelpOptions = true,
    description = "Print, as plain text, a running Apiary's database (hosts, partitions), its registered graphs with "
        + "their versions, its frontends and their leases, how many logged invocations are running, done and "
        + "failed, and the provenance backlog: captured writes VoltDB holds not yet loaded, and, with --data (a "
        + "service's or a cluster's directory), the rows waiting in each server's spooler as the server last "
        + "reported them (every 2 s); the spoolers run inside the database's processes, so with --database the "
        + "output says they are not visible. Reads only; exit code 1 if the database cannot be reached.")
public final class StatusCommand implements Callable<Integer> {
  @ArgGroup(exclusive = false, multiplicity = "0..1") // ServiceTarget.Database checks what goes together
  ServiceTarget.Database target;

  @Spec
  CommandSpec spec;

  private final PrintStream out = System.out;

  @Override
  public Integer call() {
    if (target == null) {
      throw ServiceTarget.missing(spec, "--database HOST:PORT");
    }
    boolean cluster = target.data != null && ClusterDirectory.isCluster(target.data);
    Path spillRoot = null;
    Map<String, String> serverNames = new java.util.HashMap<>();
    if (cluster) {
      ClusterDirectory dir = new ClusterDirectory(target.data);
      ClusterDirectory.State s = dir.runningState();
      out.println("apiary cluster in " + s.dataDirectory() + ": " + s.alive().size() + " of " + s.nodes().size()
          + " node(s) running, since " + s.startedAt());
      for (ClusterDirectory.Node n : s.nodes()) {
        out.println("  node " + n.index() + ": pid " + n.pid() + (n.process().isPresent() ? "" : " (NOT RUNNING)")
            + ", client " + n.clientAddress() + ", log " + n.log());
        serverNames.put(Path.of(n.root()).toAbsolutePath().normalize().toString(), "node " + n.index());
      }
      List<String> down = s.nodes().stream().filter(n -> n.process().isEmpty()).map(n -> String.valueOf(n.index()))
          .toList();
      if (!down.isEmpty()) {
        out.println("  DEGRADED: node(s) " + String.join(", ", down) + " not running; start them again, while the "
            + "others run, with: apiary cluster start --data " + s.dataDirectory() + " (they rejoin)");
      }
      out.println("  provenance: " + dir.readSettings().map(ClusterDirectory.Settings::provenance)
          .map(url -> "captured into " + url).orElse("not captured"));
      out.println("  journal: " + dir.readSettings().map(ClusterDirectory.Settings::journalMode)
          .map(m -> m == org.apiary.journal.JournalMode.NONE ? "none (a crash of every node loses what came after "
              + "the last snapshot)" : m.name().toLowerCase(java.util.Locale.ROOT) + ", on every node")
          .orElse("none"));
      spillRoot = dir.provenanceSpill();
    } else if (target.data != null) {
      ServiceDirectory dir = new ServiceDirectory(target.data);
      ServiceDirectory.State s = dir.runningState();
      out.println("apiary in " + s.dataDirectory() + ": running, pid " + s.pid() + ", since " + s.startedAt());
      out.println("  frontend endpoint: " + s.frontend());
      out.println("  provenance: " + (s.provenance() == null ? "not captured" : s.provenance()));
      spillRoot = dir.provenanceSpill();
    }
    try (ApiaryDatabase db = ApiaryDatabase.open(target.config())) {
      database(db);
      Set<String> tables = SystemSchema.tables(db);
      if (!tables.contains(SystemSchema.GRAPHS)) {
        out.println("graphs: none (Apiary's system tables are not there: nothing was deployed with this database)");
        return 0;
      }
      graphs(db);
      frontends(db);
      invocations(db);
      provenanceBacklog(db, spillRoot, serverNames);
    }
    if (cluster) {
      clusterJournal(new ClusterDirectory(target.data));
    } else {
      journal(target.data == null ? null : new ServiceDirectory(target.data));
    }
    return 0;
  }

  private void database(ApiaryDatabase db) {
    ExecutionQueries.Overview o = ExecutionQueries.overview(db);
    out.println("database " + String.join(",", o.addresses()) + ": VoltDB " + o.version() + ", " + o.hosts().size()
        + " host(s), " + o.partitions() + " partition(s), k-factor " + o.kfactor());
    int k;
    try {
      k = Integer.parseInt(o.kfactor());
    } catch (NumberFormatException e) {
      return; // the deployment did not say
    }
    if (k > 0) {
      List<Long> unreplicated = ExecutionQueries.unreplicatedPartitions(db, k);
      if (!unreplicated.isEmpty()) {
        out.println("  DEGRADED: k-factor " + k + " NOT held: partition(s) " + unreplicated.stream()
            .map(String::valueOf).collect(Collectors.joining(", ")) + " have fewer than " + (k + 1) + " copies; "
            + "one more host's death can stop the cluster");
      }
    }
  }


  private void graphs(ApiaryDatabase db) {
    record Latest(int version, int versions, String registeredAt, RegisteredGraph graph) {}
    Map<String, Latest> latest = new TreeMap<>();
    for (ExecutionQueries.GraphVersion g : ExecutionQueries.graphs(db)) {
      Latest before = latest.get(g.name());
      latest.put(g.name(), new Latest(g.version(), before == null ? 1 : before.versions() + 1, g.registeredAt(),
          g.graph()));
    }
    out.println("graphs: " + latest.size());
    latest.forEach((name, l) -> out.println("  " + name + ": version " + l.version() + " (" + l.versions()
        + " version(s), latest registered " + l.registeredAt() + "), " + kind(l.graph()) + "; functions "
        + l.graph().nodes().stream().map(n -> n.function() + (n.writes() ? " (writes)" : " (reads)"))
            .collect(Collectors.joining(", "))));
  }

  private static String kind(RegisteredGraph g) {
    return g.oneTransaction() ? "one transaction" : g.recordsNothing() ? "records nothing" : "logged";
  }

  private void frontends(ApiaryDatabase db) {
    List<String> lines = new ArrayList<>();
    for (ExecutionQueries.Frontend f : ExecutionQueries.frontends(db)) {
      long left = f.leaseRemainingMs();
      lines.add("  " + f.endpoint() + " (frontend " + f.id() + "): lease "
          + (left >= 0 ? "expires in " + seconds(left) : "expired " + seconds(-left) + " ago (dead or stopped)"));
    }
    out.println("frontends: " + lines.size());
    lines.forEach(out::println);
  }

  private void invocations(ApiaryDatabase db) {
    Map<String, Long> counts = new LinkedHashMap<>(ExecutionQueries.countsByStatus(db));
    if (counts.get(SystemSchema.STATUS_CANCELLED) == 0) {
      counts.remove(SystemSchema.STATUS_CANCELLED); // as before issue 43: cancelled shown only when there are some
    }
    out.println("invocations in the log: " + counts.entrySet().stream().map(e -> e.getValue() + " "
        + e.getKey().toLowerCase(java.util.Locale.ROOT)).collect(Collectors.joining(", "))
        + " (graphs that run as one transaction or record nothing are not logged)");
  }

  /**
   * The provenance backlog: the captured writes VoltDB's export streams hold, not yet acknowledged by Apiary's
   * loader (read through the database), and the rows each server's spooler holds, as each server last reported them
   * under {@code spillRoot} ({@link BacklogReport}; the spoolers live in the servers' processes).
   */
  private void provenanceBacklog(ApiaryDatabase db, Path spillRoot, Map<String, String> serverNames) {
    Map<String, Long> pending = ExportBacklog.bySource(db);
    if (pending.isEmpty()) {
      out.println("provenance backlog: no captured writes waiting (no provenance export stream)");
    } else {
      long total = pending.values().stream().mapToLong(Long::longValue).sum();
      out.println("provenance backlog: " + total + " captured write(s) waiting to be loaded, in VoltDB's export "
          + "streams " + pending.entrySet().stream().map(e -> e.getKey() + " " + e.getValue())
          .collect(Collectors.joining(", ", "(", ")")));
    }
    if (spillRoot == null) {
      out.println("  rows waiting in the spoolers (function executions and reads): not visible from this process, "
          + "only the database's server processes know them (with --data DIR each server's report is read)");
      return;
    }
    List<BacklogReport> reports = BacklogReport.readAll(spillRoot);
    if (reports.isEmpty()) {
      out.println("  rows waiting in the spoolers: not reported (provenance is not captured, or the servers have "
          + "just started)");
      return;
    }
    for (BacklogReport b : reports) {
      // A node's VoltDB root lies in its directory (nodeN/voltdbroot).
      String server = serverNames.entrySet().stream()
          .filter(n -> b.server().equals(n.getKey()) || b.server().startsWith(n.getKey() + java.io.File.separator))
          .map(Map.Entry::getValue).findFirst().orElse("server " + b.server());
      out.println("  " + server + " (pid " + b.pid() + "): " + spooler(b));
    }
  }

  /** One server's spooler as it last reported it. */
  static String spooler(BacklogReport b) {
    long age = Duration.between(Instant.parse(b.at()), Instant.now()).toMillis();
    return "rows waiting in the spooler: " + b.rowsWaiting() + " (" + b.rowsInMemory() + " in memory, "
        + b.rowsOnDisk() + " in spill files" + (b.spillBytes() == null ? "" : " of " + b.spillBytes() + " bytes")
        + (b.oldestUnloadedSeconds() == null ? "" : "; oldest unloaded row " + String.format(java.util.Locale.ROOT,
        "%.1f s", b.oldestUnloadedSeconds()) + " old")
        + (b.sinkReachable() == null ? "" : b.sinkReachable() ? "; sink reachable"
        : "; sink UNREACHABLE at its last attempt")
        + "; " + b.rowsLoaded() + " loaded since its start"
        + (b.rowsDropped() == 0 ? "" : "; " + b.rowsDropped() + " DROPPED since its start, for want of room in "
        + "memory and on disk") + "; " + (b.stopped() ? "its capture STOPPED " : "as reported ")
        + seconds(Math.max(0, age)) + " ago" + (b.lastError() == null ? "" : "; last error: " + b.lastError()) + ")"
        + (b.refusing() == null ? "" : "\n  REFUSING WRITES: " + b.refusing());
  }

  /** The journal as the `apiary start` process last reported it (its writer lives there), or why it is not known. */
  private void journal(ServiceDirectory service) {
    if (service == null) {
      out.println("journal: known only to the database's process (with --data DIR, `apiary start` reports it)");
      return;
    }
    Optional<org.apiary.runtime.journal.JournalStatusReport> reported = service.readJournalStatus();
    if (reported.isEmpty()) {
      String mode = service.readSettings().map(s -> s.journalMode().name().toLowerCase(java.util.Locale.ROOT))
          .orElse("unknown");
      out.println("journal: " + mode + (mode.equals("none") ? " (a crash loses what committed after the last "
          + "snapshot)" : " (not reported yet: the service is starting or stopped)"));
      return;
    }
    out.println("journal: " + describe(reported.get()));
  }

  /** A journal's report in one line: mode, durable lag, size, age, and why it refuses writes if it does. */
  private static String describe(org.apiary.runtime.journal.JournalStatusReport j) {
    long age = Duration.between(Instant.parse(j.at()), Instant.now()).toMillis();
    return j.mode() + ", " + j.durableLag() + " record(s) not yet on disk, " + j.records()
        + " written since the start in " + j.groups() + " group(s), " + j.bytes() + " bytes, " + j.segments()
        + " segment(s); as reported " + seconds(Math.max(0, age)) + " ago" + (j.failure() == null ? ""
        : "; REFUSING WRITES: " + j.failure());
  }

  /** Each node's journal as the node last reported it (a journaled cluster's). */
  private void clusterJournal(ClusterDirectory dir) {
    Optional<ClusterDirectory.State> state = dir.readState();
    boolean journaled = dir.readSettings().map(ClusterDirectory.Settings::journalMode)
        .map(m -> m != org.apiary.journal.JournalMode.NONE).orElse(false);
    if (!journaled || state.isEmpty()) {
      out.println("journal: none (a cluster keeps its data by k-safety and automatic snapshots; a crash of every "
          + "node loses what came after the last one)");
      return;
    }
    for (ClusterDirectory.Node n : state.get().nodes()) {
      Optional<org.apiary.runtime.journal.JournalStatusReport> r =
          org.apiary.runtime.journal.JournalStatusReport.readFrom(Path.of(n.root()));
      out.println("journal of node " + n.index() + ": " + r.map(StatusCommand::describe)
          .orElse("not reported yet (the node is starting, recovering or stopped)"));
    }
  }

  private static String seconds(long millis) {
    return String.format(java.util.Locale.ROOT, "%.1f s", millis / 1000.0);
  }
}
