package org.apiary.provenance.loader;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.apiary.provenance.DiskSpaceGuard;
import org.apiary.provenance.ProvenanceSchema;
import org.apiary.provenance.ProvenanceSink;

/**
 * The provenance loader run apart from the database servers: takes the batches their spoolers send
 * ({@link LoaderClient}, over {@link LoaderProtocol}) and loads each into the analytical database in one transaction,
 * answering only once it committed.
 *
 * <p>Exactly once. A load the client saw fail is sent again marked as not fresh, and loaded skipping rows whose key
 * is present, so a batch the loader committed but whose answer was lost is not loaded twice. Such a resend may come
 * on a new connection while the first connection's load is still running here; so each client identity's loads run
 * one at a time, and a client's new connection supersedes its earlier ones: its hello waits for their load in
 * progress to end, and they load nothing more.
 *
 * <p>Who may load. With a secret ({@link Settings#secret()}), a client whose hello does not present it is refused
 * before it loads anything. Without one, anyone who reaches the port may add rows to the provenance tables.
 *
 * <p>Untrusted input. Frames over {@link LoaderProtocol#MAX_FRAME_BYTES}, a first frame that is not a hello, and
 * frames that do not decode are answered with an error and the connection closed; rows that do not fit their table
 * are answered with an error and the connection kept. Neither stops the loader. The frames held in memory at once
 * are bounded ({@code maxBufferedBytes}), as are the connections ({@code maxConnections}) and the time a frame may
 * take to arrive once started.
 *
 * <p>Each connection loads through its own {@link ProvenanceSink}, opened when its first load comes and again after a
 * failure. A DuckDB sink's file is a file this process writes: while its volume is short of the reserve
 * ({@link DiskSpaceGuard}), loads are answered with an error (the servers keep their rows and retry).
 */
