package org.apiary.database;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apiary.DatabaseException;
import org.apiary.OutcomeUnknownException;
import org.voltdb.client.Client;
import org.voltdb.client.ClientConfig;
import org.voltdb.client.ClientFactory;
import org.voltdb.client.ClientResponse;
import org.voltdb.client.ProcCallException;

/**
 * A connected VoltDB for Apiary: either one Apiary started in this process (embedded) or a running cluster
 * (external), chosen by {@link DatabaseConfig}. Everything above this class runs the same code on both.
 *
 * <p>Thread-safe. Close it to disconnect (and, when embedded, to stop the database).
 */
public final class ApiaryDatabase implements AutoCloseable {
  private final DatabaseConfig config;
  private final EmbeddedServer server;
  private final Client client;
  private final List<String> addresses;
  /** The gate of a synchronously journaled cluster, or {@code null}. */
  private final ClusterDurability clusterDurability;

  private ApiaryDatabase(DatabaseConfig config, EmbeddedServer server, Client client, List<String> addresses,
                         ClusterDurability clusterDurability) {
    this.config = config;
    this.server = server;
    this.client = client;
    this.addresses = List.copyOf(addresses);
    this.clusterDurability = clusterDurability;
  }

  /**
   * Starts (embedded) or connects to (external) the database.
   *
   * @throws DatabaseException naming the address and reason if the database cannot be started or reached within
   *     {@link DatabaseConfig#connectTimeout()}
   */
  public static ApiaryDatabase open(DatabaseConfig config) {
    EmbeddedServer server = config.isEmbedded() ? EmbeddedServer.start(config) : null;
    List<String> hosts = server != null ? List.of("127.0.0.1:" + server.clientPort()) : config.hosts();
    try {
      Client client = connect(hosts, config.connectTimeout(), config.callTimeout(), config.connectsAs().orElse(null));
      ClusterDurability durability;
      try {
        durability = server == null ? ClusterDurability.detect(client) : null;
      } catch (RuntimeException e) {
        closeQuietly(client);
        throw e;
      }
      return new ApiaryDatabase(config, server, client, hosts, durability);
    } catch (RuntimeException e) {
      if (server != null) {
        server.close();
      }
      throw e;
    }
  }

  /** Opens a client to every address, retrying until {@code timeout}; at least one must answer. */
  public static Client connect(List<String> hostPorts, Duration timeout, Duration callTimeout) {
    return connect(hostPorts, timeout, callTimeout, null);
  }

  /**
   * Opens a client to every address as {@code login} ({@code null}: no user, for a database without security),
   * retrying until {@code timeout}; at least one must answer. A refused login fails at once, naming the user.
   */
  public static Client connect(List<String> hostPorts, Duration timeout, Duration callTimeout, DatabaseLogin login) {
    ClientConfig cc = login == null ? new ClientConfig() : new ClientConfig(login.user(), login.password());
    cc.setProcedureCallTimeout(callTimeout.toMillis());
    cc.setConnectionResponseTimeout(Math.max(callTimeout.toMillis(), 2_000));
    cc.setTopologyChangeAware(hostPorts.size() > 1);
    cc.setReconnectOnConnectionLoss(true);
    Client client = ClientFactory.createClient(cc);
    long deadline = System.nanoTime() + timeout.toNanos();
    List<String> failures = new ArrayList<>();
    int connected = 0;
    for (String hp : hostPorts) {
      DatabaseConfig.HostPort address = DatabaseConfig.parseHost(hp);
      IOException last = null;
      while (true) {
        try {
          client.createConnection(address.host(), address.port());
          connected++;
          break;
        } catch (IOException e) {
          last = e;
          // The server answered and refused: retrying cannot help.
          if (String.valueOf(e.getMessage()).contains("Authentication rejected")) {
            closeQuietly(client);
            throw new DatabaseException("VoltDB at " + address + " refused the login " + (login == null
                ? "without a user: its security is on; connect with a database login (DatabaseConfig.withLogin)"
                : "of user '" + login.user() + "': wrong user or password") + " (" + e.getMessage() + ")", e);
          }
        }
        if (System.nanoTime() > deadline) {
          failures.add(address + " (" + last.getMessage() + ")");
          break;
        }
        sleep(200);
      }
    }
    if (connected == 0) {
      closeQuietly(client);
      throw new DatabaseException("cannot reach VoltDB at " + String.join(", ", failures) + " within " + timeout
          + ": is the database running and the address right?");
    }
    return client;
  }

