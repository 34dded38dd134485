package org.apiary.frontend;

import java.time.Duration;
import java.util.Objects;

/**
 * How a frontend runs.
 *
 * @param bindAddress the address its ZeroMQ socket listens on (loopback by default)
 * @param port the TCP port, 0 for a free one
 * @param invocationLog whether invocations keep a stored outcome: those of multi-function graphs that record are
 *     logged before they start and their outcome stored when they end (recovery without the client, results by
 *     ID), those of one-function graphs keep their function's record as the outcome; off, nothing is logged or
 *     stored beyond recorded outputs, and no lease is held
 * @param leaseDuration how long a frontend that stopped renewing its lease is presumed alive
 * @param heartbeatInterval how often the lease is renewed and dead frontends are looked for
 * @param retention how long ended invocations and recorded outputs are kept (a client retry must come sooner); at least
 *     one second in effect (the margin for clock skew between database hosts)
 * @param cleanupInterval how often old invocations and recorded outputs are deleted: a record lives between the
 *     retention and the retention plus this; each pass reads every recorded output once (they have no time index),
 *     so a pass every quarter of the retention costs each record about four reads
 * @param maxRequestBytes the largest request frame accepted; a larger one, up to the hard cap
 *     {@link #maxFrameBytes()} ({@value #FRAME_CAP_FACTOR} times this, at least 8 MiB), gets an error reply that
 *     names its size and this limit, and its connection stays usable; only a frame above the hard cap makes ZeroMQ
 *     drop the connection it came on (the frontend keeps serving every other one)
 * @param maxInFlight the most invocations this frontend runs at once; beyond it new requests are refused at once with
 *     an "overloaded, retry after" error (nothing runs), so neither memory nor the wait grows without bound
 * @param maxInFlightPerClient the most of those one client may have running at once (a client is the key's identity
 *     where credentials are required, else one connection); beyond it that client's new requests are refused as
 *     overloaded, so one busy client cannot take every slot of a frontend others share
 * @param maxInFlightBytes the most bytes of requests this frontend holds in running invocations; a request that
 *     would take them past it is refused at once as overloaded (nothing runs) unless nothing runs here, so a request
 *     up to {@link #maxRequestBytes()} always runs alone; bounds memory where a count of large requests would not
 * @param credentialsRequired whether every request must carry a valid API key ({@link Credentials}); the caller
 *     recorded in provenance is then the key's identity, never what the client says. Off by default for a library
 *     frontend; {@code apiary start} turns it on
 * @param clockSkewAllowance how far a client's clock may lag this frontend's: an invoke request is not started once
 *     this frontend's clock passes the request's expiry ({@code WireRequest.expires}, when its client stops waiting)
 *     by more than this. Exactly-once then holds for copies delivered late (queued for a frontend that was down or
 *     paused) as long as {@link #retention()} exceeds the clients' {@code maxAttempts * attemptTimeout} plus twice
 *     this
 * @param wire the limits on connections and what they send before a request is read ({@link Wire})
 * @param metrics the HTTP endpoint for {@code /metrics}, {@code /health} and {@code /ready} ({@link Metrics}; off by
 *     default)
 * @param advertisedAddress the address other hosts reach this frontend at, advertised in its lease row
 *     ({@code APIARY_FRONTENDS.endpoint}) as {@code tcp://ADDRESS:PORT} with the bound port; {@code null} (the
 *     default) advertises the bound address, which must then not be a wildcard such as {@code 0.0.0.0}
 */