public final class LoaderServer implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(LoaderServer.class.getName());
  /** How long a connection may stay silent between frames before the loader closes it. */
  private static final Duration IDLE_TIMEOUT = Duration.ofHours(1);

  /**
   * What {@link #start} needs.
   *
   * @param secret the shared secret every client's hello must present, or {@code null} to take any client; never
   *     shown by {@link #toString()}
   * @param frameTimeout how long a frame may take to arrive whole once its first byte came (default 60 s): a client
   *     that trickles a frame holds its connection and its share of {@code maxBufferedBytes} no longer
   */
  public record Settings(String sinkUrl, Properties sinkProperties, InetSocketAddress listen, Duration sinkTimeout,
                         int maxConnections, long maxBufferedBytes, long diskReserveBytes, String secret,
                         Duration frameTimeout) {
    /** Validates. */
    public Settings {
      Objects.requireNonNull(sinkUrl, "sinkUrl");
      Objects.requireNonNull(listen, "listen");
      Objects.requireNonNull(sinkTimeout, "sinkTimeout");
      sinkProperties = sinkProperties == null ? new Properties() : sinkProperties;
      if (maxConnections < 1) {
        throw new IllegalArgumentException("maxConnections must be at least 1, not " + maxConnections);
      }
      if (maxBufferedBytes < LoaderProtocol.MAX_FRAME_BYTES) {
        throw new IllegalArgumentException("maxBufferedBytes must hold one frame of " + LoaderProtocol.MAX_FRAME_BYTES
            + " bytes");
      }
      if (secret != null && secret.isEmpty()) {
        throw new IllegalArgumentException("an empty secret is none: give null");
      }
      Objects.requireNonNull(frameTimeout, "frameTimeout");
      if (frameTimeout.toMillis() < 1) {
        throw new IllegalArgumentException("frameTimeout must be at least 1 ms, not " + frameTimeout);
      }
    }

    /** These settings with another {@link #frameTimeout()}. */
    public Settings withFrameTimeout(Duration value) {
      return new Settings(sinkUrl, sinkProperties, listen, sinkTimeout, maxConnections, maxBufferedBytes,
          diskReserveBytes, secret, value);
    }

    /** These settings with clients required to present {@code value}. */
    public Settings withSecret(String value) {
      return new Settings(sinkUrl, sinkProperties, listen, sinkTimeout, maxConnections, maxBufferedBytes,
          diskReserveBytes, value, frameTimeout);
    }

    /** Loads into {@code sinkUrl}, listening on {@code listen}, with the defaults otherwise. */
    public static Settings of(String sinkUrl, Properties sinkProperties, InetSocketAddress listen) {
      return new Settings(sinkUrl, sinkProperties, listen, ProvenanceSink.DEFAULT_TIMEOUT, 256, 256L << 20,
          DiskSpaceGuard.DEFAULT_RESERVE_BYTES, null, Duration.ofSeconds(60));
    }

    @Override
    public String toString() {
      return "Settings[sinkUrl=" + ProvenanceSink.redact(sinkUrl) + ", listen=" + listen + ", secret="
          + (secret == null ? "none" : "(hidden)") + "]"; // no properties: they may hold the password
    }
  }

  /** Counts since start. */
  public record Stats(long connections, long batchesLoaded, long rowsLoaded, long loadsFailed, long framesRefused) {}

  private final Settings settings;
  private final ServerSocket serverSocket;
  private final Thread acceptor;
  private final DiskSpaceGuard disk;
  private final Semaphore connectionSlots;
  private final Semaphore bufferedBytes;
  private final Map<String, ClientState> clients = new ConcurrentHashMap<>();
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private final AtomicLong connections = new AtomicLong();
  private final AtomicLong batchesLoaded = new AtomicLong();
  private final AtomicLong rowsLoaded = new AtomicLong();
  private final AtomicLong loadsFailed = new AtomicLong();
  private final AtomicLong framesRefused = new AtomicLong();
  private volatile boolean closed;

  /**
   * Per client identity with a connection open: the lock its loads take and its newest connection. Dropped with its
   * last connection, so identities that come and go do not accumulate.
   */
  private static final class ClientState {
    final ReentrantLock lock = new ReentrantLock();
    /** The newest connection's number; guarded by lock. */
    long epoch;
    /** Connections holding this state; changed only inside {@code clients.compute}. */
    int users;
  }

  private LoaderServer(Settings settings, ServerSocket serverSocket) {
    this.settings = settings;
    this.serverSocket = serverSocket;
    this.disk = DiskSpaceGuard.reserving(settings.diskReserveBytes());
    this.connectionSlots = new Semaphore(settings.maxConnections());
    this.bufferedBytes = new Semaphore((int) Math.min(Integer.MAX_VALUE, settings.maxBufferedBytes()));
    this.acceptor = new Thread(this::acceptLoop, "apiary-loader-accept");
    this.acceptor.setDaemon(true);
  }

  /**
   * Starts listening. Connects to the sink once to check it (and creates {@code FunctionInvocations} and its view),
   * so a wrong URL or password fails here rather than at the first load.
   *
   * @throws SQLException if the sink cannot be opened
   * @throws UncheckedIOException if the address cannot be listened on
   */
  public static LoaderServer start(Settings settings) throws SQLException {
    try (ProvenanceSink sink = ProvenanceSink.open(settings.sinkUrl(), settings.sinkProperties(),
        settings.sinkTimeout())) {
      prepare(sink);
    }
    ServerSocket socket;
    try {
      socket = new ServerSocket();
      socket.setReuseAddress(true);
      InetSocketAddress listen = settings.listen().isUnresolved()
          ? new InetSocketAddress(settings.listen().getHostString(), settings.listen().getPort()) : settings.listen();
      socket.bind(listen, 128);
    } catch (IOException e) {
      throw new UncheckedIOException("the provenance loader cannot listen on "
          + LoaderProtocol.format(settings.listen()) + ": " + e.getMessage(), e);
    }
    LoaderServer server = new LoaderServer(settings, socket);
    server.acceptor.start();
    LOG.log(System.Logger.Level.INFO, "provenance loader listening on " + server.address() + ", loading into "
        + ProvenanceSink.redact(settings.sinkUrl()));
    return server;
  }

  private static void prepare(ProvenanceSink sink) throws SQLException {
    sink.ensureTable(ProvenanceSchema.functionInvocations());
    sink.ensureView(ProvenanceSchema.FUNCTION_EXEC_TIMES_VIEW);
  }

  /** The address it listens on ({@code host:port}, the port chosen if 0 was asked). */
  public String address() {
    return LoaderProtocol.format(new InetSocketAddress(settings.listen().getHostString(), serverSocket.getLocalPort()));
  }

  /** The port it listens on. */
  public int port() {
    return serverSocket.getLocalPort();
  }

  /** Counts since start. */
  public Stats stats() {
    return new Stats(connections.get(), batchesLoaded.get(), rowsLoaded.get(), loadsFailed.get(),
        framesRefused.get());
  }

  /** Client identities with a connection open (tests). */
  int clientsTracked() {
    return clients.size();
  }

  private void acceptLoop() {
    long number = 0;
    while (!closed) {
      Socket socket;
      try {
        socket = serverSocket.accept();
      } catch (IOException e) {
        if (!closed) {
          LOG.log(System.Logger.Level.ERROR, "the provenance loader stopped accepting connections: " + e.getMessage(),
              e);
        }
        return;
      }
      if (!connectionSlots.tryAcquire()) {
        refuseAndClose(socket, "the loader serves " + settings.maxConnections() + " connections already");
        continue;
      }
      open.add(socket);
      Thread handler = new Thread(() -> serve(socket), "apiary-loader-connection-" + (++number));
      handler.setDaemon(true);
      handler.start();
    }
  }

  private void refuseAndClose(Socket socket, String why) {
    framesRefused.incrementAndGet();
    LOG.log(System.Logger.Level.WARNING, "provenance loader refused " + socket.getRemoteSocketAddress() + ": " + why);
    try (socket) {
      socket.setSoTimeout((int) settings.frameTimeout().toMillis());
      LoaderProtocol.error(true, null, why).writeTo(socket.getOutputStream());
    } catch (IOException e) {
      LOG.log(System.Logger.Level.DEBUG, "could not tell " + socket.getRemoteSocketAddress() + " why", e);
    }
  }

  private final LoaderProtocol.ByteBudget budget = new LoaderProtocol.ByteBudget() {
    @Override
    public void acquire(int bytes) throws IOException {
      try {
        if (!bufferedBytes.tryAcquire(bytes, settings.frameTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
          throw new IOException("the loader holds " + settings.maxBufferedBytes() + " bytes of frames already and "
              + "not enough was freed within " + describe(settings.frameTimeout()));
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new java.io.InterruptedIOException("interrupted while waiting for room for a frame");
      }
    }

    @Override
    public void release(int bytes) {
      bufferedBytes.release(bytes);
    }
  };

  /** One connection: a hello, then loads, each answered, until the client closes or a frame is refused. */
  private void serve(Socket socket) {
    connections.incrementAndGet();
    String peer = String.valueOf(socket.getRemoteSocketAddress());
    ProvenanceSink sink = null;
    String identity = null;
    try (socket) {
      socket.setTcpNoDelay(true);
      socket.setKeepAlive(true);
      DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 1 << 16));
      OutputStream out = new BufferedOutputStream(socket.getOutputStream(), 1 << 16);
      ClientState client;
      long epoch;
      try {
        LoaderProtocol.Frame hello = LoaderProtocol.readFrame(in, LoaderProtocol.MAX_HELLO_BYTES, budget,
            frameTimer(socket));
        if (hello == null) {
          return;
        }
        LoaderProtocol.Hello introduced;
        try {
          introduced = LoaderProtocol.readHello(hello);
        } finally {
          budget.release(hello.bytes());
        }
        if (!secretMatches(introduced.secret())) {
          refuse(out, peer, true, "the loader takes only clients that present its secret, and this one presented "
              + (introduced.secret().isEmpty() ? "none" : "another"));
          return;
        }
        identity = introduced.identity();
        client = clients.compute(identity, (k, state) -> {
          ClientState held = state == null ? new ClientState() : state;
          held.users++;
          return held;
        });
        if (!client.lock.tryLock(settings.sinkTimeout().toMillis() * 4, TimeUnit.MILLISECONDS)) {
          refuse(out, peer, false, "an earlier connection of " + identity + " is still loading; try again");
          return;
        }
        try {
          epoch = ++client.epoch;
        } finally {
          client.lock.unlock();
        }
        new LoaderProtocol.FrameWriter(LoaderProtocol.WELCOME).putString(ProvenanceSink.redact(settings.sinkUrl()))
            .writeTo(out);
      } catch (LoaderProtocol.MalformedFrameException e) {
        refuse(out, peer, true, e.getMessage());
        return;
      }
      while (!closed) {
        socket.setSoTimeout((int) IDLE_TIMEOUT.toMillis());
        LoaderProtocol.Frame frame;
        try {
          in.mark(1);
          if (in.read() < 0) {
            return; // the client closed the connection between frames
          }
          in.reset();
          frame = LoaderProtocol.readFrame(in, LoaderProtocol.MAX_FRAME_BYTES, budget, frameTimer(socket));
          if (frame == null) {
            return;
          }
        } catch (LoaderProtocol.MalformedFrameException e) {
          refuse(out, peer, true, e.getMessage());
          return;
        }
        // The frame's bytes stay counted until its rows are loaded: they, decoded, are what it holds in memory.
        try {
          if (frame.type() != LoaderProtocol.LOAD) {
            throw new LoaderProtocol.MalformedFrameException("a frame of type " + (frame.type() & 0xFF)
                + " where a load was expected");
          }
          LoaderProtocol.Load load = LoaderProtocol.readLoad(frame);
          sink = loadOne(identity, client, epoch, load, sink, out, peer);
        } catch (LoaderProtocol.MalformedFrameException e) {
          refuse(out, peer, true, e.getMessage());
          return;
        } catch (Superseded e) {
          sink = null; // closed by loadOne
          return;
        } finally {
          budget.release(frame.bytes());
        }
      }
    } catch (EOFException | SocketException e) {
      LOG.log(System.Logger.Level.DEBUG, "provenance loader connection from " + peer + " ended: " + e.getMessage());
    } catch (SocketTimeoutException e) {
      LOG.log(System.Logger.Level.INFO, "provenance loader connection from " + peer + " timed out; closed");
    } catch (IOException | RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, "provenance loader connection from " + peer + " failed: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      closeSink(sink);
      if (identity != null) {
        clients.compute(identity, (k, state) -> state == null || --state.users == 0 ? null : state);
      }
      open.remove(socket);
      connectionSlots.release();
    }
  }

  /**
   * Loads one batch under the client's lock and answers it; returns the sink to use for the next (null after a
   * failure, which closed it).
   *
   * @throws Superseded if a newer connection of the client took over: it was told so, and the sink is closed
   */
  private ProvenanceSink loadOne(String identity, ClientState client, long epoch, LoaderProtocol.Load load,
                                 ProvenanceSink sink, OutputStream out, String peer)
      throws IOException, InterruptedException, Superseded {
    if (!client.lock.tryLock(settings.sinkTimeout().toMillis() * 4, TimeUnit.MILLISECONDS)) {
      LoaderProtocol.error(false, "08006", "another connection of " + identity + " is still loading; try again")
          .writeTo(out);
      return sink;
    }
    int added;
    try {
      if (client.epoch != epoch) {
        throw new Superseded();
      }
      Optional<String> shortage = ProvenanceSink.localFile(settings.sinkUrl())
          .flatMap(f -> disk.shortage(f, "the provenance database"));
      if (shortage.isPresent()) {
        loadsFailed.incrementAndGet();
        LoaderProtocol.error(false, "53100", "loading paused: " + shortage.get()).writeTo(out);
        return sink;
      }
      if (sink == null) {
        sink = ProvenanceSink.open(settings.sinkUrl(), settings.sinkProperties(), settings.sinkTimeout());
        prepare(sink);
      }
      sink.ensureTable(load.table());
      if (load.fresh()) {
        sink.append(load.table(), load.rows());
        added = -1;
      } else {
        added = sink.load(load.table(), load.rows());
      }
    } catch (Superseded e) {
      closeSink(sink);
      LoaderProtocol.error(true, "08006", "a newer connection of " + identity + " superseded this one")
          .writeTo(out);
      throw e;
    } catch (IllegalArgumentException e) {
      // The rows do not fit their table: every attempt would fail alike, and the connection is still in step.
      framesRefused.incrementAndGet();
      loadsFailed.incrementAndGet();
      LOG.log(System.Logger.Level.WARNING, "provenance loader refused a load from " + peer + ": " + e.getMessage());
      LoaderProtocol.error(false, "22000", "refused: " + e.getMessage()).writeTo(out);
      return sink;
    } catch (SQLException e) {
      loadsFailed.incrementAndGet();
      LOG.log(System.Logger.Level.WARNING, "provenance load from " + peer + " failed: " + e.getMessage());
      closeSink(sink);
      LoaderProtocol.error(false, e.getSQLState(), e.getMessage()).writeTo(out);
      return null;
    } finally {
      client.lock.unlock();
    }
    batchesLoaded.incrementAndGet();
    rowsLoaded.addAndGet(load.rows().size());
    new LoaderProtocol.FrameWriter(LoaderProtocol.ACK).putInt(added).writeTo(out);
    return sink;
  }

  /** A timer for one frame: its reads together may take at most the frame timeout, from now. */
  private LoaderProtocol.ReadTimer frameTimer(Socket socket) {
    long deadline = System.nanoTime() + settings.frameTimeout().toNanos();
    return () -> {
      long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
      if (left < 1) {
        throw new SocketTimeoutException("a frame did not arrive whole within the frame timeout of "
            + describe(settings.frameTimeout()));
      }
      socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, left));
    };
  }

  /** Whether a hello's secret is the loader's (any, if it has none); compared in constant time. */
  private boolean secretMatches(String presented) {
    if (settings.secret() == null) {
      return true;
    }
    try {
      java.security.MessageDigest sha = java.security.MessageDigest.getInstance("SHA-256");
      byte[] expected = sha.digest(settings.secret().getBytes(java.nio.charset.StandardCharsets.UTF_8));
      byte[] given = sha.digest(presented.getBytes(java.nio.charset.StandardCharsets.UTF_8));
      return java.security.MessageDigest.isEqual(expected, given);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("this JVM has no SHA-256, which every Java platform must have", e);
    }
  }

  /** Thrown under a client's lock when a newer connection of the client took over. */
  private static final class Superseded extends Exception {
    Superseded() {
      super(null, null, false, false);
    }
  }

  private void refuse(OutputStream out, String peer, boolean fatal, String why) throws IOException {
    framesRefused.incrementAndGet();
    LOG.log(System.Logger.Level.WARNING, "provenance loader refused input from " + peer + ": " + why
        + (fatal ? "; connection closed" : ""));
    LoaderProtocol.error(fatal, null, why).writeTo(out);
  }

  private static String describe(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
  }

  private static void closeSink(ProvenanceSink sink) {
    if (sink != null) {
      try {
        sink.close();
      } catch (SQLException e) {
        LOG.log(System.Logger.Level.DEBUG, "closing a provenance loader's sink failed", e);
      }
    }
  }

  /** Stops accepting, closes every connection (a load in progress is rolled back by its failure or committed). */
  @Override
  public void close() {
    closed = true;
    try {
      serverSocket.close();
    } catch (IOException e) {
      LOG.log(System.Logger.Level.WARNING, "closing the provenance loader's socket failed: " + e.getMessage());
    }
    for (Socket socket : open) {
      try {
        socket.close();
      } catch (IOException e) {
        LOG.log(System.Logger.Level.DEBUG, "closing a provenance loader connection failed", e);
      }
    }
    try {
      acceptor.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public String toString() {
    return "LoaderServer[" + address() + " -> " + ProvenanceSink.redact(settings.sinkUrl()) + "]";
  }
}
