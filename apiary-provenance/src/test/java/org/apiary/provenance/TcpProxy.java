package org.apiary.provenance;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A TCP proxy on a free loopback port forwarding to a loopback port, which a test can cut: {@link #cut()} closes
 * every live connection and refuses new ones (accepting and closing them at once) until {@link #restore()}. It can
 * also go silent: {@link #blackHole()} keeps every connection open, accepts new ones, and forwards no byte in either
 * direction until {@link #restore()}, which then delivers the held bytes in order (a network that stopped answering,
 * not one that broke connections). All its threads are daemons and end when their sockets close.
 */
public final class TcpProxy implements AutoCloseable {
  private final int targetPort;
  private final ServerSocket server;
  private final Thread acceptor;
  /** Guarded by this. */
  private final Set<Socket> live = new HashSet<>();
  /** Guarded by this. */
  private boolean cut;
  /** Guarded by this: while set, pumps hold what they read instead of forwarding it. */
  private boolean silent;
  private volatile int connectionsAccepted;

  public TcpProxy(int targetPort) throws IOException {
    this.targetPort = targetPort;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.acceptor = new Thread(this::acceptLoop, "tcp-proxy-accept-" + server.getLocalPort());
    acceptor.setDaemon(true);
    acceptor.start();
  }

  public int port() {
    return server.getLocalPort();
  }

  public int connectionsAccepted() {
    return connectionsAccepted;
  }

  /** Closes every live connection; new ones are closed as soon as they are accepted, until restore(). */
  public synchronized void cut() {
    cut = true;
    for (Socket socket : live) {
      closeSocket(socket);
    }
    live.clear();
    notifyAll(); // pumps held by blackHole() see their sockets closed
  }

  /**
   * Stops forwarding without closing anything: live connections stay open, new ones are accepted (and connected
   * upstream), but no byte reaches the other side until {@link #restore()}.
   */
  public synchronized void blackHole() {
    silent = true;
  }

  /** Ends {@link #cut()} and {@link #blackHole()}: new connections are forwarded, held bytes are delivered. */
  public synchronized void restore() {
    cut = false;
    silent = false;
    notifyAll();
  }

  @Override
  public void close() throws IOException {
    server.close();
    cut();
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
        return; // server socket closed by close()
      }
      connectionsAccepted++;
      Socket upstream = new Socket();
      try {
        client.setTcpNoDelay(true); // without it Nagle's algorithm and delayed ACKs stall every round trip
        upstream.setTcpNoDelay(true);
        upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort), 2_000);
      } catch (IOException e) {
        closeSocket(client);
        closeSocket(upstream);
        continue;
      }
      synchronized (this) {
        if (cut) {
          closeSocket(client);
          closeSocket(upstream);
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
    Thread thread = new Thread(() -> {
      byte[] buffer = new byte[64 * 1024];
      try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
        int n;
        while ((n = in.read(buffer)) >= 0) {
          awaitForwarding(from, to);
          out.write(buffer, 0, n);
          out.flush();
        }
      } catch (SocketException e) {
        // the connection was cut or closed by one side: the usual end of a pump
      } catch (IOException e) {
        throw new java.io.UncheckedIOException("proxy pump failed", e);
      } finally {
        forget(List.of(from, to));
      }
    }, "tcp-proxy-pump");
    thread.setDaemon(true);
    thread.start();
  }

  /** Holds a pump while the proxy is silent, until restore() or either socket closes. */
  private synchronized void awaitForwarding(Socket from, Socket to) {
    while (silent && !from.isClosed() && !to.isClosed()) {
      try {
        wait();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  private synchronized void forget(List<Socket> sockets) {
    for (Socket socket : sockets) {
      closeSocket(socket);
      live.remove(socket);
    }
    notifyAll(); // the opposite pump may be held by blackHole()
  }

  private static void closeSocket(Socket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("closing a proxied socket failed", e);
    }
  }
}
