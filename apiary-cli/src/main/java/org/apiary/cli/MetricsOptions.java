package org.apiary.cli;

import org.apiary.frontend.FrontendConfig;
import picocli.CommandLine.Option;

/**
 * The frontend's monitoring endpoint as command-line options ({@code FrontendConfig.Metrics}), the same for
 * {@code apiary frontend} and {@code apiary start}: off unless {@code --metrics-port} is given.
 */
final class MetricsOptions {
  @Option(names = "--metrics-port", paramLabel = "P", description = "Serve GET /metrics (Prometheus text), /health "
      + "and /ready over HTTP on this port (0 picks a free one; the address is printed). Off unless given. No API key "
      + "is asked, as for any Prometheus exporter, so it listens on loopback unless --metrics-bind says otherwise.")
  Integer port;

  @Option(names = "--metrics-bind", paramLabel = "ADDRESS", defaultValue = "127.0.0.1", description = "The address "
      + "the metrics endpoint listens on (default ${DEFAULT-VALUE}); bind it elsewhere only where anyone who reaches "
      + "it may read the numbers.")
  String bind;

  /** The endpoint asked for, or {@link FrontendConfig.Metrics#OFF}. */
  FrontendConfig.Metrics metrics() {
    if (port == null) {
      return FrontendConfig.Metrics.OFF;
    }
    try {
      return new FrontendConfig.Metrics(true, bind, port);
    } catch (IllegalArgumentException e) {
      throw new CliException(e.getMessage(), 2, null);
    }
  }
}
