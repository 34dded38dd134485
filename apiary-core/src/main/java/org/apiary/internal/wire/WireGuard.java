package org.apiary.internal.wire;

import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntConsumer;
import zmq.Msg;
import zmq.ZMQ;
import zmq.msg.MsgAllocator;

/**
 * The limits a server socket (the frontend's ROUTER) holds its peers to, enforced inside JeroMQ's I/O thread, so a
 * refused peer is disconnected and counted there and never reaches the socket's queues:
 * <ul>
 *   <li>connections, in all and per remote address: JeroMQ calls this guard ({@link #consume}, an event hook) as it
 *   accepts a connection, on its I/O thread; one over a limit is shut down at once, before its handshake;</li>
 *   <li>bytes held in unfinished messages (frames sent with the MORE flag and no last frame yet, which JeroMQ keeps
 *   out of its queue limit, which counts finished messages), per connection and in all, and how long one message
 *   may take: Apiary's {@code zmq.io.coder.v2.V2Decoder}, the decoder of every ZMTP connection, asks this guard (the
 *   socket's message allocator) before it allocates a frame, and a refusal ends that connection;</li>
 *   <li>a deadline for each multi-frame message (and each frame), on a clock of the guard's own: the decoder also
 *   refuses a message's frame that comes late, but a peer that sends part of a message and then nothing but answers
 *   to heartbeats (which JeroMQ counts as life) would otherwise hold its bytes for ever; {@link #closeStalled} closes
 *   the connection of every message older than {@link Limits#timeout()};</li>
 *   <li>a deadline for the handshake: a connection whose peer has not sent its READY {@link Limits#timeout()} after
 *   it was accepted is closed by {@link #closeStalled} (Apiary's {@code zmq.io.mechanism.NullMechanism}
 *   reports each READY);</li>
 *   <li>an idle timeout after the handshake and a deadline for a started frame: JeroMQ's heartbeats, a PING every
 *   third of {@link Limits#timeout()}; a connection that completes no frame (a PONG is one) within two thirds of it
 *   after a PING is closed by JeroMQ, so a peer that stopped, or stalled inside a frame, is gone within the timeout,
 *   while a live ZMTP peer, which answers PINGs by itself, stays however long it is quiet.</li>
 * </ul>
 *
 * <p>Why here rather than a proxy in front of the socket: JeroMQ has no bound on unfinished messages nor a
 * connection limit, but the decoder and the event hook are the two points where it sees each frame and each new
 * connection; a proxy would have added a hop and a copy to every request, three descriptors per connection, and a
 * port behind it that local users could reach unguarded. The ZAP domain this guard sets makes JeroMQ refuse ZMTP 1.0
 * and 2.0 peers (with no ZAP handler, it authenticates nothing else), whose framing would bypass the decoder.
 */
public final class WireGuard implements MsgAllocator, ZMQ.EventConsummer {
  private static final Logger LOG = System.getLogger(WireGuard.class.getName());

  /**
   * A connection's decoder as the guard sees it (Apiary's {@code zmq.io.coder.v2.V2Decoder}), so unfinished messages
   * are timed on the guard's clock, not only when their next frame arrives.
   */
  public interface Receiver {
    /**
     * Whether what the connection is receiving (a message, or a frame between messages) began more than {@code
     * timeoutNanos} before {@code nowNanos}; if so, why it is refused (and it is then counted as refused: asked again,
     * it says {@code null}); {@code null} otherwise. Called from any thread.
     */
    Refusal overdue(long nowNanos, long timeoutNanos);
  }

  /** Why a connection was refused or closed by the guard. */
  public enum Refusal {
    /** Accepted while the socket already had {@link Limits#maxConnections()}. */
    CONNECTIONS,
    /** Accepted while its remote address already had {@link Limits#maxConnectionsPerAddress()}. */
    CONNECTIONS_PER_ADDRESS,
    /** Its unfinished message would have held more than {@link Limits#maxUnfinishedBytesPerConnection()}. */
    UNFINISHED_BYTES,
    /** Its frame would have taken all connections' unfinished messages past {@link Limits#maxUnfinishedBytes()}. */
    UNFINISHED_BYTES_TOTAL,
    /** A command frame (as a handshake's READY) above {@code V2Decoder.MAX_GUARDED_COMMAND_BYTES}. */
    COMMAND_TOO_LARGE,
    /** A multi-frame message still unfinished {@link Limits#timeout()} after its first frame began. */
    MESSAGE_DEADLINE,
    /** Closed by the heartbeat timeout while a frame it had started was still incomplete. */
    STALLED_FRAME,
    /** Closed by the heartbeat timeout after its handshake, between frames: it answered no PING. */
    IDLE,
    /** Closed because its handshake had not finished {@link Limits#timeout()} after it was accepted. */
    HANDSHAKE
  }

