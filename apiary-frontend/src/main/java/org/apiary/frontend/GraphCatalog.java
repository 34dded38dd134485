package org.apiary.frontend;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.Json;
import org.apiary.runtime.FunctionCatalog;
import org.apiary.runtime.SystemSchema;
import org.voltdb.VoltTable;

/**
 * The registered graphs, every version of each, and the deployed functions, read from the database. New
 * invocations run the newest version known; an invocation keeps the version it started with. The catalog is read
 * again by {@link #reload} (a frontend checks at every heartbeat, and reads only if something changed) and, for a
 * graph name it does not know, by {@link #latest} at most once per {@code reloadInterval}.
 */
public final class GraphCatalog {
  /** One version of a registered graph. */
  public record Versioned(RegisteredGraph graph, int version) {}

  private record Snapshot(Map<String, TreeMap<Integer, RegisteredGraph>> graphs, FunctionCatalog functions,
                          long loadedAtNanos, List<Object> fingerprint) {}

  private final ApiaryDatabase db;
  private final long reloadIntervalNanos;
  private volatile Snapshot snapshot;
  private final AtomicLong loads = new AtomicLong();

  public GraphCatalog(ApiaryDatabase db, Duration reloadInterval) {
    this.db = db;
    this.reloadIntervalNanos = reloadInterval.toNanos();
    FunctionCatalog functions = FunctionCatalog.load(db); // creates the system tables on first use
    this.snapshot = load(functions, fingerprint());
  }

  /**
   * What changes whenever a graph is registered or a function deployed: both tables' row counts and latest times
   * (registration only adds graph versions; deployment upserts functions with a new time). Read before the tables,
   * so a change that lands between the two reads is seen again at the next reload.
   */
  private List<Object> fingerprint() {
    VoltTable[] t = db.callAdmin("checking for new graphs and functions", "@AdHoc",
        "SELECT COUNT(*), MAX(registered_at) FROM " + SystemSchema.GRAPHS + "; SELECT COUNT(*), MAX(deployed_at) FROM "
            + SystemSchema.FUNCTIONS + ";").getResults();
    List<Object> values = new ArrayList<>();
    for (VoltTable table : t) {
      table.advanceRow();
      values.add(table.getLong(0));
      values.add(String.valueOf(table.getTimestampAsTimestamp(1)));
    }
    return values;
  }

  private Snapshot load(FunctionCatalog functions, List<Object> fingerprint) {
    VoltTable t = db.callAdmin("reading registered graphs", "@AdHoc",
        "SELECT name, version, definition FROM " + SystemSchema.GRAPHS).getResults()[0];
    Map<String, TreeMap<Integer, RegisteredGraph>> graphs = new TreeMap<>();
    while (t.advanceRow()) {
      String name = t.getString(0);
      int version = (int) t.getLong(1);
      graphs.computeIfAbsent(name, n -> new TreeMap<>()).put(version, Json.read(t.getVarbinary(2),
          RegisteredGraph.class, "stored definition of graph '" + name + "' version " + version));
    }
    loads.incrementAndGet();
    return new Snapshot(graphs, functions, System.nanoTime(), fingerprint);
  }

  /** The newest version of a graph, reloading the catalog if the name is unknown and the last load is old enough. */
  public Optional<Versioned> latest(String name) {
    Snapshot s = snapshot;
    if (!s.graphs().containsKey(name) && System.nanoTime() - s.loadedAtNanos() > reloadIntervalNanos) {
      reload();
      s = snapshot;
    }
    TreeMap<Integer, RegisteredGraph> versions = s.graphs().get(name);
    return versions == null ? Optional.empty()
        : Optional.of(new Versioned(versions.lastEntry().getValue(), versions.lastKey()));
  }

  /** The newest version of a graph as of the last load (never reloads). */
  public Optional<Versioned> known(String name) {
    TreeMap<Integer, RegisteredGraph> versions = snapshot.graphs().get(name);
    return versions == null ? Optional.empty()
        : Optional.of(new Versioned(versions.lastEntry().getValue(), versions.lastKey()));
  }

  /** The newest version of a graph, as {@link #latest}. */
  public Optional<RegisteredGraph> graph(String name) {
    return latest(name).map(Versioned::graph);
  }

  /** One version of a graph as of the last load (never reloads: callers may be on the database's threads). */
  public Optional<RegisteredGraph> graph(String name, int version) {
    TreeMap<Integer, RegisteredGraph> versions = snapshot.graphs().get(name);
    return versions == null ? Optional.empty() : Optional.ofNullable(versions.get(version));
  }

  /**
   * Reads the graphs and functions again if any was registered or deployed since the last load (a frontend checks
   * at every heartbeat; reading every version of every graph each time grew with each redeployment).
   */
  public synchronized void reload() {
    List<Object> fingerprint = fingerprint();
    Snapshot s = snapshot;
    if (fingerprint.equals(s.fingerprint())) {
      snapshot = new Snapshot(s.graphs(), s.functions(), System.nanoTime(), fingerprint);
      return;
    }
    // The tables the constructor ensured, read without checking the schema again.
    snapshot = load(FunctionCatalog.read(db), fingerprint);
  }

  /** How many times the tables were read (a test's view of {@link #reload} skipping unchanged catalogs). */
  long loads() {
    return loads.get();
  }

  /** The deployed functions as of the last load. */
  public FunctionCatalog functions() {
    return snapshot.functions();
  }

  /** The names of the known graphs. */
  public Set<String> graphNames() {
    return snapshot.graphs().keySet();
  }
}