public record FrontendConfig(String bindAddress, int port, boolean invocationLog, Duration leaseDuration,
                             Duration heartbeatInterval, Duration retention, Duration cleanupInterval,
                             int maxRequestBytes, int maxInFlight,
                             boolean credentialsRequired, int maxInFlightPerClient, long maxInFlightBytes,
                             Duration clockSkewAllowance, Wire wire, Metrics metrics,
                             String advertisedAddress) {
  /**
   * What the frontend's socket allows its connections, before any request is read (see the operations guide, "The
   * frontend's wire"). A connection over a limit is closed by JeroMQ's I/O thread and counted by reason
   * ({@link FrontendServer#wireStats()}); the frontend serves every other one.
   *
   * @param maxConnections connections held at once; in effect at most half the process's file-descriptor limit
   *     ({@link #effectiveMaxConnections}), so the frontend never takes the descriptors that an embedded database in
   *     the same process needs for its snapshots, logs and connections
   * @param maxConnectionsPerAddress of those, from one remote IP address, so one host cannot take them all
   * @param maxUnfinishedBytesPerConnection bytes one connection may hold in a message it has not finished (frames sent
   *     with ZeroMQ's MORE flag, each counted at its declared size); in effect at least {@link #maxFrameBytes()}
   * @param maxUnfinishedBytes the same over all connections; in effect at least the bound per connection
   * @param timeout idle timeout after the handshake (a connection that answers no heartbeat, sent every third of
   *     it, and completes no frame), the longest a started frame or multi-frame message may take, and the longest a
   *     connection may take from its accept to the end of its handshake
   */
  public record Wire(int maxConnections, int maxConnectionsPerAddress, long maxUnfinishedBytesPerConnection,
                     long maxUnfinishedBytes, Duration timeout) {
    /** 4,096 connections, 256 per address, 32 MiB unfinished per connection (64 requests of 512 KiB, a client's
     * largest batch), 256 MiB in all, a 30 s timeout. */
    public static final Wire DEFAULTS = new Wire(4096, 256, 32L << 20, 256L << 20, Duration.ofSeconds(30));

    public Wire {
      if (maxConnections < 1 || maxConnectionsPerAddress < 1) {
        throw new IllegalArgumentException("maxConnections and maxConnectionsPerAddress must be at least 1, not "
            + maxConnections + " and " + maxConnectionsPerAddress);
      }
      if (maxUnfinishedBytesPerConnection < 1 || maxUnfinishedBytes < 1) {
        throw new IllegalArgumentException("the unfinished-message bounds must be at least 1 byte, not "
            + maxUnfinishedBytesPerConnection + " and " + maxUnfinishedBytes);
      }
      Objects.requireNonNull(timeout, "timeout");
      if (timeout.toMillis() < 30) {
        throw new IllegalArgumentException("the wire timeout must be at least 30 ms, not " + timeout);
      }
    }
  }

  /** The 13 components before {@link #wire()}, with {@link Wire#DEFAULTS}. */
  public FrontendConfig(String bindAddress, int port, boolean invocationLog, Duration leaseDuration,
                        Duration heartbeatInterval, Duration retention, Duration cleanupInterval, int maxRequestBytes,
                        int maxInFlight, boolean credentialsRequired, int maxInFlightPerClient, long maxInFlightBytes,
                        Duration clockSkewAllowance) {
    this(bindAddress, port, invocationLog, leaseDuration, heartbeatInterval, retention, cleanupInterval,
        maxRequestBytes, maxInFlight, credentialsRequired, maxInFlightPerClient, maxInFlightBytes, clockSkewAllowance,
        Wire.DEFAULTS, Metrics.OFF, null);
  }

  /** The 14 components before {@link #metrics()}, with {@link Metrics#OFF}. */
  public FrontendConfig(String bindAddress, int port, boolean invocationLog, Duration leaseDuration,
                        Duration heartbeatInterval, Duration retention, Duration cleanupInterval, int maxRequestBytes,
                        int maxInFlight, boolean credentialsRequired, int maxInFlightPerClient, long maxInFlightBytes,
                        Duration clockSkewAllowance, Wire wire) {
    this(bindAddress, port, invocationLog, leaseDuration, heartbeatInterval, retention, cleanupInterval,
        maxRequestBytes, maxInFlight, credentialsRequired, maxInFlightPerClient, maxInFlightBytes, clockSkewAllowance,
        wire, Metrics.OFF, null);
  }

  /**
   * A frontend's HTTP endpoint for monitoring (see the operations guide, "Metrics, health and readiness"):
   * {@code GET /metrics} (Prometheus text format: invocations, function executions, the lease, the wire, the JVM),
   * {@code GET /health} (200 while the process serves) and {@code GET /ready} (200 while the frontend holds its
   * lease and the database answers; 503 with the reason otherwise). The endpoint asks for no API key, as Prometheus
   * exporters do, and so listens on loopback by default: bind it elsewhere only on a network where anyone who can
   * reach it may read these numbers (they hold registered graph and function names, never keys, IDs or callers).
   * Its requests are answered on a small pool of their own, never on the frontend's threads.
   *
   * @param enabled whether the endpoint is served (off by default)
   * @param bindAddress the address it listens on (loopback by default)
   * @param port its TCP port, 0 for a free one ({@code FrontendServer#metricsUrl()} tells which)
   */
  public record Metrics(boolean enabled, String bindAddress, int port) {
    /** No endpoint. */
    public static final Metrics OFF = new Metrics(false, "127.0.0.1", 0);

    public Metrics {
      Objects.requireNonNull(bindAddress, "bindAddress");
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException("the metrics port must be 0 (any free port) to 65535, not " + port);
      }
    }

    /** Served on loopback at {@code port} (0: a free one). */
    public static Metrics onLoopback(int port) {
      return new Metrics(true, "127.0.0.1", port);
    }
  }

  /** A copy that serves {@code /metrics}, {@code /health} and {@code /ready} on loopback at {@code port}. */
  public FrontendConfig withMetrics(int port) {
    return withMetrics(Metrics.onLoopback(port));
  }

  /** A copy with another {@link #metrics()} endpoint ({@link Metrics#OFF} for none). */
  public FrontendConfig withMetrics(Metrics value) {
    Objects.requireNonNull(value, "metrics");
    return copy(c -> c.metrics = value);
  }

  /** {@link Wire#maxConnections()} as it applies under a file-descriptor limit: at most half of it. */
  public int effectiveMaxConnections(long fileDescriptorLimit) {
    return (int) Math.max(1, Math.min(wire.maxConnections(), fileDescriptorLimit / 2));
  }

  /** A copy with other {@link #wire()} limits. */
  public FrontendConfig withWire(Wire value) {
    Objects.requireNonNull(value, "wire");
    return copy(c -> c.wire = value);
  }

  /** The default {@link #maxInFlight()}. */
  public static final int DEFAULT_MAX_IN_FLIGHT = 10_000;
  /** The default {@link #maxInFlightPerClient()}: half of {@link #DEFAULT_MAX_IN_FLIGHT}. */
  public static final int DEFAULT_MAX_IN_FLIGHT_PER_CLIENT = 5_000;
  /** The default {@link #maxInFlightBytes()}: 64 MiB of requests (128 of the largest by default). */
  public static final long DEFAULT_MAX_IN_FLIGHT_BYTES = 64L * 1024 * 1024;

  /** {@link #maxFrameBytes()} is this many times {@link #maxRequestBytes()} (or {@link #MIN_FRAME_CAP_BYTES}). */
  public static final int FRAME_CAP_FACTOR = 16;
  /**
   * The least {@link #maxFrameBytes()}: 8 MiB, {@value #FRAME_CAP_FACTOR} times a client's default request limit,
   * so a client at its default limit gets an answer from a frontend with any smaller limit.
   */
  public static final long MIN_FRAME_CAP_BYTES = 8L * 1024 * 1024;

  public FrontendConfig {
    if (maxInFlight < 1) {
      throw new IllegalArgumentException("maxInFlight must be at least 1, not " + maxInFlight);
    }
    if (maxInFlightPerClient < 1) {
      throw new IllegalArgumentException("maxInFlightPerClient must be at least 1, not " + maxInFlightPerClient);
    }
    Objects.requireNonNull(bindAddress, "bindAddress");
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("port must be 0 (any free port) to 65535, not " + port);
    }
    if (heartbeatInterval.compareTo(leaseDuration) >= 0) {
      throw new IllegalArgumentException("the heartbeat interval (" + heartbeatInterval + ") must be shorter than the "
          + "lease (" + leaseDuration + "), or live frontends would be taken for dead");
    }
    if (maxInFlightBytes < 1024) {
      throw new IllegalArgumentException("maxInFlightBytes must be at least 1024, not " + maxInFlightBytes);
    }
    Objects.requireNonNull(clockSkewAllowance, "clockSkewAllowance");
    if (clockSkewAllowance.isNegative()) {
      throw new IllegalArgumentException("clockSkewAllowance must not be negative, not " + clockSkewAllowance);
    }
    Objects.requireNonNull(wire, "wire");
    Objects.requireNonNull(metrics, "metrics");
    if (advertisedAddress != null && (advertisedAddress.isBlank() || isWildcard(advertisedAddress))) {
      throw new IllegalArgumentException("the advertised address must be one other hosts can reach, not '"
          + advertisedAddress + "'");
    }
    if (maxRequestBytes < 1024) {
      throw new IllegalArgumentException("maxRequestBytes must be at least 1024, not " + maxRequestBytes);
    }
  }

  /**
   * The hard cap on a frame: {@value #FRAME_CAP_FACTOR} times {@link #maxRequestBytes()}, at least
   * {@link #MIN_FRAME_CAP_BYTES} (and at most the largest Java array). A frame above {@link #maxRequestBytes()} and
   * up to this gets a "too large" error reply naming its size and the limit, and its connection stays usable; a
   * frame above this makes ZeroMQ drop the connection without a reply.
   *
   * <p>Memory: ZeroMQ allocates a frame's full declared size as soon as its size header arrives, before its bytes
   * do, and while the frontend is busy it queues up to ZeroMQ's default of 1,000 received frames per connection, so
   * one connection that sends frames near this cap can make a busy frontend hold up to 1,000 times this many bytes
   * (a smaller queue cost too much on the request path: see the issue notes). Where untrusted peers can connect,
   * bound the connections and their bandwidth in front of the frontend, or lower {@link #maxRequestBytes()}.
   */
  public long maxFrameBytes() {
    return Math.min(Integer.MAX_VALUE - 8L, Math.max(MIN_FRAME_CAP_BYTES, (long) FRAME_CAP_FACTOR * maxRequestBytes));
  }

  /**
   * Loopback, a free port, invocation log on, 5 s lease, 1 s heartbeat, 1 h retention swept every 15 min, 512 KiB
   * requests, 10,000 invocations in flight, 5,000 of them per client, 64 MiB of requests in flight, 10 s of clock
   * skew allowed.
   */
  public static FrontendConfig defaults() {
    return new FrontendConfig("127.0.0.1", 0, true, Duration.ofSeconds(5), Duration.ofSeconds(1), Duration.ofHours(1),
        Duration.ofMinutes(15), 512 * 1024, DEFAULT_MAX_IN_FLIGHT, false, DEFAULT_MAX_IN_FLIGHT_PER_CLIENT,
        DEFAULT_MAX_IN_FLIGHT_BYTES, DEFAULT_CLOCK_SKEW_ALLOWANCE, Wire.DEFAULTS, Metrics.OFF, null);
  }

  /** A copy listening on another address. */
  public FrontendConfig withBindAddress(String value) {
    return copy(c -> c.bindAddress = value);
  }

  public FrontendConfig withPort(int value) {
    return copy(c -> c.port = value);
  }

  public FrontendConfig withInvocationLog(boolean value) {
    return copy(c -> c.invocationLog = value);
  }

  public FrontendConfig withLease(Duration lease, Duration heartbeat) {
    return copy(c -> {
      c.leaseDuration = lease;
      c.heartbeatInterval = heartbeat;
    });
  }

  public FrontendConfig withRetention(Duration keep, Duration every) {
    return copy(c -> {
      c.retention = keep;
      c.cleanupInterval = every;
    });
  }

  public FrontendConfig withMaxRequestBytes(int value) {
    return copy(c -> c.maxRequestBytes = value);
  }

  public FrontendConfig withMaxInFlight(int value) {
    return copy(c -> {
      c.maxInFlight = value;
      c.maxInFlightPerClient = Math.min(value, maxInFlightPerClient);
    });
  }

  /** A copy with another {@link #maxInFlightPerClient()}. */
  public FrontendConfig withMaxInFlightPerClient(int value) {
    return copy(c -> c.maxInFlightPerClient = value);
  }

  public FrontendConfig withCredentialsRequired(boolean value) {
    return copy(c -> c.credentialsRequired = value);
  }

  /** A copy with another {@link #clockSkewAllowance()}. */
  public FrontendConfig withClockSkewAllowance(Duration value) {
    return copy(c -> c.clockSkewAllowance = value);
  }

  /** The default {@link #clockSkewAllowance()}: clocks kept by NTP agree far more closely. */
  public static final Duration DEFAULT_CLOCK_SKEW_ALLOWANCE = Duration.ofSeconds(10);

  /** A copy with another {@link #maxInFlightBytes()}. */
  public FrontendConfig withMaxInFlightBytes(long value) {
    return copy(c -> c.maxInFlightBytes = value);
  }

  /** The 15 components before {@link #advertisedAddress()}, advertising the bound address. */
  public FrontendConfig(String bindAddress, int port, boolean invocationLog, Duration leaseDuration,
                        Duration heartbeatInterval, Duration retention, Duration cleanupInterval, int maxRequestBytes,
                        int maxInFlight, boolean credentialsRequired, int maxInFlightPerClient, long maxInFlightBytes,
                        Duration clockSkewAllowance, Wire wire, Metrics metrics) {
    this(bindAddress, port, invocationLog, leaseDuration, heartbeatInterval, retention, cleanupInterval,
        maxRequestBytes, maxInFlight, credentialsRequired, maxInFlightPerClient, maxInFlightBytes, clockSkewAllowance,
        wire, metrics, null);
  }

  /** A copy advertising {@code value} in its lease row instead of the bound address ({@code null}: the bound one). */
  public FrontendConfig withAdvertisedAddress(String value) {
    return copy(c -> c.advertisedAddress = value);
  }

  /** Whether {@code address} means every interface ({@code 0.0.0.0}, {@code *}, {@code ::}): no host's address. */
  public static boolean isWildcard(String address) {
    String a = address.strip();
    return a.equals("*") || a.equals("0.0.0.0") || a.equals("::") || a.equals("[::]");
  }

  /** A copy with the components {@code change} sets: each {@code withX} is one, so none lists them all again. */
  private FrontendConfig copy(java.util.function.Consumer<Components> change) {
    Components c = new Components(this);
    change.accept(c);
    return c.build();
  }

  /** The components of a copy being made, set by {@link #copy}'s caller and checked by the constructor. */
  private static final class Components {
    String bindAddress;
    int port;
    boolean invocationLog;
    Duration leaseDuration;
    Duration heartbeatInterval;
    Duration retention;
    Duration cleanupInterval;
    int maxRequestBytes;
    int maxInFlight;
    boolean credentialsRequired;
    int maxInFlightPerClient;
    long maxInFlightBytes;
    Duration clockSkewAllowance;
    Wire wire;
    Metrics metrics;
    String advertisedAddress;

    Components(FrontendConfig from) {
      bindAddress = from.bindAddress;
      port = from.port;
      invocationLog = from.invocationLog;
      leaseDuration = from.leaseDuration;
      heartbeatInterval = from.heartbeatInterval;
      retention = from.retention;
      cleanupInterval = from.cleanupInterval;
      maxRequestBytes = from.maxRequestBytes;
      maxInFlight = from.maxInFlight;
      credentialsRequired = from.credentialsRequired;
      maxInFlightPerClient = from.maxInFlightPerClient;
      maxInFlightBytes = from.maxInFlightBytes;
      clockSkewAllowance = from.clockSkewAllowance;
      wire = from.wire;
      metrics = from.metrics;
      advertisedAddress = from.advertisedAddress;
    }

    FrontendConfig build() {
      return new FrontendConfig(bindAddress, port, invocationLog, leaseDuration, heartbeatInterval, retention,
          cleanupInterval, maxRequestBytes, maxInFlight, credentialsRequired, maxInFlightPerClient, maxInFlightBytes,
          clockSkewAllowance, wire, metrics, advertisedAddress);
    }
  }
}