  /**
   * The limits.
   *
   * @param maxConnections connections the socket holds at once
   * @param maxConnectionsPerAddress of those, from one remote IP address
   * @param maxUnfinishedBytesPerConnection bytes of frames one connection may have sent in a message it has not
   *     finished, counting each frame at its declared size (JeroMQ allocates that much when the size arrives)
   * @param maxUnfinishedBytes the same over all connections
   * @param timeout idle timeout after the handshake, and the longest a frame or a multi-frame message may take
   */
  public record Limits(int maxConnections, int maxConnectionsPerAddress, long maxUnfinishedBytesPerConnection,
                       long maxUnfinishedBytes, Duration timeout) {
    public Limits {
      if (maxConnections < 1 || maxConnectionsPerAddress < 1) {
        throw new IllegalArgumentException("connection limits must be at least 1, not " + maxConnections + " and "
            + maxConnectionsPerAddress);
      }
      if (maxUnfinishedBytesPerConnection < 1 || maxUnfinishedBytes < maxUnfinishedBytesPerConnection) {
        throw new IllegalArgumentException("the unfinished-message bound per connection (" + maxUnfinishedBytesPerConnection
            + " bytes) must be at least 1 and at most the bound over all connections (" + maxUnfinishedBytes + ")");
      }
      if (timeout.toMillis() < 30) {
        throw new IllegalArgumentException("the wire timeout must be at least 30 ms, not " + timeout);
      }
    }
  }

  private final Limits limits;
  private final long timeoutNanos;
  /** What the decoder counts as "nothing received for a heartbeat timeout": two thirds of the timeout. */
  private final long silenceNanos;
  private final IntConsumer onFrame;
  private final Map<Refusal, LongAdder> refused = new EnumMap<>(Refusal.class);
  private final AtomicLong unfinished = new AtomicLong();
  /**
   * Open connections and their peers, named as JeroMQ names a peer to its mechanism ({@code zmq.io.net.Address}: the
   * remote IP address, a colon, the port); on JeroMQ's I/O thread, under this guard's lock.
   */
  private final Map<SelectableChannel, String> open = new IdentityHashMap<>();
  private final Map<String, Integer> perAddress = new HashMap<>();
  /**
   * Connections whose handshake has not finished (the peer's READY not yet in), by the peer's address and port as
   * JeroMQ names it, with when they were accepted; under this guard's lock.
   */
  private final Map<String, Handshaking> handshaking = new HashMap<>();
  /** The inverse of {@link #open}; under this guard's lock. */
  private final Map<String, SocketChannel> byPeer = new HashMap<>();
  /** The decoder of each open connection past its greeting; under this guard's lock. */
  private final Map<SelectableChannel, Receiver> receivers = new IdentityHashMap<>();
  private volatile int connections;

  private record Handshaking(SocketChannel channel, long acceptedNanos) {}

  private WireGuard(Limits limits, IntConsumer onFrame) {
    this.limits = limits;
    this.timeoutNanos = limits.timeout().toNanos();
    this.silenceNanos = timeoutNanos * 2 / 3;
    this.onFrame = onFrame;
    for (Refusal r : Refusal.values()) {
      refused.put(r, new LongAdder());
    }
  }

  /**
   * Puts a guard on a server socket, before it binds.
   *
   * @param onFrame called on JeroMQ's I/O thread with each inbound frame's size as it is allocated (fault injection in
   *     tests and drills; a no-op otherwise)
   * @throws IllegalStateException if JeroMQ's own {@code V2Decoder} was loaded instead of Apiary's (apiary-core must
   *     precede the JeroMQ jar on the class path): the bounds on unfinished messages would not hold
   */
  public static WireGuard install(org.zeromq.ZMQ.Socket socket, Limits limits, IntConsumer onFrame) {
    checkDecoder();
    WireGuard guard = new WireGuard(limits, onFrame);
    int ping = (int) Math.max(10, limits.timeout().toMillis() / 3);
    socket.setHeartbeatIvl(ping);
    socket.setHeartbeatTimeout((int) Math.max(20, limits.timeout().toMillis() - ping));
    socket.setZAPDomain("apiary");
    // JeroMQ listens with a backlog of 100: a burst of connections beyond it overflowed the kernel's accept queue, and
    // the rest came in seconds late on TCP's SYN retransmissions, a few at a time, never holding more than a limit at
    // once (the garbage drill's flood saw no connection-limit refusal). A backlog of the connection limit (the kernel
    // caps it at net.core.somaxconn) lets the guard see a burst at once, and refuse what passes a limit at once.
    socket.setBacklog(Math.max(100, limits.maxConnections()));
    socket.setMsgAllocator(guard);
    socket.base().setEventHook(guard, ZMQ.ZMQ_EVENT_ACCEPTED | ZMQ.ZMQ_EVENT_DISCONNECTED);
    return guard;
  }

