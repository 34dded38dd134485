package zmq;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.Pipe;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.concurrent.atomic.AtomicLong;
import zmq.util.Errno;

/**
 * Apiary's replacement for JeroMQ 0.6.0's mailbox signaler (the class of the same name in the JeroMQ jar): a pipe
 * whose read end is a mailbox's {@code ZMQ_FD}, one byte per command sent, and counters of bytes announced and taken.
 *
 * <p>It differs from JeroMQ's in one respect: a signal is counted before its byte is written, not after. The write
 * wakes the mailbox's reader, and on a machine with few cores the reader often preempts the writer right there. With
 * the count after the byte, the woken reader saw a readable pipe but no counted signal, could not take the byte, and
 * every wait on the pipe returned at once: a JeroMQ I/O thread (and Apiary's socket loop) spun until the preempted
 * writer was scheduled again, up to a scheduler time slice. At one request in flight that spin was the 4 ms p99 of a
 * loopback exchange (see {@code docs/benchmarks-log.md}, nineteenth session). Counting first, the reader may find a
 * counted signal whose byte is not there yet; it then waits on the pipe for it instead of spinning.
 *
 * <p>This class must precede the JeroMQ jar on the class path (Apiary's jar does in every Maven-built class path,
 * since JeroMQ is its dependency); {@code SocketLoop} warns once if JeroMQ's own class was loaded instead. Remove it
 * once JeroMQ counts before it writes.
 */
final class Signaler implements Closeable {
  /** How long, at most, {@link #recv} waits for a counted byte in one step before it looks again. */
  private static final long BYTE_WAIT_MILLIS = 10;

  private final Pipe.SinkChannel writeEnd;
  private final Pipe.SourceChannel readEnd;
  /** The reader's selector, on {@link #readEnd} only; used by the reading thread alone. */
  private final Selector selector;
  private final ThreadLocal<ByteBuffer> writeBuffer = ThreadLocal.withInitial(() -> ByteBuffer.allocate(1));
  private final ByteBuffer readBuffer = ByteBuffer.allocate(1);
  /**
   * Signals announced: incremented before each byte is written. {@code SocketLoop} looks this field up by name to tell
   * this class from JeroMQ's.
   */
  private final AtomicLong announced = new AtomicLong();
  /** Signals taken by the reading thread. */
  private long taken;
  private final Errno errno;
  private final Ctx ctx;
  private final int tid;

  Signaler(Ctx ctx, int tid, Errno errno) {
    this.ctx = ctx;
    this.tid = tid;
    this.errno = errno;
    try {
      Pipe pipe = Pipe.open();
      readEnd = pipe.source();
      writeEnd = pipe.sink();
      readEnd.configureBlocking(false);
      writeEnd.configureBlocking(false);
      selector = ctx.createSelector();
      readEnd.register(selector, SelectionKey.OP_READ);
    } catch (IOException e) {
      throw new ZError.IOException(e);
    }
  }

  SelectableChannel getFd() {
    return readEnd;
  }

  /** Announces one signal, then writes its byte. Any thread. */
  void send() {
    announced.incrementAndGet();
    ByteBuffer one = writeBuffer.get();
    // An interrupt during a channel operation would close the pipe for good: hold the flag off and restore it after.
    boolean interrupted = Thread.interrupted();
    try {
      one.clear();
      while (writeEnd.write(one) == 0) {
        Thread.onSpinWait(); // the pipe is full: its reader is behind by thousands of signals
      }
    } catch (IOException e) {
      throw new ZError.IOException(e);
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Whether a signal is there to take, waiting up to {@code timeout} ms for one (0: do not wait; negative: wait without
   * limit). On false, {@code errno} says why: EAGAIN (none came) or EINTR (interrupted, or the selector closed).
   */
  boolean waitEvent(long timeout) {
    if (Thread.interrupted()) {
      errno.set(ZError.EINTR);
      return false;
    }
    if (taken < announced.get()) {
      return true;
    }
    if (timeout == 0) {
      errno.set(ZError.EAGAIN);
      return false;
    }
    int ready;
    try {
      ready = selector.select(timeout < 0 ? 0 : timeout);
    } catch (ClosedSelectorException e) {
      errno.set(ZError.EINTR);
      return false;
    } catch (IOException e) {
      errno.set(ZError.exccode(e));
      return false;
    }
    selector.selectedKeys().clear();
    if (Thread.interrupted() || (ready == 0 && timeout < 0)) {
      errno.set(ZError.EINTR);
      return false;
    }
    if (ready == 0) {
      errno.set(ZError.EAGAIN);
      return false;
    }
    return true;
  }

  /**
   * Takes one signal's byte. Called by the reading thread after {@link #waitEvent} returned true; if the signal was
   * counted but its byte not yet written, waits for the byte.
   */
  void recv() {
    boolean interrupted = Thread.interrupted();
    try {
      while (true) {
        readBuffer.clear();
        int read = readEnd.read(readBuffer);
        if (read == 1) {
          taken++;
          return;
        }
        if (read < 0) {
          errno.set(ZError.EINTR); // the write end is closed: the mailbox is going away
          return;
        }
        selector.select(BYTE_WAIT_MILLIS);
        selector.selectedKeys().clear();
      }
    } catch (ClosedChannelException | ClosedSelectorException e) {
      errno.set(ZError.EINTR);
    } catch (IOException e) {
      throw new ZError.IOException(e);
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public void close() throws IOException {
    IOException failure = null;
    for (Closeable c : new Closeable[] {readEnd, writeEnd, () -> ctx.closeSelector(selector)}) {
      try {
        c.close();
      } catch (IOException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  @Override
  public String toString() {
    return "Signaler[" + tid + "]";
  }
}
