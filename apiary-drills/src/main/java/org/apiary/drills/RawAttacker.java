package org.apiary.drills;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One kind of ZMTP abuse over raw TCP (the garbage drill's): keeps up to {@code parallel} connections open, each doing
 * {@link Attack its attack}, opens a new one when the frontend closes one, and records what became of each: closed by
 * the frontend (silently: before it sent a byte), or still open once the frontend should have closed it ({@link Stats#lingering}, a failure). One thread and one selector for all its
 * connections; every connection is closed when it ends.
 */
final class RawAttacker implements Runnable {
  /** How a connection of an attack must end: how long the frontend may take to close it. */
  enum Bound {
    /** Closed as soon as the frontend reads what was sent (plus the margin). */
    AT_ONCE,
    /** Closed by the handshake timer (ZeroMQ's handshake interval, 2 s, plus the margin). */
    HANDSHAKE,
    /** Closed by the wire timeout: idle, stalled in a frame or a message (plus the margin). */
    WIRE
  }

  /** The attacks. */
  enum Attack {
    /** 1 to 63 bytes of a valid greeting, then nothing. */
    PARTIAL_GREETING(Bound.HANDSHAKE),
    /** A whole greeting, then nothing: the handshake's READY never comes. */
    GREETING_STALL(Bound.WIRE),
    /** A greeting whose signature is wrong (ZMTP 1.0's framing, or not ZMTP at all). */
    BAD_SIGNATURE(Bound.AT_ONCE),
    /** A greeting of ZMTP 1.0 or 2.0, which the frontend refuses. */
    BAD_VERSION(Bound.AT_ONCE),
    /** A ZMTP 3.0 greeting naming another mechanism than NULL (PLAIN, CURVE, nonsense). */
    BAD_MECHANISM(Bound.AT_ONCE),
    /** A handshake, then 256 KiB frames with the MORE flag and never a last frame: until the frontend closes the
     * connection, or a few MiB and then silence. */
    UNFINISHED_MORE(Bound.WIRE),
    /** A handshake, 256 KiB to 4 MiB of frames with the MORE flag, then no frame of data ever again but an answer
     * to each of the frontend's heartbeats, as a live ZeroMQ peer gives (JeroMQ counts those as life). */
    UNFINISHED_LIVE(Bound.WIRE),
    /** A handshake, then a frame header declaring 2^62 bytes (or 2^63, a negative size, or a huge command). */
    HUGE_LENGTH(Bound.AT_ONCE),
    /** A handshake, then a frame declaring 8 MB whose bytes come one every 500 ms. */
    TRICKLE_FRAME(Bound.WIRE),
    /** Random bytes, 1 to 4,096 of them. */
    RANDOM_BYTES(Bound.HANDSHAKE),
    /** The connection flood: a handshake, then silence; the frontend's heartbeats go unanswered. */
    FLOOD(Bound.WIRE);

    final Bound bound;

    Attack(Bound bound) {
      this.bound = bound;
    }

    String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** What became of an attacker's connections. */
  static final class Stats {
    final AtomicLong opened = new AtomicLong();
    final AtomicLong connectFailed = new AtomicLong();
    /** Closed by the frontend: what every attack should come to. */
    final AtomicLong closed = new AtomicLong();
    /** Of those, closed before the frontend sent a byte: refused by a connection limit, or at the first bad byte. */
    final AtomicLong closedSilently = new AtomicLong();
    /** Still open past the bound of its attack: the frontend failed to close it. */
    final AtomicLong lingering = new AtomicLong();
    /** Open when the drill ended, not yet past its bound. */
    final AtomicLong heldAtEnd = new AtomicLong();
    final AtomicLong bytesSent = new AtomicLong();
    /** The most connections this attacker had open at once. */
    final AtomicLong peakOpen = new AtomicLong();
    volatile String firstLingering;
  }

  private static final int MORE_FRAME_BYTES = 256 * 1024;
  private static final long TRICKLE_DECLARED = 8_000_000;
  private static final long TRICKLE_EVERY_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
  private static final long CONNECT_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);
  private static final long HANDSHAKE_NANOS = TimeUnit.MILLISECONDS.toNanos(2_000);

  private final Attack attack;
  private final InetSocketAddress target;
  private final List<String> sources;
  private final int parallel;
  private final long openEveryNanos;
  private final long stopAt;
  private final long boundNanos;
  private final SplittableRandom random;
  final Stats stats = new Stats();
  private final List<Conn> conns = new ArrayList<>();
  private final ByteBuffer readBuffer = ByteBuffer.allocate(64 * 1024);
  private int nextSource;
  /** This attacker's selector, while it runs. */
  private Selector selector;

  /**
   * @param sources the local addresses connections come from, in turn (loopback addresses other than 127.0.0.1, so
   *     the valid client's address keeps its share of the connection limit)
   * @param opensPerSecond how fast connections are opened, at most
   * @param wireTimeout the frontend's wire timeout
   * @param margin how much later than its bound the frontend may close a connection (a loaded machine)
   */
  RawAttacker(Attack attack, InetSocketAddress target, List<String> sources, int parallel, int opensPerSecond,
              long stopAt, Duration wireTimeout, Duration margin, SplittableRandom random) {
    this.attack = attack;
    this.target = target;
    this.sources = List.copyOf(sources);
    this.parallel = parallel;
    this.openEveryNanos = TimeUnit.SECONDS.toNanos(1) / Math.max(1, opensPerSecond);
    this.stopAt = stopAt;
    this.boundNanos = margin.toNanos() + switch (attack.bound) {
      case AT_ONCE -> 0;
      case HANDSHAKE -> HANDSHAKE_NANOS;
      case WIRE -> wireTimeout.toNanos();
    };
    this.random = random;
  }

  Attack attack() {
    return attack;
  }

  /** A connection and what it still has to send. */
  private final class Conn {
    final SocketChannel channel;
    final long openedNanos = System.nanoTime();
    long connectedNanos;
    ByteBuffer out;
    long received;
    /** Bytes of the attack still to send after the opening ({@link Attack#UNFINISHED_MORE}, {@link
     * Attack#TRICKLE_FRAME}); negative: without end. */
    long budget;
    long sent;
    long nextTrickleNanos;
    long lastSentNanos;
    long lastReceivedNanos;
    /** What the frontend sent that is not parsed yet ({@link Attack#UNFINISHED_LIVE}), greeting first. */
    ByteBuffer inbound;
    boolean greetingRead;
    /** PINGs received and not yet answered. */
    int pongs;

    Conn(SocketChannel channel) {
      this.channel = channel;
    }
  }

  @Override
  public void run() {
    try (Selector opened = Selector.open()) {
      selector = opened;
      long nextOpen = System.nanoTime();
      while (System.nanoTime() < stopAt) {
        long now = System.nanoTime();
        while (conns.size() < parallel && now >= nextOpen && now < stopAt) {
          open();
          nextOpen += openEveryNanos;
          if (nextOpen < now - openEveryNanos * 100) {
            nextOpen = now; // a catch-up never bursts more than 100 opens
          }
        }
        stats.peakOpen.accumulateAndGet(conns.size(), Math::max);
        selector.select(20);
        for (Iterator<SelectionKey> it = selector.selectedKeys().iterator(); it.hasNext(); ) {
          SelectionKey key = it.next();
          it.remove();
          handle(key);
        }
        sweep(System.nanoTime());
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(attack.label() + ": the selector failed", e);
    } finally {
      long now = System.nanoTime();
      for (Conn c : conns) {
        if (c.connectedNanos != 0 && now - c.connectedNanos > boundNanos) {
          lingered(c, now);
        } else if (c.connectedNanos != 0) {
          stats.heldAtEnd.incrementAndGet();
        }
        close(c.channel);
      }
      conns.clear();
    }
  }

  private void open() {
    SocketChannel channel = null;
    try {
      channel = SocketChannel.open();
      channel.configureBlocking(false);
      channel.setOption(StandardSocketOptions.SO_REUSEADDR, true);
      channel.bind(new InetSocketAddress(sources.get(nextSource++ % sources.size()), 0));
      Conn c = new Conn(channel);
      if (channel.connect(target)) {
        connected(c);
        channel.register(selector, SelectionKey.OP_READ | SelectionKey.OP_WRITE, c);
      } else {
        channel.register(selector, SelectionKey.OP_CONNECT, c);
      }
      conns.add(c);
    } catch (IOException e) {
      stats.connectFailed.incrementAndGet();
      if (channel != null) {
        close(channel);
      }
    }
  }

  private void connected(Conn c) {
    c.connectedNanos = System.nanoTime();
    stats.opened.incrementAndGet();
    c.out = ByteBuffer.wrap(opening(c));
  }

  private void handle(SelectionKey key) {
    Conn c = (Conn) key.attachment();
    try {
      if (key.isConnectable()) {
        if (!c.channel.finishConnect()) {
          return;
        }
        connected(c);
        key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
        return;
      }
      if (key.isReadable()) {
        readBuffer.clear();
        int n = c.channel.read(readBuffer);
        if (n < 0) {
          closedByFrontend(c);
          return;
        }
        c.received += n;
        c.lastReceivedNanos = System.nanoTime();
        if (attack == Attack.UNFINISHED_LIVE) {
          answerHeartbeats(c);
          if (c.pongs > 0 && key.isValid()) {
            key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
          }
        }
      }
      if (key.isValid() && key.isWritable()) {
        write(c, key);
      }
    } catch (IOException e) { // reset by the frontend, or the connect refused
      if (c.connectedNanos == 0) {
        stats.connectFailed.incrementAndGet();
        drop(c);
      } else {
        closedByFrontend(c);
      }
    }
  }

  private void write(Conn c, SelectionKey key) throws IOException {
    if (c.out == null || !c.out.hasRemaining()) {
      c.out = more(c, System.nanoTime());
    }
    if (c.out != null && c.out.hasRemaining()) {
      int n = c.channel.write(c.out);
      c.sent += n;
      if (n > 0) {
        c.lastSentNanos = System.nanoTime();
      }
      stats.bytesSent.addAndGet(n);
    }
    boolean pending = (c.out != null && c.out.hasRemaining()) || (attack == Attack.UNFINISHED_MORE && c.budget != 0)
        || (attack == Attack.UNFINISHED_LIVE && (c.budget != 0 || c.pongs > 0));
    key.interestOps(SelectionKey.OP_READ | (pending ? SelectionKey.OP_WRITE : 0));
  }

  /**
   * Parses what the frontend sent (its greeting, then frames) and queues a PONG for each PING, so the connection looks
   * alive to JeroMQ's heartbeat while its message stays unfinished.
   */
  private void answerHeartbeats(Conn c) {
    if (c.inbound == null) {
      c.inbound = ByteBuffer.allocate(64 * 1024);
    }
    readBuffer.flip();
    if (readBuffer.remaining() > c.inbound.remaining()) {
      return; // more than a heartbeat's worth unparsed: not a frontend that only sends heartbeats
    }
    c.inbound.put(readBuffer);
    c.inbound.flip();
    if (!c.greetingRead && c.inbound.remaining() >= Zmtp.GREETING_BYTES) {
      c.inbound.position(c.inbound.position() + Zmtp.GREETING_BYTES);
      c.greetingRead = true;
    }
    while (c.greetingRead && c.inbound.remaining() >= 2) {
      int start = c.inbound.position();
      int flags = c.inbound.get() & 0xff;
      long size;
      if ((flags & Zmtp.LARGE) != 0) {
        if (c.inbound.remaining() < 8) {
          c.inbound.position(start);
          break;
        }
        size = c.inbound.getLong();
      } else {
        size = c.inbound.get() & 0xff;
      }
      if (size > c.inbound.capacity() || c.inbound.remaining() < size) {
        c.inbound.position(start);
        break;
      }
      byte[] body = new byte[(int) size];
      c.inbound.get(body);
      if ((flags & Zmtp.COMMAND) != 0 && size >= 7 && body[0] == 4 && body[1] == 'P' && body[2] == 'I'
          && body[3] == 'N' && body[4] == 'G') {
        c.pongs++;
      }
    }
    c.inbound.compact();
  }

  /** Trickles, connect timeouts and the bound: each open connection, every round. */
  private void sweep(long now) {
    for (Iterator<Conn> it = conns.iterator(); it.hasNext(); ) {
      Conn c = it.next();
      if (c.connectedNanos == 0) {
        if (now - c.openedNanos > CONNECT_TIMEOUT_NANOS) {
          stats.connectFailed.incrementAndGet();
          close(c.channel);
          it.remove();
        }
        continue;
      }
      if (now - c.connectedNanos > boundNanos) {
        lingered(c, now);
        close(c.channel);
        it.remove();
        continue;
      }
      if (attack == Attack.TRICKLE_FRAME && c.budget > 0 && now >= c.nextTrickleNanos
          && (c.out == null || !c.out.hasRemaining())) {
        SelectionKey key = c.channel.keyFor(selector);
        if (key != null && key.isValid()) {
          key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
        }
      }
    }
  }

  private void lingered(Conn c, long now) {
    stats.lingering.incrementAndGet();
    if (stats.firstLingering == null) {
      stats.firstLingering = String.format(Locale.ROOT, "a %s connection still open %.1f s after it opened (%d bytes "
          + "sent, the last %.1f s after it opened; %d received, the last %.1f s after it opened; local port %d)",
          attack.label(), (now - c.connectedNanos) / 1e9, c.sent, (c.lastSentNanos - c.connectedNanos) / 1e9,
          c.received, (c.lastReceivedNanos - c.connectedNanos) / 1e9, localPort(c));
    }
  }

  private static int localPort(Conn c) {
    try {
      return ((InetSocketAddress) c.channel.getLocalAddress()).getPort();
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  private void closedByFrontend(Conn c) {
    stats.closed.incrementAndGet();
    if (c.received == 0) {
      stats.closedSilently.incrementAndGet();
    }
    drop(c);
  }

  private void drop(Conn c) {
    close(c.channel);
    conns.remove(c);
  }

  /** What a connection sends as soon as it is connected. */
  private byte[] opening(Conn c) {
    switch (attack) {
      case PARTIAL_GREETING -> {
        return java.util.Arrays.copyOf(Zmtp.greeting(), 1 + random.nextInt(Zmtp.GREETING_BYTES - 1));
      }
      case GREETING_STALL -> {
        return Zmtp.greeting();
      }
      case BAD_SIGNATURE -> {
        byte[] g = Zmtp.greeting();
        switch (random.nextInt(3)) {
          case 0 -> g[9] = 0x00; // the 10th byte's low bit clear: ZMTP 1.0's identity header
          case 1 -> g[0] = (byte) random.nextInt(0xff); // not ZMTP at all
          default -> g[9] = 0x7e;
        }
        return g;
      }
      case BAD_VERSION -> {
        return Zmtp.greeting(random.nextInt(2), "NULL"); // revisions 0 and 1: ZMTP 1.0's and 2.0's framing
      }
      case BAD_MECHANISM -> {
        String[] names = {"PLAIN", "CURVE", "GSSAPI", "XYZZY", ""};
        return Zmtp.greeting(3, names[random.nextInt(names.length)]);
      }
      case UNFINISHED_MORE -> {
        // Half until the frontend closes the connection (its bound per connection), half a few MiB and silence.
        c.budget = random.nextBoolean() ? -1 : (1 + random.nextInt(16)) * (long) MORE_FRAME_BYTES * 4;
        return Zmtp.handshake();
      }
      case UNFINISHED_LIVE -> {
        c.budget = (1 + random.nextInt(16)) * (long) MORE_FRAME_BYTES;
        return Zmtp.handshake();
      }
      case HUGE_LENGTH -> {
        byte[] h = switch (random.nextInt(4)) {
          case 0 -> Zmtp.frameHeader(0, 1L << 62, true);
          case 1 -> Zmtp.frameHeader(Zmtp.MORE, 1L << 62, true);
          case 2 -> Zmtp.frameHeader(0, Long.MIN_VALUE, true);
          default -> Zmtp.frameHeader(Zmtp.COMMAND, 1L << 40, true);
        };
        return concat(Zmtp.handshake(), h);
      }
      case TRICKLE_FRAME -> {
        c.budget = TRICKLE_DECLARED;
        c.nextTrickleNanos = System.nanoTime() + TRICKLE_EVERY_NANOS;
        return concat(Zmtp.handshake(), Zmtp.frameHeader(0, TRICKLE_DECLARED, true));
      }
      case RANDOM_BYTES -> {
        byte[] b = new byte[1 + random.nextInt(4_096)];
        for (int i = 0; i < b.length; i++) {
          b[i] = (byte) random.nextInt(256);
        }
        return b;
      }
      case FLOOD -> {
        return Zmtp.handshake();
      }
      default -> throw new IllegalStateException("unknown attack " + attack);
    }
  }

  /** What a connection sends once its opening is out, or {@code null} for nothing now. */
  private ByteBuffer more(Conn c, long now) {
    if (attack == Attack.UNFINISHED_LIVE && c.budget == 0 && c.pongs > 0) {
      c.pongs--;
      return ByteBuffer.wrap(Zmtp.command("PONG"));
    }
    if ((attack == Attack.UNFINISHED_MORE || attack == Attack.UNFINISHED_LIVE) && c.budget != 0) {
      if (c.budget > 0) {
        c.budget = Math.max(0, c.budget - MORE_FRAME_BYTES);
      }
      ByteBuffer frame = ByteBuffer.allocate(9 + MORE_FRAME_BYTES);
      frame.put(Zmtp.frameHeader(Zmtp.MORE, MORE_FRAME_BYTES, true));
      frame.position(frame.capacity());
      frame.flip();
      return frame;
    }
    if (attack == Attack.TRICKLE_FRAME && c.budget > 0 && now >= c.nextTrickleNanos) {
      c.budget--;
      c.nextTrickleNanos = now + TRICKLE_EVERY_NANOS;
      return ByteBuffer.wrap(new byte[] {(byte) random.nextInt(256)});
    }
    return null;
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] both = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, both, a.length, b.length);
    return both;
  }

  private static void close(SocketChannel channel) {
    try {
      channel.close();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("closing an attacker's own connection failed", e);
    }
  }
}
