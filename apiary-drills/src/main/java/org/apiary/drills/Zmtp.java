package org.apiary.drills;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * ZMTP 3.0 (RFC 23) as bytes, for the garbage drill's raw-socket attackers: a greeting (well-formed or not), the NULL
 * mechanism's READY command, and frame headers, so a peer can speak the protocol as badly as it likes.
 */
final class Zmtp {
  /** A greeting's length. */
  static final int GREETING_BYTES = 64;
  static final int MORE = 1;
  static final int LARGE = 2;
  static final int COMMAND = 4;

  private Zmtp() {}

  /**
   * A greeting: the signature ({@code FF, 8 bytes, 7F}), the version, the mechanism's name padded to 20 bytes, as-server
   * 0 and the filler.
   */
  static byte[] greeting(int major, String mechanism) {
    byte[] g = new byte[GREETING_BYTES];
    g[0] = (byte) 0xff;
    g[9] = 0x7f;
    g[10] = (byte) major;
    g[11] = 0;
    byte[] name = mechanism.getBytes(StandardCharsets.US_ASCII);
    System.arraycopy(name, 0, g, 12, Math.min(20, name.length));
    return g;
  }

  /** A well-formed ZMTP 3.0 greeting with the NULL mechanism. */
  static byte[] greeting() {
    return greeting(3, "NULL");
  }

  /** The NULL mechanism's READY command of a DEALER socket: what completes a handshake with the frontend's ROUTER. */
  static byte[] ready() {
    ByteBuffer body = ByteBuffer.allocate(64);
    body.put((byte) 5).put("READY".getBytes(StandardCharsets.US_ASCII));
    byte[] name = "Socket-Type".getBytes(StandardCharsets.US_ASCII);
    byte[] value = "DEALER".getBytes(StandardCharsets.US_ASCII);
    body.put((byte) name.length).put(name).putInt(value.length).put(value);
    body.flip();
    ByteBuffer frame = ByteBuffer.allocate(2 + body.remaining());
    frame.put((byte) COMMAND).put((byte) body.remaining()).put(body);
    return frame.array();
  }

  /** A command frame holding only its name (as a PONG to a PING without context). */
  static byte[] command(String name) {
    byte[] n = name.getBytes(StandardCharsets.US_ASCII);
    byte[] frame = new byte[3 + n.length];
    frame[0] = (byte) COMMAND;
    frame[1] = (byte) (1 + n.length);
    frame[2] = (byte) n.length;
    System.arraycopy(n, 0, frame, 3, n.length);
    return frame;
  }

  /** A greeting and READY: a handshake as far as the peer's half goes. */
  static byte[] handshake() {
    byte[] g = greeting();
    byte[] r = ready();
    byte[] both = new byte[g.length + r.length];
    System.arraycopy(g, 0, both, 0, g.length);
    System.arraycopy(r, 0, both, g.length, r.length);
    return both;
  }

  /** A frame's header: its flags and its size, in one byte if the size allows and {@code large} is not asked for. */
  static byte[] frameHeader(int flags, long size, boolean large) {
    if (!large && size >= 0 && size < 256) {
      return new byte[] {(byte) flags, (byte) size};
    }
    return ByteBuffer.allocate(9).put((byte) (flags | LARGE)).putLong(size).array();
  }
}
