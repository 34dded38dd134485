package org.apiary.drills;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP forwarder a drill puts between the database servers and the provenance sink, so it can take the sink away
 * mid-run: it listens on a free loopback port and forwards each connection to the sink's host and port.
 * {@link #cut()} resets every live connection and closes new ones as soon as they are accepted, until
 * {@link #restore()}: a network that breaks connections. {@link #blackHole()} keeps every connection open and accepts
 * new ones, but forwards no byte in either direction until {@link #restore()}, which then delivers the held bytes in
 * order: a network that stopped answering. Its threads are daemons; each ends when its sockets close, and
 * {@link #close()} closes all of them.
 */
final class SinkProxy implements AutoCloseable {
  private static final int CONNECT_TIMEOUT_MS = 2_000;

  private final String targetHost;
  private final int targetPort;
  private final ServerSocket server;
  private final Thread acceptor;
  /** Guarded by this. */
  private final Set<Socket> live = new HashSet<>();
  /** Guarded by this. */
  private boolean cut;
  /** Guarded by this: while set, pumps hold what they read instead of forwarding it. */
  private boolean silent;
  private final AtomicInteger accepted = new AtomicInteger();
  private final AtomicInteger reset = new AtomicInteger();

  SinkProxy(String targetHost, int targetPort) throws IOException {
    this.targetHost = targetHost;
    this.targetPort = targetPort;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.acceptor = new Thread(this::acceptLoop, "sink-proxy-accept-" + server.getLocalPort());
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** The loopback port it listens on. */
  int port() {
    return server.getLocalPort();
  }

  /** Connections accepted so far, including those closed at once during a cut. */
  int connectionsAccepted() {
    return accepted.get();
  }

  /** Connections closed by a cut: live ones reset, and new ones closed at once. */
  int connectionsCut() {
    return reset.get();
  }

  /** Resets every live connection; new ones are closed as soon as they are accepted, until {@link #restore()}. */
  synchronized void cut() {
    cut = true;
    for (Socket s : live) {
      resetAndClose(s);
      reset.incrementAndGet();
    }
    live.clear();
    notifyAll(); // pumps held by blackHole() see their sockets closed
  }

  /** Forwards nothing, closes nothing, until {@link #restore()}. */
  synchronized void blackHole() {
    silent = true;
  }

  /** Ends {@link #cut()} and {@link #blackHole()}: new connections are forwarded, held bytes are delivered. */
  synchronized void restore() {
    cut = false;
    silent = false;
    notifyAll();
  }

  @Override
  public void close() {
    try {
      server.close();
    } catch (IOException e) {
      // closing a listening socket: nothing to do about a failure
    }
    synchronized (this) {
      live.forEach(SinkProxy::resetAndClose);
      live.clear();
      notifyAll();
    }
    try {
      acceptor.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void acceptLoop() {
    while (!server.isClosed()) {
      Socket client;
      try {
        client = server.accept();
      } catch (IOException e) {
        return; // closed
      }
      accepted.incrementAndGet();
      Socket upstream = new Socket();
      try {
        client.setTcpNoDelay(true); // Nagle's algorithm and delayed ACKs would stall every round trip
        upstream.setTcpNoDelay(true);
        synchronized (this) {
          if (cut) {
            reset.incrementAndGet();
            resetAndClose(client);
            continue;
          }
        }
        upstream.connect(new InetSocketAddress(targetHost, targetPort), CONNECT_TIMEOUT_MS);
      } catch (IOException e) {
        resetAndClose(client);
        resetAndClose(upstream);
        continue;
      }
      synchronized (this) {
        if (cut || server.isClosed()) {
          reset.incrementAndGet();
          resetAndClose(client);
          resetAndClose(upstream);
          continue;
        }
        live.add(client);
        live.add(upstream);
      }
      pump(client, upstream);
      pump(upstream, client);
    }
  }

  private void pump(Socket from, Socket to) {
    Thread t = new Thread(() -> {
      byte[] buffer = new byte[64 * 1024];
      try {
        InputStream in = from.getInputStream();
        OutputStream out = to.getOutputStream();
        int n;
        while ((n = in.read(buffer)) >= 0) {
          if (!awaitForwarding(from, to)) {
            return;
          }
          out.write(buffer, 0, n);
          out.flush();
        }
      } catch (IOException e) {
        // a cut, or one side closed: the usual end of a pump
      } finally {
        forget(from, to);
      }
    }, "sink-proxy-pump-" + port());
    t.setDaemon(true);
    t.start();
  }

  /** Holds a pump while the proxy is silent; false if its sockets closed meanwhile (or it was interrupted). */
  private synchronized boolean awaitForwarding(Socket from, Socket to) {
    while (silent && !from.isClosed() && !to.isClosed()) {
      try {
        wait(1_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return !from.isClosed() && !to.isClosed();
  }

  private synchronized void forget(Socket a, Socket b) {
    live.remove(a);
    live.remove(b);
    closeQuietly(a);
    closeQuietly(b);
    notifyAll(); // the opposite pump may be held by blackHole()
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // already gone
    }
  }

  /** Closes with a reset (SO_LINGER 0), as a network failure or a killed peer would look. */
  private static void resetAndClose(Socket s) {
    try {
      if (!s.isClosed()) {
        if (s.isConnected()) {
          s.setSoLinger(true, 0);
        }
        s.close();
      }
    } catch (IOException e) {
      // already gone
    }
  }
}
