package org.apiary.console;

import java.time.Duration;
import java.util.Objects;

/**
 * How a console serves.
 *
 * @param bind the address it listens on (loopback by default)
 * @param port its port (0: a free one)
 * @param sinkUrl the provenance sink's JDBC URL, for an execution's function executions; {@code null} if none
 * @param role the role an API key must carry for every request
 * @param queryThreads the most queries run at once, on the console's own pool
 * @param queryTimeout how long one request's queries may take before it is answered {@code 504}
 * @param sinkInProcess whether the sink's database is already open in this process (the service's capture loads it):
 *     the console then shares it (DuckDB opens a file once per process, with one configuration) and reads inside
 *     transactions it rolls back, rather than opening it read-only
 * @param credentialsRequired whether every request needs an API key with {@code role}; {@code false} only where the
 *     service it belongs to serves without keys ({@code apiary start --no-credentials}), on loopback
 * @param spillRoot the provenance spill directory the database servers write their backlog reports under (each
 *     server in a subdirectory of its own), for the cluster page's per-server backlog; {@code null} if not known
 */
public record ConsoleConfig(String bind, int port, String sinkUrl, String role, int queryThreads,
                            Duration queryTimeout, boolean sinkInProcess, boolean credentialsRequired,
                            java.nio.file.Path spillRoot) {
  /** Loopback. */
  public static final String LOOPBACK = "127.0.0.1";

  public ConsoleConfig {
    Objects.requireNonNull(bind, "bind");
    Objects.requireNonNull(role, "role");
    Objects.requireNonNull(queryTimeout, "queryTimeout");
    if (port < 0 || port > 65_535) {
      throw new IllegalArgumentException("the console's port must be 0 to 65535, not " + port);
    }
    if (!credentialsRequired && !LOOPBACK.equals(bind)) {
      throw new IllegalArgumentException("a console without API keys listens on loopback only, not " + bind);
    }
    if (role.isBlank()) {
      throw new IllegalArgumentException("the console's role must not be blank");
    }
    if (queryThreads < 1 || queryThreads > 64) {
      throw new IllegalArgumentException("the console's query threads must be 1 to 64, not " + queryThreads);
    }
    if (queryTimeout.isNegative() || queryTimeout.isZero()) {
      throw new IllegalArgumentException("the console's query timeout must be positive, not " + queryTimeout);
    }
  }

  /** Loopback on {@code port}, no sink, the role {@code admin}, 4 query threads, a 5-s timeout. */
  public static ConsoleConfig defaults(int port) {
    return new ConsoleConfig(LOOPBACK, port, null, org.apiary.AccessPolicy.ADMIN_ROLE, 4, Duration.ofSeconds(5),
        false, true, null);
  }

  public ConsoleConfig withBind(String address) {
    return new ConsoleConfig(address, port, sinkUrl, role, queryThreads, queryTimeout, sinkInProcess,
        credentialsRequired, spillRoot);
  }

  public ConsoleConfig withSink(String url) {
    return new ConsoleConfig(bind, port, url, role, queryThreads, queryTimeout, sinkInProcess,
        credentialsRequired, spillRoot);
  }

  public ConsoleConfig withRole(String name) {
    return new ConsoleConfig(bind, port, sinkUrl, name, queryThreads, queryTimeout, sinkInProcess,
        credentialsRequired, spillRoot);
  }

  public ConsoleConfig withSinkInProcess(boolean inProcess) {
    return new ConsoleConfig(bind, port, sinkUrl, role, queryThreads, queryTimeout, inProcess,
        credentialsRequired, spillRoot);
  }

  public ConsoleConfig withCredentialsRequired(boolean required) {
    return new ConsoleConfig(bind, port, sinkUrl, role, queryThreads, queryTimeout, sinkInProcess, required, spillRoot);
  }

  /** The same, reading the servers' backlog reports under {@code root} ({@code null}: none). */
  public ConsoleConfig withSpillRoot(java.nio.file.Path root) {
    return new ConsoleConfig(bind, port, sinkUrl, role, queryThreads, queryTimeout, sinkInProcess,
        credentialsRequired, root);
  }

  @Override
  public String toString() { // the sink's URL may carry a password
    return "ConsoleConfig[" + bind + ":" + port + ", sink " + (sinkUrl == null ? "none"
        : org.apiary.provenance.ProvenanceSink.redact(sinkUrl)) + ", role " + role + "]";
  }
}
