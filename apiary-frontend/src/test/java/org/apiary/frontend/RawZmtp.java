package org.apiary.frontend;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A hostile peer's side of ZeroMQ's wire (ZMTP 3.0, NULL mechanism) on a plain TCP socket: it speaks as much of the
 * protocol as a test asks, and no more (a greeting and no handshake, a handshake and silence, frames with the MORE
 * flag and never a last one, a frame that declares a size and stops).
 */
final class RawZmtp implements AutoCloseable {
  private final Socket socket;
  private final OutputStream out;
  private final DataInputStream in;

  private RawZmtp(Socket socket) throws IOException {
    this.socket = socket;
    this.out = socket.getOutputStream();
    this.in = new DataInputStream(socket.getInputStream());
  }

  /** Connects from {@code local} (any loopback address, so tests can be several hosts) to a frontend's endpoint. */
  static RawZmtp connect(String endpoint, String local) throws IOException {
    String hostPort = endpoint.substring("tcp://".length());
    int colon = hostPort.lastIndexOf(':');
    Socket s = new Socket();
    s.bind(new InetSocketAddress(InetAddress.getByName(local), 0));
    s.connect(new InetSocketAddress(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1))),
        5_000);
    s.setSoTimeout(5_000);
    return new RawZmtp(s);
  }

  /** Sends a ZMTP 3.0 greeting for the NULL mechanism. */
  RawZmtp greet() throws IOException {
    byte[] g = new byte[64];
    g[0] = (byte) 0xff;
    g[9] = 0x7f;
    g[10] = 3;
    byte[] mechanism = "NULL".getBytes(StandardCharsets.US_ASCII);
    System.arraycopy(mechanism, 0, g, 12, mechanism.length);
    out.write(g);
    out.flush();
    return this;
  }

  /**
   * Greets, sends a DEALER's READY and reads the frontend's greeting and READY: the connection is then past its
   * handshake.
   *
   * @throws IOException if the frontend closed the connection instead (a refused connection)
   */
  RawZmtp handshake() throws IOException {
    greet();
    ByteBuffer ready = ByteBuffer.allocate(64);
    ready.put((byte) 5).put("READY".getBytes(StandardCharsets.US_ASCII));
    byte[] name = "Socket-Type".getBytes(StandardCharsets.US_ASCII);
    byte[] value = "DEALER".getBytes(StandardCharsets.US_ASCII);
    ready.put((byte) name.length).put(name).putInt(value.length).put(value);
    byte[] body = java.util.Arrays.copyOf(ready.array(), ready.position());
    out.write(new byte[] {0x04, (byte) body.length});
    out.write(body);
    out.flush();
    in.readFully(new byte[64]); // the frontend's greeting
    int flags = in.readUnsignedByte();
    long size = (flags & 2) != 0 ? in.readLong() : in.readUnsignedByte();
    if ((flags & 4) == 0 || size > 1024) {
      throw new IOException("expected the frontend's READY command, got flags " + flags + " and size " + size);
    }
    in.readFully(new byte[(int) size]);
    return this;
  }

  /** Sends a frame's header: flags (MORE if {@code more}) and its size, in the long form above 255 bytes. */
  void header(long size, boolean more) throws IOException {
    if (size > 255) {
      out.write((more ? 1 : 0) | 2);
      out.write(ByteBuffer.allocate(8).putLong(size).array());
    } else {
      out.write(more ? 1 : 0);
      out.write((int) size);
    }
  }

  /** Sends a whole frame. */
  void frame(byte[] body, boolean more) throws IOException {
    header(body.length, more);
    out.write(body);
  }

  void write(byte[] bytes) throws IOException {
    out.write(bytes);
    out.flush();
  }

  /**
   * Whether the frontend closes the connection within {@code within}: reads (and drops what it reads, such as
   * heartbeats) until end of stream or a reset.
   */
  boolean closedWithin(Duration within) {
    long deadline = System.nanoTime() + within.toNanos();
    byte[] sink = new byte[4096];
    try {
      InputStream raw = socket.getInputStream();
      while (System.nanoTime() < deadline) {
        socket.setSoTimeout((int) Math.max(1, Math.min(500, (deadline - System.nanoTime()) / 1_000_000)));
        try {
          if (raw.read(sink) < 0) {
            return true;
          }
        } catch (SocketTimeoutException e) {
          // still open: look again until the deadline
        }
      }
      return false;
    } catch (EOFException e) {
      return true;
    } catch (IOException e) {
      return true; // reset by the frontend
    }
  }

  /**
   * Behaves as a live ZeroMQ peer would between messages: answers each of the frontend's PING commands with a PONG
   * (ZMTP 3.1), dropping anything else it reads, until the frontend closes the connection; whether it did within
   * {@code within}.
   */
  boolean answerPingsUntilClosedWithin(Duration within) {
    long deadline = System.nanoTime() + within.toNanos();
    try {
      while (System.nanoTime() < deadline) {
        socket.setSoTimeout((int) Math.max(1, Math.min(500, (deadline - System.nanoTime()) / 1_000_000)));
        int flags;
        try {
          flags = in.readUnsignedByte();
        } catch (SocketTimeoutException e) {
          continue; // nothing yet: look again until the deadline
        }
        socket.setSoTimeout(5_000); // a frame begun is read whole
        long size = (flags & 2) != 0 ? in.readLong() : in.readUnsignedByte();
        byte[] body = new byte[(int) size];
        in.readFully(body);
        if ((flags & 4) != 0 && size >= 7 && body[0] == 4
            && new String(body, 1, 4, StandardCharsets.US_ASCII).equals("PING")) {
          // PING: name, a 2-byte TTL, then a context the PONG returns.
          byte[] pong = new byte[5 + body.length - 7];
          pong[0] = 4;
          System.arraycopy("PONG".getBytes(StandardCharsets.US_ASCII), 0, pong, 1, 4);
          System.arraycopy(body, 7, pong, 5, body.length - 7);
          out.write(new byte[] {0x04, (byte) pong.length});
          out.write(pong);
          out.flush();
        }
      }
      return false;
    } catch (EOFException e) {
      return true;
    } catch (IOException e) {
      return true; // reset by the frontend
    }
  }

  @Override
  public void close() {
    try {
      socket.close();
    } catch (IOException e) {
      // the test is done with it
    }
  }
}