  /** This database's configuration. */
  public DatabaseConfig config() {
    return config;
  }

  /** The {@code host:port} client addresses other processes can connect to. */
  public List<String> clientAddresses() {
    return addresses;
  }

  /** The embedded server's root directory, if this database is embedded. */
  public Optional<Path> dataDirectory() {
    return server == null ? Optional.empty() : Optional.of(server.root());
  }

  /**
   * The VoltDB client. Runtime-internal: the compiler, the invoker and the frontend call procedures through it;
   * application code never does.
   */
  public Client client() {
    return client;
  }

  /**
   * Runs {@code reply} once every transaction it may report is durable, then (or at once where nothing journals
   * synchronously); if that cannot be confirmed, {@code failed} runs instead with the reason, and the outcome must not
   * be acknowledged (a crash may undo it). Where the database journals synchronously: a server in this process
   * ({@code apiary start}: its journal's watermark, {@link org.apiary.runtime.journal.ServerJournal#whenDurable}),
   * and a cluster this connects to ({@link ClusterDurability}: every replica of every partition has its journal on
   * disk). Call it after the transactions the reply reports have answered. Runtime-internal: frontends and
   * {@code FunctionInvoker} hold their replies with it.
   */
  public void whenDurable(Runnable reply, java.util.function.Consumer<Throwable> failed) {
    ClusterDurability cluster = clusterDurability;
    org.apiary.runtime.journal.ServerJournal.whenDurable(
        cluster == null ? reply : () -> cluster.whenDurable(reply, failed), failed);
  }

