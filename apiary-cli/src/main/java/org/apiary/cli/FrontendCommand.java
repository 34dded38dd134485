package org.apiary.cli;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.DatabaseConfig;
import org.apiary.database.DatabaseUsers;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.FrontendHooks;
import org.apiary.frontend.FrontendServer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** Runs a frontend against a running database until the process is stopped. */
@Command(name = "frontend", mixinStandardHelpOptions = true,
    description = "Serve registered graphs to clients over ZeroMQ, against a running VoltDB.")
public class FrontendCommand implements Callable<Integer> {
  @Option(names = "--database", required = true, split = ",",
      description = "The database's client addresses, host:port[,host:port...].")
  List<String> database;

  @Option(names = "--port", defaultValue = "0", description = "TCP port to listen on; 0 picks a free one (default).")
  int port;

  @Option(names = "--bind", defaultValue = "127.0.0.1",
      description = "Address to listen on (default ${DEFAULT-VALUE}); on a host of its own, the host's address, or "
          + "0.0.0.0 for every interface (then give --advertise).")
  String bind;

  @Option(names = "--advertise", paramLabel = "ADDRESS", description = "The address other hosts reach this frontend "
      + "at, recorded in its lease (`apiary status` shows it) as tcp://ADDRESS:PORT (default: the --bind address; "
      + "required when --bind is a wildcard such as 0.0.0.0).")
  String advertise;

  @Option(names = "--lease-ms", defaultValue = "5000", description = "Lease duration in ms (default ${DEFAULT-VALUE}).")
  long leaseMs;

  @Option(names = "--heartbeat-ms", defaultValue = "1000", description = "Lease renewal interval in ms (default ${DEFAULT-VALUE}).")
  long heartbeatMs;

  @Option(names = "--retention-s", defaultValue = "3600",
      description = "Seconds ended invocations and recorded outputs are kept (default ${DEFAULT-VALUE}).")
  long retentionSeconds;

  @Option(names = "--retention-ms",
      description = "Like --retention-s, in milliseconds; overrides it (for drills and tests).")
  Long retentionMs;

  @Option(names = "--clock-skew-ms", defaultValue = "10000",
      description = "How far a client's clock may lag this frontend's, in ms: a request that arrives later than its "
          + "client waits for it, by more than this, is not started (default ${DEFAULT-VALUE}). Retention must exceed "
          + "the clients' maxAttempts * attemptTimeout plus twice this.")
  long clockSkewMs;

  @Option(names = "--cleanup-ms", defaultValue = "900000",
      description = "How often old invocations and recorded outputs are deleted, in ms (default ${DEFAULT-VALUE}).")
  long cleanupMs;

  @Option(names = "--no-invocation-log", description = "Do not log invocations (no recovery without the client).")
  boolean noInvocationLog;

  @Option(names = "--max-in-flight", defaultValue = "10000", description = "The most invocations run at once; "
      + "beyond it calls are refused as overloaded at once, running nothing (default ${DEFAULT-VALUE}).")
  int maxInFlight;

  @Option(names = "--max-in-flight-per-client", defaultValue = "5000", description = "The most of those one client "
      + "(an API key's identity, or a connection where keys are not required) may have at once; beyond it that "
      + "client's calls are refused as overloaded (default ${DEFAULT-VALUE}).")
  int maxInFlightPerClient;

  @Option(names = "--no-credentials", description = "Serve without requiring API keys: anyone who reaches the "
      + "frontend may call any graph, and the caller recorded in provenance is whatever the client claims. By default "
      + "every call needs a valid API key (runs nothing without one), and the caller recorded is the key's identity; "
      + "keys live in the database (create them with `apiary credentials create`), clients present them with "
      + "`apiary invoke --credential-file`, never on this command line. As `apiary start`.")
  boolean noCredentials;

  /** The default since keys became required by default; kept so existing scripts still start. */
  @Option(names = "--require-credentials", hidden = true)
  boolean requireCredentials;

