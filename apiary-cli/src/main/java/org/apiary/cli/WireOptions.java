package org.apiary.cli;

import java.time.Duration;
import org.apiary.frontend.FrontendConfig;
import picocli.CommandLine.Option;

/**
 * The frontend's wire limits as command-line options ({@code FrontendConfig.Wire}), the same for {@code apiary
 * frontend} and {@code apiary start}; defaults are {@link FrontendConfig.Wire#DEFAULTS}.
 */
final class WireOptions {
  @Option(names = "--max-connections", defaultValue = "4096", description = "The most connections held at once, "
      + "and in effect at most half the process's file-descriptor limit, so the database keeps the other half; a "
      + "connection beyond is closed at once (default ${DEFAULT-VALUE}).")
  int maxConnections;

  @Option(names = "--max-connections-per-address", defaultValue = "256", description = "The most of those from one "
      + "remote IP address (default ${DEFAULT-VALUE}).")
  int maxConnectionsPerAddress;

  @Option(names = "--max-unfinished-mib", defaultValue = "32", description = "The most MiB one connection may hold "
      + "in a message it has not finished (frames sent with ZeroMQ's MORE flag); beyond it the connection is closed "
      + "(default ${DEFAULT-VALUE}; in effect at least the frame cap, 8 MiB).")
  long maxUnfinishedMib;

  @Option(names = "--max-unfinished-total-mib", defaultValue = "256", description = "The same over all connections "
      + "(default ${DEFAULT-VALUE}).")
  long maxUnfinishedTotalMib;

  @Option(names = "--wire-timeout-ms", defaultValue = "30000", description = "A connection that answers no "
      + "heartbeat and completes no frame for this long after its handshake, or takes longer over one frame or one "
      + "multi-frame message, is closed (default ${DEFAULT-VALUE}).")
  long wireTimeoutMs;

  /** The limits given. */
  FrontendConfig.Wire wire() {
    try {
      return new FrontendConfig.Wire(maxConnections, maxConnectionsPerAddress, maxUnfinishedMib << 20,
          maxUnfinishedTotalMib << 20, Duration.ofMillis(wireTimeoutMs));
    } catch (IllegalArgumentException e) {
      throw new CliException(e.getMessage(), 2, null);
    }
  }
}
