package org.apiary.drills;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The sink host of {@link NetworkDrill}: a process in a network namespace of its own that listens on that host's
 * address and forwards each connection to PostgreSQL's Unix socket (a socket file is reached through the file system,
 * so it crosses network namespaces, and the shared server is never touched). The database nodes reach the sink only
 * at this host's address, so the nemesis cuts the sink off by cutting this host's links.
 *
 * <p>Arguments: {@code ADDRESS:PORT SOCKET}. Prints {@link #LISTENING} once it accepts connections.
 */
public final class SinkRelay {
  /** Printed once the relay accepts connections. */
  static final String LISTENING = "sink relay: listening";

  private SinkRelay() {}

  public static void main(String[] args) throws IOException {
    if (args.length != 2) {
      throw new IllegalArgumentException("expected ADDRESS:PORT SOCKET");
    }
    int colon = args[0].lastIndexOf(':');
    InetSocketAddress listen = new InetSocketAddress(args[0].substring(0, colon),
        Integer.parseInt(args[0].substring(colon + 1)));
    Path socket = Path.of(args[1]);
    if (!Files.exists(socket)) {
      throw new IllegalArgumentException("no PostgreSQL socket at " + socket);
    }
    try (ServerSocketChannel server = ServerSocketChannel.open()) {
      server.bind(listen);
      System.out.println(LISTENING + " on " + args[0] + ", forwarding to " + socket);
      System.out.flush();
      while (true) {
        SocketChannel in = server.accept();
        SocketChannel out;
        try {
          out = SocketChannel.open(StandardProtocolFamily.UNIX);
          out.connect(UnixDomainSocketAddress.of(socket));
        } catch (IOException e) {
          System.out.println("sink relay: cannot reach " + socket + ": " + e.getMessage());
          in.close();
          continue;
        }
        pump(in, out);
        pump(out, in);
      }
    }
  }

  /** Copies {@code from} to {@code to} on a daemon thread; the end of either closes both. */
  private static void pump(SocketChannel from, SocketChannel to) {
    Thread t = new Thread(() -> {
      ByteBuffer buf = ByteBuffer.allocateDirect(64 * 1024);
      try (from; to) {
        while (from.read(buf) >= 0) {
          buf.flip();
          while (buf.hasRemaining()) {
            to.write(buf);
          }
          buf.clear();
        }
      } catch (IOException e) {
        // A reset or a close from either side ends the connection; the peer sees it end as the network would show.
        System.out.println("sink relay: a connection ended: " + e.getMessage());
      }
    }, "sink-relay-pump");
    t.setDaemon(true);
    t.start();
  }
}