  @Option(names = "--database-users", paramLabel = "FILE", description = "Where the database's security is on: "
      + "the frontends' login file its start wrote (`apiary cluster start --secure`: DIR/"
      + ServiceDirectory.FRONTEND_DATABASE_USER + "; the whole users file works too, but gives this host the "
      + "administrator's password); the frontend connects as " + DatabaseUsers.FRONTEND_USER + ", which may read "
      + "and call the procedures a frontend needs, and nothing more.")
  java.nio.file.Path databaseUsers;

  @Option(names = "--max-in-flight-mib", defaultValue = "64", description = "The most MiB of requests held by "
      + "running invocations; a request beyond it is refused as overloaded unless nothing runs (default "
      + "${DEFAULT-VALUE}).")
  long maxInFlightMib;

  @Mixin
  WireOptions wireOptions = new WireOptions();

  @Mixin
  MetricsOptions metricsOptions = new MetricsOptions();

  /** The faults to inject: none here (the drills' {@code drill-frontend} injects them). */
  protected FrontendHooks hooks() {
    return FrontendHooks.NONE;
  }

  @Override
  public Integer call() throws InterruptedException {
    if (noCredentials && requireCredentials) {
      throw new CliException("--no-credentials and --require-credentials contradict each other; keys are required "
          + "unless --no-credentials is given");
    }
    if (advertise == null && FrontendConfig.isWildcard(bind)) {
      throw new CliException("--bind " + bind + " listens on every interface, which is no address another host can "
          + "reach: give --advertise ADDRESS, this host's address (it is recorded in the frontend's lease)", 2, null);
    }
    Tracing.installFromEnvironment(System.out); // before the frontend starts: it takes its tracer then
    boolean requireCredentials = !noCredentials;
    Duration retention = retentionMs != null ? Duration.ofMillis(retentionMs) : Duration.ofSeconds(retentionSeconds);
    FrontendConfig config = new FrontendConfig(bind, port, !noInvocationLog, Duration.ofMillis(leaseMs),
        Duration.ofMillis(heartbeatMs), retention, Duration.ofMillis(cleanupMs),
        FrontendConfig.defaults().maxRequestBytes(), maxInFlight, requireCredentials, maxInFlightPerClient,
        maxInFlightMib * 1024L * 1024L, Duration.ofMillis(clockSkewMs), wireOptions.wire())
        .withMetrics(metricsOptions.metrics()).withAdvertisedAddress(advertise);
    DatabaseConfig databaseConfig = DatabaseConfig.external(database.toArray(String[]::new));
    if (databaseUsers != null) {
      databaseConfig = databaseConfig.withLogin(DatabaseUsers.frontendLoginFrom(databaseUsers));
    }
    FrontendHooks hooks = hooks();
    ApiaryDatabase db = ApiaryDatabase.open(databaseConfig);
    FrontendServer server = FrontendServer.start(db, config, hooks);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      server.close();
      db.close();
      stopped.countDown();
    }, "apiary-frontend-shutdown"));
    // A frontend that stops itself (its socket thread failed) ends the process with a non-zero status.
    server.stopped().thenRun(stopped::countDown);
    System.out.println(requireCredentials ? "frontend " + server.id() + ": every call needs a valid API key"
        : "frontend " + server.id() + ": API keys are not required; anyone who reaches it may call any graph");
    System.out.println("frontend " + server.id() + " listening on " + server.endpoint());
    server.metricsUrl().ifPresent(url -> System.out.println("frontend " + server.id() + ": metrics, health and "
        + "readiness at " + url + "/metrics, /health, /ready"));
    System.out.flush();
    stopped.await();
    if (server.failure().isPresent()) {
      System.err.println("frontend " + server.id() + " stopped, its lease released: its socket thread or JeroMQ's I/O "
          + "thread failed: " + server.failure().get());
      return 1; // the shutdown hook closes the database
    }
    return 0;
  }
}
