package org.apiary.server;

import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.apiary.Application;
import org.apiary.DatabaseException;
import org.apiary.QueryResult;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.GraphResult;
import org.apiary.client.InvocationHandle;
import org.apiary.client.InvocationRequest;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.DatabaseConfig;
import org.apiary.database.ProvenanceConfig;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.FrontendServer;
import org.apiary.frontend.Registrar;
import org.apiary.provenance.ProvenanceQueries;
import org.apiary.provenance.ProvenanceSink;
import org.apiary.runtime.procedure.FunctionProcedure;
import org.apiary.runtime.provenance.ServerProvenance;
import org.voltdb.VoltTable;

/**
 * One running Apiary, the front door for a Java program: a database (VoltDB embedded in this process by default, or
 * a cluster it connects to), a frontend on it, a client of that frontend and, where provenance is captured, its
 * queries. What {@code apiary start} runs as a service, a program gets with one call:
 *
 * <pre>{@code
 * try (Apiary apiary = Apiary.start(DatabaseConfig.embedded())) {
 *   apiary.deploy(Shop.application());
 *   GraphResult r = apiary.invoke("checkout", 42L);
 * }
 * }</pre>
 *
 * <p>{@link #deploy} is the one way to register an application (schema, functions, graphs; deploying a changed
 * application again upgrades it), {@link #client()} the one way to call it. Closing stops the client, the frontend
 * and the database (an embedded one with a data directory takes its snapshot first), newest first.
 */
public final class Apiary implements AutoCloseable {
  private final DatabaseConfig databaseConfig;
  private ApiaryDatabase database;
  private FrontendServer frontend;
  private ApiaryClient client;
  private ProvenanceSink provenanceConnection;
  private boolean closed;

  private Apiary(DatabaseConfig databaseConfig) {
    this.databaseConfig = databaseConfig;
  }

  /** Opens the database and starts a frontend with {@link FrontendConfig#defaults()} and a client of it. */
  public static Apiary start(DatabaseConfig database) {
    return start(database, FrontendConfig.defaults());
  }

  /**
   * Opens the database, starts a frontend on it and connects a client.
   *
   * @throws IllegalStateException naming what failed to start; whatever had started is stopped again
   */
  public static Apiary start(DatabaseConfig database, FrontendConfig frontend) {
    Objects.requireNonNull(database, "database");
    Objects.requireNonNull(frontend, "frontend");
    Apiary apiary = new Apiary(database);
    try {
      apiary.database = ApiaryDatabase.open(database);
      apiary.frontend = FrontendServer.start(apiary.database, frontend);
      apiary.client = ApiaryClient.connect(ClientConfig.of(apiary.frontend.endpoint()));
      return apiary;
    } catch (RuntimeException e) {
      IllegalStateException failure = new IllegalStateException("starting Apiary on " + database + " failed: "
          + e.getMessage(), e);
      RuntimeException stopping = apiary.stop();
      if (stopping != null) {
        failure.addSuppressed(stopping);
      }
      throw failure;
    }
  }

  /**
   * Registers an application: loads its schema (new tables and columns), compiles and deploys its functions, and
   * registers its graphs, each under a new version if it changed. Running frontends see the new versions without a
   * restart; invocations that started under an older version finish under it.
   *
   * @return this, for chaining
   */
  public Apiary deploy(Application application) {
    Objects.requireNonNull(application, "application");
    Registrar.register(running().database, application);
    return this;
  }

  /** The client connected to this Apiary's frontend (closed by {@link #close()}; do not close it yourself). */
  public ApiaryClient client() {
    return running().client;
  }

  /** The frontend's address ({@code tcp://host:port}), for clients in other processes. */
  public String endpoint() {
    return running().frontend.endpoint();
  }

  /** Invokes a graph and waits for its outcome: {@code client().invoke(graph, partitionKey, arguments)}. */
  public GraphResult invoke(String graph, Object partitionKey, Object... arguments) {
    return client().invoke(graph, partitionKey, arguments);
  }

  /**
   * Starts a graph without waiting for its outcome, returning once the invocation is durably logged:
   * {@code client().start(graph, partitionKey, arguments)} (see {@link ApiaryClient#start(InvocationRequest)}).
   */
  public InvocationHandle start(String graph, Object partitionKey, Object... arguments) {
    return client().start(graph, partitionKey, arguments);
  }

