package org.apiary.frontend;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.Json;
import org.apiary.runtime.FunctionCatalog;
import org.apiary.runtime.SystemSchema;
import org.voltdb.VoltTable;

/**
 * The registered graphs, every version of each, and the deployed functions, read from the database. New
 * invocations run the newest version known; an invocation keeps the version it started with. The catalog is read
 * again by {@link #reload} (a frontend does so at every heartbeat) and, for a graph name it does not know, by
 * {@link #latest} at most once per {@code reloadInterval}.
 */
public final class GraphCatalog {
  /** One version of a registered graph. */
  public record Versioned(RegisteredGraph graph, int version) {}

  private record Snapshot(Map<String, TreeMap<Integer, RegisteredGraph>> graphs, FunctionCatalog functions,
                          long loadedAtNanos) {}

  private final ApiaryDatabase db;
  private final long reloadIntervalNanos;
  private volatile Snapshot snapshot;

  public GraphCatalog(ApiaryDatabase db, Duration reloadInterval) {
    this.db = db;
    this.reloadIntervalNanos = reloadInterval.toNanos();
    this.snapshot = load(FunctionCatalog.load(db)); // creates the system tables on first use
  }

  private Snapshot load(FunctionCatalog functions) {
    VoltTable t = db.callAdmin("reading registered graphs", "@AdHoc",
        "SELECT name, version, definition FROM " + SystemSchema.GRAPHS).getResults()[0];
    Map<String, TreeMap<Integer, RegisteredGraph>> graphs = new TreeMap<>();
    while (t.advanceRow()) {
      String name = t.getString(0);
      int version = (int) t.getLong(1);
      graphs.computeIfAbsent(name, n -> new TreeMap<>()).put(version, Json.read(t.getVarbinary(2),
          RegisteredGraph.class, "stored definition of graph '" + name + "' version " + version));
    }
    return new Snapshot(graphs, functions, System.nanoTime());
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

  /** Reads the graphs and functions again. */
  public synchronized void reload() {
    // Every heartbeat: read the tables the constructor ensured, without checking the schema again.
    snapshot = load(FunctionCatalog.read(db));
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