  private static void checkDecoder() {
    for (String name : new String[] {"zmq.io.coder.v2.V2Decoder", "zmq.io.mechanism.NullMechanism"}) {
      try {
        Class.forName(name, false, WireGuard.class.getClassLoader()).getDeclaredField("APIARY_GUARDED");
      } catch (ClassNotFoundException | NoSuchFieldException e) {
        throw new IllegalStateException("JeroMQ's own " + name + " was loaded instead of Apiary's: put apiary-core "
            + "before the jeromq jar on the class path; without it a peer's unfinished messages and unfinished "
            + "handshakes are not bounded", e);
      }
    }
  }

  /** The limits this guard holds connections to. */
  public Limits limits() {
    return limits;
  }

  /** Connections refused or closed so far, by reason (every reason present). */
  public Map<Refusal, Long> refusals() {
    Map<Refusal, Long> copy = new EnumMap<>(Refusal.class);
    refused.forEach((r, n) -> copy.put(r, n.sum()));
    return Collections.unmodifiableMap(copy);
  }

  /** Connections open now (accepted and not refused, handshake done or not). */
  public int connections() {
    return connections;
  }

  /** Bytes of all connections' unfinished messages (and frames being received) now. */
  public long unfinishedBytes() {
    return unfinished.get();
  }

  // ---------------------------------------------------------------- JeroMQ's I/O thread

  /**
   * Every frame on the Java heap. JeroMQ's default allocator puts frames above 1 MiB in direct buffers, zeroed (so
   * resident at once) and freed only once a collection finds their small buffer objects dead: under a flood of
   * connections declaring 8 MB frames that took the frontend's resident memory up by 700-900 MB while the bounds on
   * unfinished bytes held at 256 MiB.
   */
  @Override
  public Msg allocate(int size) {
    receiving(size);
    return new Msg(size);
  }

  /** A frame of {@code size} bytes is about to be received (the decoder's, for a frame it allocates in steps). */
  public void receiving(int size) {
    onFrame.accept(size);
  }

  @Override
  public void consume(ZMQ.Event event) {
    if (!(event.arg instanceof SocketChannel channel)) {
      return;
    }
    if (event.event == ZMQ.ZMQ_EVENT_ACCEPTED) {
      accepted(channel);
    } else if (event.event == ZMQ.ZMQ_EVENT_DISCONNECTED) {
      disconnected(channel);
    }
  }

  private synchronized void accepted(SocketChannel channel) {
    String address;
    int port;
    try {
      InetSocketAddress remote = (InetSocketAddress) channel.getRemoteAddress();
      address = remote.getAddress().getHostAddress();
      port = remote.getPort();
    } catch (IOException | RuntimeException e) {
      return; // already gone: JeroMQ's engine finds it closed and drops it
    }
    if (open.size() >= limits.maxConnections() || perAddress.getOrDefault(address, 0) >= limits.maxConnectionsPerAddress()) {
      forgetClosed(); // a connection JeroMQ ended without a disconnection event still had its place
    }
    Refusal refusal = open.size() >= limits.maxConnections() ? Refusal.CONNECTIONS
        : perAddress.getOrDefault(address, 0) >= limits.maxConnectionsPerAddress() ? Refusal.CONNECTIONS_PER_ADDRESS
        : null;
    if (refusal != null) {
      count(refusal);
      try {
        // JeroMQ's engine, about to be plugged, then reads end-of-stream (or fails its first write) and closes the
        // connection as any other that ended; the peer sees the connection closed at once.
        channel.shutdownInput();
        channel.shutdownOutput();
      } catch (IOException e) {
        LOG.log(Level.DEBUG, () -> "shutting down a refused connection from " + address + ": " + e.getMessage());
      }
      return;
    }
    String peer = address + ":" + port;
    open.put(channel, peer);
    byPeer.put(peer, channel);
    perAddress.merge(address, 1, Integer::sum);
    connections = open.size();
    handshaking.put(peer, new Handshaking(channel, System.nanoTime()));
  }

  private synchronized void disconnected(SelectableChannel channel) {
    handshaking.values().removeIf(h -> h.channel() == channel);
    receivers.remove(channel);
    String peer = open.remove(channel);
    if (peer != null) {
      forget(peer, channel);
      connections = open.size();
    }
  }

  /** Gives back a closed connection's place: under its peer's name and in its address's count. */
  private void forget(String peer, SelectableChannel channel) {
    byPeer.remove(peer, channel);
    perAddress.computeIfPresent(peer.substring(0, peer.lastIndexOf(':')), (a, n) -> n == 1 ? null : n - 1);
  }