  /**
   * Starts a graph after a delay, returning once the start is durably stored:
   * {@code client().start(graph, partitionKey, delay, arguments)} (see
   * {@link ApiaryClient#start(org.apiary.client.InvocationRequest, Duration)}).
   */
  public InvocationHandle start(String graph, Object partitionKey, Duration delay, Object... arguments) {
    return client().start(graph, partitionKey, delay, arguments);
  }

  /**
   * Runs a schedule declared with the application now ({@code apiary schedules trigger NAME}): puts a tick at the
   * database's current time on the schedule's queue, whether the schedule is paused or not; it runs as any tick does.
   *
   * @return a handle on the tick's invocation
   * @throws org.apiary.InvalidRequestException if there is no such schedule
   */
  public InvocationHandle trigger(String schedule) {
    Objects.requireNonNull(schedule, "schedule");
    return client().handle(org.apiary.frontend.Schedules.trigger(running().database, schedule).invocationId());
  }

  /**
   * Runs SQL directly against the database, outside any function and outside exactly-once and provenance, for
   * setting up or looking at data: {@code query("SELECT stock FROM products WHERE id = ?", 7L)}. Parameters bind to
   * the {@code ?} in order; timestamps come back as {@link java.time.Instant}.
   */
  public QueryResult query(String sql, Object... parameters) {
    Objects.requireNonNull(sql, "sql");
    Object[] args = new Object[parameters.length + 1];
    args[0] = sql;
    System.arraycopy(parameters, 0, args, 1, parameters.length);
    VoltTable table = running().database.callAdmin("query '" + sql + "'", "@AdHoc", args).getResults()[0];
    String verb = sql.strip().split("\\s+", 2)[0].toUpperCase(Locale.ROOT);
    boolean write = List.of("INSERT", "UPSERT", "UPDATE", "DELETE").contains(verb);
    return FunctionProcedure.toResult(table, write, table.getColumnCount());
  }

  /**
   * Lineage and audit queries over the captured provenance (one connection to the sink, kept until {@link #close()}).
   * Provenance is loaded asynchronously: call {@link #awaitProvenance} first to see everything committed so far.
   *
   * @throws IllegalStateException if this Apiary's database captures no provenance
   * @throws DatabaseException if the sink cannot be reached
   */
  public synchronized ProvenanceQueries provenance() {
    ProvenanceConfig config = running().databaseConfig.provenance();
    if (config == null) {
      throw new IllegalStateException("this Apiary captures no provenance: start it with "
          + "DatabaseConfig.withProvenance(ProvenanceConfig.duckdb(file)) or another sink");
    }
    try {
      if (provenanceConnection == null) {
        provenanceConnection = ProvenanceSink.open(config.sinkUrl(),
            ProvenanceSink.credentials(config.sinkUser(), config.sinkPassword()));
      }
      return new ProvenanceQueries(provenanceConnection.connection());
    } catch (SQLException e) {
      throw new DatabaseException("cannot query provenance in " + config.sinkUrl() + ": " + e.getMessage(), e);
    }
  }

  /**
   * Waits until the provenance of everything committed so far in the embedded database is in the sink.
   *
   * @return false if {@code timeout} passed first
   * @throws IllegalStateException if the database is not embedded here or captures no provenance (a cluster's
   *     servers load their own; query after their flush interval)
   */
  public boolean awaitProvenance(Duration timeout) {
    running();
    ServerProvenance capture = ServerProvenance.active().orElseThrow(() -> new IllegalStateException(
        "no provenance is captured in this process: the database is not embedded here, or captures no provenance"));
    return capture.flush(timeout);
  }

  /** Stops the client, the frontend and the database, newest first. Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    RuntimeException failure = stop();
    if (failure != null) {
      throw failure;
    }
  }

  private synchronized Apiary running() {
    if (closed) {
      throw new IllegalStateException("this Apiary is closed");
    }
    return this;
  }

  /** Stops what started, newest first; returns the first failure, with later ones suppressed. */
  private RuntimeException stop() {
    RuntimeException failure = null;
    for (AutoCloseable c : new AutoCloseable[] {provenanceConnection, client, frontend, database}) {
      if (c == null) {
        continue;
      }
      try {
        c.close();
      } catch (Exception e) {
        if (failure == null) {
          failure = new IllegalStateException("stopping Apiary failed: " + e.getMessage(), e);
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    provenanceConnection = null;
    client = null;
    frontend = null;
    database = null;
    return failure;
  }
}
