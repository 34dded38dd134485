package org.apiary.frontend;

import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.Json;
import org.apiary.runtime.FunctionCatalog;
import org.apiary.runtime.SystemSchema;
import org.voltdb.VoltTable;

/**
 * The registered graphs and deployed functions, read from the database. A graph registered after this catalog was
 * read is found by {@link #graph} after a reload, at most once per {@code reloadInterval}.
 */
public final class GraphCatalog {
  private record Snapshot(Map<String, RegisteredGraph> graphs, FunctionCatalog functions, long loadedAtNanos) {}

  private final ApiaryDatabase db;
  private final long reloadIntervalNanos;
  private volatile Snapshot snapshot;

  public GraphCatalog(ApiaryDatabase db, java.time.Duration reloadInterval) {
    this.db = db;
    this.reloadIntervalNanos = reloadInterval.toNanos();
    this.snapshot = load();
  }

  private Snapshot load() {
    FunctionCatalog functions = FunctionCatalog.load(db);
    VoltTable t = db.callAdmin("reading registered graphs", "@AdHoc",
        "SELECT name, definition FROM " + SystemSchema.GRAPHS).getResults()[0];
    Map<String, RegisteredGraph> graphs = new TreeMap<>();
    while (t.advanceRow()) {
      graphs.put(t.getString(0), Json.read(t.getVarbinary(1), RegisteredGraph.class,
          "stored definition of graph '" + t.getString(0) + "'"));
    }
    return new Snapshot(graphs, functions, System.nanoTime());
  }

  /** A graph by name, reloading the catalog if it is unknown and the last load is old enough. */
  public Optional<RegisteredGraph> graph(String name) {
    Snapshot s = snapshot;
    RegisteredGraph g = s.graphs().get(name);
    if (g == null && System.nanoTime() - s.loadedAtNanos() > reloadIntervalNanos) {
      reload();
      g = snapshot.graphs().get(name);
    }
    return Optional.ofNullable(g);
  }

  /** Reads the graphs and functions again. */
  public synchronized void reload() {
    snapshot = load();
  }

  /** The deployed functions as of the last load. */
  public FunctionCatalog functions() {
    return snapshot.functions();
  }

  /** The names of the known graphs. */
  public java.util.Set<String> graphNames() {
    return snapshot.graphs().keySet();
  }
}
