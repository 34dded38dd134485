package zmq.io.coder.v2;

import java.nio.ByteBuffer;
import java.util.Arrays;
import org.apiary.internal.wire.WireGuard;
import zmq.Msg;
import zmq.ZError;
import zmq.io.coder.Decoder;
import zmq.msg.MsgAllocator;
import zmq.util.Errno;

/**
 * Apiary's replacement for JeroMQ 0.6.0's ZMTP 2.0/3.x frame decoder (the class of the same name in the JeroMQ jar;
 * written for Apiary, with the same constructor), one per connection. It decodes frames as JeroMQ's does: a flags
 * byte (MORE, LARGE, COMMAND), a size of one byte or eight, the body, which is allocated at its declared size as soon
 * as the size arrives (on a guarded connection, a body above 64 KiB grows as its bytes arrive instead).
 *
 * <p>Where the connection's socket has a {@link WireGuard} (as its message allocator: the frontend's ROUTER), it also
 * holds the connection to the guard's bounds, since JeroMQ bounds frames one by one and queues only finished messages:
 * before a frame is allocated, the frame's size plus what the connection's unfinished message already holds must stay
 * within the bound per connection and the bound over all connections, and a message's next frame must come within the
 * guard's timeout of its first; otherwise decoding fails, and JeroMQ closes the connection and frees what it held.
 * When the connection ends it gives back what it held and, if it had received nothing for the heartbeat timeout, counts
 * itself as closed idle or stalled in a frame.
 *
 * <p>Like {@code zmq.Signaler}, this class must precede the JeroMQ jar on the class path; {@link WireGuard#install}
 * refuses to guard a socket otherwise.
 */
public class V2Decoder extends Decoder implements WireGuard.Receiver {
  /** {@link WireGuard} looks this field up by name to tell this class from JeroMQ's. */
  public static final boolean APIARY_GUARDED = true;

  private static final int MORE_FLAG = 1;
  private static final int LARGE_FLAG = 2;
  private static final int COMMAND_FLAG = 4;
  /**
   * The largest command frame a guarded connection may send: ZMTP's commands (READY, PING, PONG, ERROR) carry at most
   * a few hundred bytes, and JeroMQ 0.6.0 ends its handshake timer once the greeting is read, so a large command left
   * unfinished during the handshake would otherwise hold its allocation with no timeout.
   */
  public static final int MAX_GUARDED_COMMAND_BYTES = 1024;

  /** A guarded connection's frames above this size are allocated as their bytes arrive ({@link #sizedInSteps}). */
  static final int FIRST_CHUNK_BYTES = 64 * 1024;

  /**
   * The guarded decoder made last on this thread, until its connection's mechanism takes it: JeroMQ's engine makes the
   * decoder and then, on the same thread, the mechanism, which alone knows the peer's address.
   */
  private static final ThreadLocal<V2Decoder> MADE = new ThreadLocal<>();

  private final ByteBuffer header = ByteBuffer.allocate(8);
  private final Step bodyChunkReady = this::bodyChunkReady;
  /** The body received so far of a large frame being received in steps, or {@code null}. */
  private byte[] body;
  private int bodySize;
  /** The socket's guard, or {@code null}: then no bounds. */
  private final WireGuard guard;
  /** The flags of the frame being decoded, as {@link Msg} flags. */
  private int msgFlags;
  /** Bytes this connection holds in the guard: the frames of its unfinished message (the current one included). */
  private volatile long held;
  /** Bytes of the command frame being received, held in the guard apart from {@link #held}. */
  private long commandHeld;
  private long lastFrameNanos;
  private boolean inFrame;
  /** Refused by the decoder, or closed by the guard's sweep ({@link #overdue}): counted already. */
  private volatile boolean refused;
  /**
   * When the unfinished message (or, between messages, the frame) being received began; 0 while nothing is: read by
   * the guard's sweep, from another thread. While {@link #held} is above 0 it is when the message's first frame began.
   */
  private volatile long busySinceNanos;
  /** Whether a command (the handshake's READY first) has been decoded: before it, the handshake is not over. */
  private boolean commandSeen;

  public V2Decoder(Errno errno, int bufsize, long maxmsgsize, MsgAllocator allocator) {
    super(errno, bufsize, maxmsgsize, allocator);
    this.guard = allocator instanceof WireGuard g ? g : null;
    this.lastFrameNanos = guard == null ? 0 : System.nanoTime();
    expectFlags();
    if (guard != null) {
      MADE.set(this);
    }
  }

  /**
   * The guarded decoder made last on this thread and not yet taken, or {@code null}; taking it forgets it. Apiary's
   * {@code zmq.io.mechanism.NullMechanism} takes it as it is made for the same connection and hands it to the guard
   * with the peer's address.
   */
  public static V2Decoder takeMadeOnThisThread() {
    V2Decoder d = MADE.get();
    MADE.remove();
    return d;
  }

  @Override
  public WireGuard.Refusal overdue(long nowNanos, long timeoutNanos) {
    long since = busySinceNanos;
    if (since == 0 || refused || nowNanos - since <= timeoutNanos) {
      return null;
    }
    refused = true;
    return held > 0 ? WireGuard.Refusal.MESSAGE_DEADLINE : WireGuard.Refusal.STALLED_FRAME;
  }

  private void expectFlags() {
    header.position(0);
    header.limit(1);
    nextStep(header, flagsReady);
  }