  /**
   * The peer at {@code peerAddress} ({@code host:port}) has sent its handshake's READY: its connection is past the
   * handshake (called by Apiary's {@code zmq.io.mechanism.NullMechanism}, on JeroMQ's I/O thread).
   */
  public synchronized void handshaken(String peerAddress) {
    handshaking.remove(peerAddress);
  }

  /**
   * The connection of the peer at {@code peerAddress} ({@code host:port}) decodes its frames with {@code receiver}
   * (called by Apiary's {@code zmq.io.mechanism.NullMechanism} as it is made for the connection, after the greeting).
   */
  public synchronized void receiving(String peerAddress, Receiver receiver) {
    SocketChannel channel = byPeer.get(peerAddress);
    if (channel != null && channel.isOpen()) {
      receivers.put(channel, receiver);
    }
  }

  /**
   * Closes every connection whose handshake has not finished {@link Limits#timeout()} after it was accepted
   * ({@link Refusal#HANDSHAKE}), or whose unfinished message (or frame) began longer ago than that ({@link
   * Refusal#MESSAGE_DEADLINE}, {@link Refusal#STALLED_FRAME}), and counts it: the peer sees its connection end at once,
   * and JeroMQ's engine reads the end of the stream and drops it. Call it now and then (the frontend does, several
   * times per timeout) from any thread.
   *
   * @return how many it closed
   */
  public synchronized int closeStalled(long nowNanos) {
    int closed = 0;
    for (Iterator<Map.Entry<SelectableChannel, Receiver>> it = receivers.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<SelectableChannel, Receiver> e = it.next();
      SocketChannel channel = (SocketChannel) e.getKey(); // an IdentityHashMap's entry is void once removed
      if (!channel.isOpen()) {
        it.remove();
        continue;
      }
      Refusal late = e.getValue().overdue(nowNanos, timeoutNanos);
      if (late != null) {
        it.remove();
        count(late);
        closed++;
        shutDown(channel, "a connection whose message passed its deadline");
      }
    }
    for (Iterator<Handshaking> it = handshaking.values().iterator(); it.hasNext(); ) {
      Handshaking h = it.next();
      if (!h.channel().isOpen()) {
        it.remove(); // closed without a disconnection event: forgetClosed() frees its place
      } else if (nowNanos - h.acceptedNanos() > timeoutNanos) {
        it.remove();
        count(Refusal.HANDSHAKE);
        closed++;
        shutDown(h.channel(), "a connection whose handshake stalled");
      }
    }
    return closed;
  }

  private static void shutDown(SocketChannel channel, String what) {
    try {
      channel.shutdownInput();
      channel.shutdownOutput();
    } catch (IOException e) {
      LOG.log(Level.DEBUG, () -> "shutting down " + what + ": " + e.getMessage());
    }
  }

  private void forgetClosed() {
    handshaking.values().removeIf(h -> !h.channel().isOpen());
    receivers.keySet().removeIf(c -> !c.isOpen());
    for (Iterator<Map.Entry<SelectableChannel, String>> it = open.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<SelectableChannel, String> e = it.next();
      SelectableChannel channel = e.getKey(); // read before the removal: an IdentityHashMap's entry is void after it
      String peer = e.getValue();
      if (!channel.isOpen()) {
        it.remove();
        forget(peer, channel);
      }
    }
    connections = open.size();
  }

  // ---------------------------------------------------------------- for the decoder (JeroMQ's I/O thread)

  /** Counts a refusal (the decoder's, or a connection limit's). */
  public void count(Refusal refusal) {
    refused.get(refusal).increment();
  }

  /** Takes {@code bytes} of the bound over all connections; false (nothing taken) if it would pass the bound. */
  public boolean reserve(long bytes) {
    long now = unfinished.addAndGet(bytes);
    if (now > limits.maxUnfinishedBytes()) {
      unfinished.addAndGet(-bytes);
      return false;
    }
    return true;
  }

  /** Gives back bytes taken with {@link #reserve}. */
  public void release(long bytes) {
    if (bytes != 0) {
      unfinished.addAndGet(-bytes);
    }
  }

  /** {@link Limits#maxUnfinishedBytesPerConnection()}. */
  public long maxUnfinishedBytesPerConnection() {
    return limits.maxUnfinishedBytesPerConnection();
  }

  /** {@link Limits#timeout()} in nanoseconds: the longest a multi-frame message may take. */
  public long timeoutNanos() {
    return timeoutNanos;
  }

  /**
   * How long a connection must have completed no frame for its end to be the heartbeat timeout's doing: a live peer
   * answers a PING within a third of the timeout, and a silent one is closed two thirds of it after a PING.
   */
  public long silenceNanos() {
    return silenceNanos;
  }
}