  /**
   * Waits until every transaction that answered before this call is durable ({@link #whenDurable}), at most the call
   * timeout: for a caller that acknowledges what a {@link #callAdmin} call did (an API key the CLI says it created).
   *
   * @throws OutcomeUnknownException if that is not confirmed; what {@code what} did may be undone by a crash
   */
  public void awaitDurable(String what) {
    java.util.concurrent.CompletableFuture<Void> durable = new java.util.concurrent.CompletableFuture<>();
    whenDurable(() -> durable.complete(null), durable::completeExceptionally);
    try {
      durable.get(config.callTimeout().toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new OutcomeUnknownException(what + " ran, but the journal could not make it durable, so a crash may undo "
          + "it: " + e.getCause().getMessage(), e.getCause());
    } catch (java.util.concurrent.TimeoutException e) {
      throw new OutcomeUnknownException(what + " ran, but the journal did not confirm it durable within "
          + config.callTimeout(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new OutcomeUnknownException("interrupted while waiting for " + what + " to be durable", e);
    }
  }

  /** Whether replies wait for a synchronously journaled cluster's journals ({@link #whenDurable}). */
  public boolean waitsForClusterJournals() {
    return clusterDurability != null;
  }

  /**
   * Loads application schema: tables, {@code PARTITION TABLE}, replicated tables, indexes, views. The whole text
   * is applied as one batch: all of it or none.
   *
   * @throws DatabaseException with VoltDB's message if the DDL is rejected
   */
  public void loadSchema(String ddl) {
    callAdmin("schema", "@AdHoc", ddl);
  }

  /**
   * Runs a system procedure or DDL that is not a function call, and maps failures to Apiary's exceptions.
   *
   * @param what names the request in error messages, for example "schema"
   */
  public ClientResponse callAdmin(String what, String procedure, Object... params) {
    DatabaseJournal journal = server == null ? null : server.journal();
    if (journal != null && DatabaseJournal.changesOutsideTheJournal(procedure, params)) {
      return journal.unjournaled(() -> call(what, procedure, params));
    }
    return call(what, procedure, params);
  }

  /**
   * Runs one ad-hoc SQL statement as the administrator (with {@code ?} parameters bound to {@code params}) and
   * returns its rows; a write returns one row with the count of rows it changed.
   *
   * @param what names the request in error messages, for example "reading graph versions"
   * @throws DatabaseException with VoltDB's message if the statement is rejected or fails
   * @throws IllegalArgumentException if {@code sql} held more than one statement (read those with
   *     {@link #queryEach})
   */
  public Rows query(String what, String sql, Object... params) {
    List<Rows> results = queryEach(what, sql, params);
    if (results.size() != 1) {
      throw new IllegalArgumentException(what + ": expected the result of one statement, got " + results.size());
    }
    return results.get(0);
  }

  /**
   * Runs ad-hoc SQL of one or more statements (separated by {@code ;}; parameters only with one) as the
   * administrator, as one transaction, and returns each statement's rows in order.
   *
   * @param what names the request in error messages, for example "sql"
   * @throws DatabaseException with VoltDB's message if a statement is rejected or fails (none of them is applied)
   */
  public List<Rows> queryEach(String what, String sql, Object... params) {
    Object[] all = new Object[params.length + 1];
    all[0] = sql;
    System.arraycopy(params, 0, all, 1, params.length);
    return VoltRows.from(callAdmin(what, "@AdHoc", all).getResults());
  }

  /**
   * Runs a system or Apiary procedure as {@link #callAdmin} does and returns the rows of its first result, for
   * example {@code @SystemCatalog} or {@code @SnapshotSave}.
   *
   * @throws IllegalStateException if the procedure returned no result table
   */
  public Rows callAdminForRows(String what, String procedure, Object... params) {
    org.voltdb.VoltTable[] results = callAdmin(what, procedure, params).getResults();
    if (results.length == 0) {
      throw new IllegalStateException(what + ": " + procedure + " returned no result table");
    }
    return VoltRows.from(results[0]);
  }

  private ClientResponse call(String what, String procedure, Object... params) {
    try {
      return client.callProcedure(procedure, params);
    } catch (ProcCallException e) {
      throw failure(what, e.getClientResponse(), e);
    } catch (IOException e) {
      throw new DatabaseException(what + ": cannot reach VoltDB: " + e.getMessage(), e);
    }
  }

  /**
   * Maps a failed response to the exception that says what happened to the request: no answer (outcome unknown),
   * refused before running, or run and rolled back. The one place VoltDB status codes are interpreted.
   *
   * @param what names the request, for example "call to 'deposit'" or "schema"
   */
  public static RuntimeException failure(String what, ClientResponse r, Exception cause) {
    if (r == null) {
      return new DatabaseException(what + " failed: " + cause.getMessage(), cause);
    }
    String status = firstLines(r.getStatusString());
    return switch (r.getStatus()) {
      case ClientResponse.CONNECTION_LOST, ClientResponse.CONNECTION_TIMEOUT, ClientResponse.RESPONSE_UNKNOWN ->
          new OutcomeUnknownException(what + " got no answer from VoltDB; it may or may not have been applied: " + status, cause);
      case ClientResponse.SERVER_UNAVAILABLE, ClientResponse.GRACEFUL_FAILURE ->
          new DatabaseException(what + " was refused by VoltDB; it did not run: " + status, cause);
      default -> new DatabaseException(what + " failed and was rolled back: " + status, cause);
    };
  }

  /** VoltDB's status text: its first three lines, without the Java stack frames VoltDB puts into some. */
  static String firstLines(String s) {
    if (s == null) {
      return "";
    }
    List<String> kept = new java.util.ArrayList<>(3);
    for (String line : s.strip().split("\n")) {
      if (!STACK_FRAME.matcher(line).matches() && kept.size() < 3) {
        kept.add(line);
      }
    }
    return String.join("\n", kept).strip();
  }

  private static final java.util.regex.Pattern STACK_FRAME =
      java.util.regex.Pattern.compile("\\s+at [\\w$.<>/]+\\([^)]*\\)\\s*");

  /**
   * Disconnects; an embedded database stops. One with a data directory first takes a snapshot with every committed
   * transaction (pausing client writes, so none commits after it) and is restored from it on the next open.
   *
   * @throws DatabaseException if that snapshot failed; the database is stopped all the same and its next open
   *     restores the last automatic snapshot
   */
  @Override
  public void close() {
    String stopSnapshot = null;
    try {
      if (server != null && server.journal() != null) {
        server.journal().checkpointForStop();
      } else if (server != null && server.durable()) {
        stopSnapshot = Snapshots.saveForStop(List.of("127.0.0.1:" + server.adminPort()), config.connectTimeout(),
            config.callTimeout(), false, DatabaseUsers.adminOf(config.users()));
      }
    } finally {
      try {
        closeQuietly(client);
      } finally {
        if (server != null) {
          server.close();
          if (stopSnapshot != null) {
            Snapshots.deleteOtherStopSnapshots(Snapshots.snapshotDirectory(server.root()), stopSnapshot);
          }
        }
      }
    }
  }

  private static void closeQuietly(Client c) {
    try {
      c.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DatabaseException("interrupted while connecting to VoltDB", e);
    }
  }
}