  @Override
  protected Msg allocate(int size) {
    Msg msg = super.allocate(size);
    msg.setFlags(msgFlags);
    return msg;
  }

  @Override
  protected Step.Result flagsReady() {
    int flags = header.get(0) & 0xff;
    msgFlags = ((flags & MORE_FLAG) != 0 ? Msg.MORE : 0) | ((flags & COMMAND_FLAG) != 0 ? Msg.COMMAND : 0);
    inFrame = true;
    header.position(0);
    if ((flags & LARGE_FLAG) != 0) {
      header.limit(8);
      nextStep(header, eightByteSizeReady);
    } else {
      header.limit(1);
      nextStep(header, oneByteSizeReady);
    }
    return Step.Result.MORE_DATA;
  }

  @Override
  protected Step.Result oneByteSizeReady() {
    return sized(header.get(0) & 0xff);
  }

  @Override
  protected Step.Result eightByteSizeReady() {
    return sized(header.getLong(0)); // big-endian, as ZMTP sends it; above 2^63 it reads negative
  }

  private Step.Result sized(long size) {
    if (size < 0) {
      errno(ZError.EMSGSIZE);
      return Step.Result.ERROR;
    }
    if (guard != null && !admit(size)) {
      refused = true;
      errno(ZError.EMSGSIZE);
      return Step.Result.ERROR;
    }
    if (guard != null && size > FIRST_CHUNK_BYTES) {
      return sizedInSteps(size);
    }
    Step.Result rc = sizeReady(size);
    if (rc != Step.Result.ERROR) {
      nextStep(inProgress, messageReady);
    }
    return rc;
  }

  /**
   * A guarded connection's large frame is not allocated at its declared size when the size arrives: its body grows
   * as its bytes do (from {@link #FIRST_CHUNK_BYTES}, doubling, to the declared size at most), so a peer that declares
   * 8 MB and sends 8 bytes holds ~64 KiB, not 8 MB, until it is closed. The bounds still count the declared size.
   */
  private Step.Result sizedInSteps(long size) {
    if ((maxmsgsize >= 0 && size > maxmsgsize) || size > Integer.MAX_VALUE) { // as Decoder.sizeReady
      errno(ZError.EMSGSIZE);
      return Step.Result.ERROR;
    }
    guard.receiving((int) size);
    bodySize = (int) size;
    body = new byte[FIRST_CHUNK_BYTES];
    nextStep(ByteBuffer.wrap(body), bodyChunkReady);
    return Step.Result.MORE_DATA;
  }

  /** The body's buffer is full: the frame is whole, or the buffer grows for the bytes to come. */
  private Step.Result bodyChunkReady() {
    int received = body.length;
    if (received == bodySize) {
      inProgress = new Msg(body);
      inProgress.setFlags(msgFlags);
      body = null;
      return messageReady();
    }
    body = Arrays.copyOf(body, (int) Math.min(bodySize, 2L * received));
    nextStep(ByteBuffer.wrap(body, received, body.length - received), bodyChunkReady);
    return Step.Result.MORE_DATA;
  }

  /** Takes the frame's size from the guard's bounds, or counts why not. */
  private boolean admit(long size) {
    boolean command = (msgFlags & Msg.COMMAND) != 0;
    if (command && size > MAX_GUARDED_COMMAND_BYTES) {
      guard.count(WireGuard.Refusal.COMMAND_TOO_LARGE);
      return false;
    }
    long now = System.nanoTime();
    if (!command && held > 0 && now - busySinceNanos > guard.timeoutNanos()) {
      guard.count(WireGuard.Refusal.MESSAGE_DEADLINE);
      return false;
    }
    if (held + size > guard.maxUnfinishedBytesPerConnection()) {
      guard.count(WireGuard.Refusal.UNFINISHED_BYTES);
      return false;
    }
    if (!guard.reserve(size)) {
      guard.count(WireGuard.Refusal.UNFINISHED_BYTES_TOTAL);
      return false;
    }
    if (busySinceNanos == 0) {
      busySinceNanos = now;
    }
    if (command) { // a command (PING, PONG, the handshake's) is never part of a message
      commandHeld = size;
    } else {
      if (held == 0) {
        busySinceNanos = now;
      }
      held += size;
    }
    return true;
  }

  @Override
  protected Step.Result messageReady() {
    if (guard != null) {
      inFrame = false;
      lastFrameNanos = System.nanoTime();
      if (commandHeld > 0 || (msgFlags & Msg.COMMAND) != 0) {
        commandSeen = true;
        guard.release(commandHeld);
        commandHeld = 0;
      } else if ((msgFlags & Msg.MORE) == 0) { // the message is whole: JeroMQ's queue limit counts it from here
        guard.release(held);
        held = 0;
      }
      if (held == 0) {
        busySinceNanos = 0;
      }
    }
    expectFlags();
    return Step.Result.DECODED;
  }

  @Override
  public void destroy() {
    super.destroy();
    body = null;
    if (guard == null) {
      return;
    }
    guard.release(held + commandHeld);
    held = 0;
    commandHeld = 0;
    // Before its first command the connection was still in its handshake: the guard times those (and counts them).
    if (!refused && commandSeen && System.nanoTime() - lastFrameNanos >= guard.silenceNanos()) {
      guard.count(inFrame ? WireGuard.Refusal.STALLED_FRAME : WireGuard.Refusal.IDLE);
    }
  }
}
