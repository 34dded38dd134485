package org.apiary.internal.wire;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The transport both ends of Apiary's wire share: one thread that owns a ZeroMQ context and every socket in it, as
 * ZeroMQ requires. The client and the frontend each run one.
 *
 * <p>Other threads hand work to the loop with {@link #execute}: the task goes on a concurrent queue and, unless a
 * wake-up is already on its way, the loop's selector is woken. Each round the loop runs its timer hook, waits (only
 * when the previous round found nothing to do), then runs every queued task and reads up to
 * {@link #MAX_FRAMES_PER_ROUND} frames from each registered socket, so one wake-up serves any number of tasks and
 * one wait many messages, and a flood of incoming messages never keeps the queued tasks (replies) waiting.
 *
 * <p>Messages a round produces are not sent one by one: the loop's {@link #onFlush} hook runs after the round's tasks
 * and again after its reads, and sends what they queued, several messages to one peer as one multipart message
 * ({@link #MAX_FRAMES_PER_MESSAGE} frames at most), so a busy loop pays ZeroMQ's per-message hand-offs and wake-ups
 * once per batch rather than once per request or reply.
 *
 * <p>The loop waits on a selector of its own, where each socket's {@code ZMQ_FD} stays registered, rather than with
 * ZeroMQ's poller, which registers every socket again and calls {@code epoll_wait} twice per poll; and it is woken
 * through that selector rather than through an inproc socket. Each profile of a graph call at a few thousand calls per
 * second found the two socket loops' polls and wake-ups among their largest costs.
 */
public final class SocketLoop {
  private static final Logger LOG = System.getLogger(SocketLoop.class.getName());
  /** The longest poll: a stop request is seen within this even if its wake-up were lost. */
  public static final long MAX_POLL_MILLIS = 100;
  /**
   * The ZMTP handshake interval of the loop's sockets (ms): a connection whose handshake has not completed by then is
   * closed and, on a connecting socket, made again (2 s: far below a call's attempt timeout, far above a handshake on a
   * loaded machine). JeroMQ 0.6.0's I/O thread now and then never registers a new
   * outgoing connection with its selector (its poller drops the connecter's key and adds the engine's for the same
   * channel in one pass); the connection then stays silent until this interval ends it, 30 s by default.
   */
  public static final int HANDSHAKE_MILLIS = 2_000;

  /**
   * The most frames (requests or replies; a reader may finish the message it is in) a round reads from one socket
   * before it runs the queued tasks again. Reading until a socket is empty let a sender faster than this thread keep
   * every task (the replies to other clients) waiting for as long as it kept sending.
   */
  public static final int MAX_FRAMES_PER_ROUND = 256;

  /**
   * The most frames (requests or replies) one multipart message carries; a larger batch goes as several messages.
   * Bounded so one message never holds a round's worth of work for a single peer.
   */
  public static final int MAX_FRAMES_PER_MESSAGE = 64;

  /** Reads what waits on one socket, without blocking. */
  @FunctionalInterface
  public interface Reader {
    /**
     * Reads up to {@code max} messages that are waiting, without blocking.
     *
     * @return how many messages it read; the loop comes back without polling while this is positive
     */
    int drain(ZMQ.Socket socket, int max);
  }

  /** Runs at the start of every round on the loop thread; returns how long, at most, the next poll may block (ms). */
  @FunctionalInterface
  public interface RoundStart {
    long run(long nowNanos);
  }

  /** Whether JeroMQ's mailboxes use Apiary's signaler ({@code zmq.Signaler} in this jar), checked once. */
  static final boolean APIARY_SIGNALER = checkSignaler();

  private final String name;
  private final ZContext context = new ZContext(1);
  /** What the loop waits on: each socket's ZMQ_FD, and {@link Selector#wakeup} from other threads. */
  private final Selector selector;
  private final AtomicBoolean wakePending = new AtomicBoolean();
  private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final List<ZMQ.Socket> sockets = new ArrayList<>();
  private final List<Reader> readers = new ArrayList<>();
  private final Thread thread;
  private RoundStart roundStart = now -> MAX_POLL_MILLIS;
  private Runnable flush = () -> { };
  private Consumer<Throwable> onFailure = e -> { };
  /** JeroMQ's threads of {@link #context} (its I/O thread and its reaper), made by the context's thread factory. */
  private final List<Thread> zmqThreads = new java.util.concurrent.CopyOnWriteArrayList<>();
  /** Set when one of {@link #zmqThreads} died: the sockets can no longer move a byte. */
  private volatile Throwable transportFailure;
  private long lastWatchNanos = System.nanoTime();
  private volatile boolean stopRequested;
  private volatile boolean started;
  /** Rounds run; written by the loop thread only. */
  private volatile long rounds;

  /**
   * Creates the context and the selector; sockets are added with {@link #socket} before {@link #start}.
   *
   * @throws UncheckedIOException if the operating system refuses a selector (out of file descriptors)
   */
  public SocketLoop(String threadName) {
    this.name = threadName;
    // The watchdog on JeroMQ's threads: an Error there (OutOfMemoryError) ends the thread, and with it every
    // connection of the context, while this loop and its caller would go on as if serving.
    context.setThreadFactor((runnable, zmqName) -> {
      Thread t = new Thread(runnable, zmqName);
      t.setDaemon(true);
      t.setUncaughtExceptionHandler(this::zmqThreadDied);
      zmqThreads.add(t);
      return t;
    });
    // What JeroMQ's I/O thread survives (a RuntimeException in one connection's handling) is logged, not printed.
    context.setNotificationExceptionHandler((t, e) -> LOG.log(Level.WARNING, name + ": JeroMQ's thread " + t.getName()
        + " recovered from an error in a connection's handling", e));
    try {
      selector = Selector.open();
    } catch (IOException e) {
      context.close();
      throw new UncheckedIOException(threadName + ": cannot open a selector", e);
    }
    thread = new Thread(this::run, threadName);
    thread.setDaemon(true);
  }

  /**
   * A new socket of this loop's context, with linger 0 and a handshake interval of {@link #HANDSHAKE_MILLIS}. Before
   * {@link #start} only.
   */
  public ZMQ.Socket socket(SocketType type) {
    checkNotStarted();
    ZMQ.Socket socket = context.createSocket(type);
    socket.setLinger(0);
    socket.setHandshakeIvl(HANDSHAKE_MILLIS);
    return socket;
  }

  /** Has the loop read a socket whenever it may hold messages. Before {@link #start} only. */
  public void register(ZMQ.Socket socket, Reader reader) {
    checkNotStarted();
    sockets.add(socket);
    readers.add(reader);
  }

  /** Sets what runs at the start of every round (timers); by default nothing, and polls block up to 100 ms. */
  public void onRoundStart(RoundStart hook) {
    checkNotStarted();
    this.roundStart = hook;
  }

  /**
   * Sets what sends the messages a round queued: it runs after the round's tasks and after its reads. Before
   * {@link #start} only.
   */
  public void onFlush(Runnable hook) {
    checkNotStarted();
    this.flush = hook;
  }

  /**
   * Starts the thread.
   *
   * @param onFailure runs on the loop thread if a task, reader or hook throws; the loop then stops and closes its
   *     sockets
   */
  public void start(Consumer<Throwable> onFailure) {
    checkNotStarted();
    this.onFailure = onFailure;
    started = true;
    thread.start();
  }

  private void checkNotStarted() {
    if (started) {
      throw new IllegalStateException("socket loop " + name + " has already started");
    }
  }

  private void zmqThreadDied(Thread t, Throwable e) {
    transportFailure = new IllegalStateException(name + ": JeroMQ's thread " + t.getName() + " died of " + e
        + "; this loop's sockets can no longer send or receive", e);
    wakeUp();
  }

  /** Throws if one of JeroMQ's threads has ended while the loop runs; looks at most every {@link #MAX_POLL_MILLIS}. */
  private void checkTransport(long nowNanos) {
    if (transportFailure == null && nowNanos - lastWatchNanos >= MAX_POLL_MILLIS * 1_000_000) {
      lastWatchNanos = nowNanos;
      for (Thread t : zmqThreads) {
        if (!t.isAlive() && transportFailure == null) {
          transportFailure = new IllegalStateException(name + ": JeroMQ's thread " + t.getName() + " has ended; this "
              + "loop's sockets can no longer send or receive");
        }
      }
    }
    Throwable failure = transportFailure;
    if (failure != null) {
      throw failure instanceof IllegalStateException ise ? ise : new IllegalStateException(failure);
    }
  }

  /** JeroMQ's threads of this loop's context (tests). */
  List<Thread> zmqThreads() {
    return List.copyOf(zmqThreads);
  }

  /** How many rounds the loop has run (tests count the rounds an exchange costs). */
  long rounds() {
    return rounds;
  }

  /** Whether the calling thread is the loop's. */
  public boolean inLoop() {
    return Thread.currentThread() == thread;
  }

  /** Runs a task on the loop thread, soon. Safe from any thread; never blocks. */
  public void execute(Runnable task) {
    tasks.add(task);
    if (!inLoop() && wakePending.compareAndSet(false, true)) {
      wakeUp();
    }
  }

  private void wakeUp() {
    selector.wakeup(); // a no-op once the selector is closed
  }

  /**
   * Asks the loop to stop and waits up to {@code timeout} for its thread to end; the thread closes every socket and
   * the context as it ends. Called on the loop thread, it only asks.
   *
   * @return whether the thread has ended
   */
  public boolean stop(Duration timeout) {
    stopRequested = true;
    if (!started) {
      closeContext();
      return true;
    }
    wakeUp();
    if (inLoop()) {
      return false;
    }
    try {
      thread.join(timeout.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return !thread.isAlive();
  }

  private void run() {
    try {
      for (ZMQ.Socket s : sockets) {
        // ZMQ_FD becomes readable when ZeroMQ has commands for the socket (such as "a message arrived"); it says
        // nothing about messages already waiting, which is why every round reads every socket until it is empty.
        s.getFD().register(selector, SelectionKey.OP_READ);
      }
      loop();
    } catch (IOException e) {
      failed(new UncheckedIOException(e));
    } catch (RuntimeException | Error e) { // ClosedSelectorException too
      failed(e);
    } finally {
      closeContext();
    }
  }

  private void failed(Throwable e) {
    if (!stopRequested) {
      LOG.log(Level.ERROR, name + ": the socket thread failed and stops", e);
      onFailure.accept(e);
    }
  }

  private void closeContext() {
    try {
      selector.close();
    } catch (IOException e) {
      LOG.log(Level.WARNING, name + ": closing the selector failed: " + e.getMessage());
    }
    if (transportFailure != null) {
      // Closing waits for JeroMQ's I/O thread to acknowledge each socket's end, which a dead thread never does.
      LOG.log(Level.WARNING, name + ": JeroMQ's context is left unclosed, its I/O thread being dead; its sockets "
          + "go with the process");
      return;
    }
    context.close();
  }

  private void loop() throws IOException {
    boolean busy = false;
    while (!stopRequested) {
      rounds++;
      long now = System.nanoTime();
      checkTransport(now);
      long maxWait = roundStart.run(now);
      flush.run();
      // The hook may have sent on a socket, and a send processes the socket's commands, which can take the signal that
      // announced a message: then the message waits with nothing to wake this thread. Ask each socket first.
      if (!busy && !anyReadable()) {
        long wait = Math.max(0, Math.min(MAX_POLL_MILLIS, maxWait));
        // Block only when the last round found nothing to do: under load, waiting every round costs more than the work.
        if (wait == 0) {
          selector.selectNow();
        } else {
          selector.select(wait);
        }
        selector.selectedKeys().clear();
        if (Thread.interrupted()) { // an interrupted selector returns at once: clear it rather than spin
          LOG.log(Level.WARNING, name + ": the socket thread was interrupted; it goes on serving");
        }
      }
      busy = false;
      wakePending.set(false); // before taking the queue: a task added after this sends a new wake-up
      for (Runnable task = tasks.poll(); task != null; task = tasks.poll()) {
        task.run();
        busy = true;
      }
      flush.run();
      // Read whatever waits, whether or not the wait said so: ZeroMQ signals by edges, and a message that arrived
      // while this thread was busy may not raise another one. A round that read anything is followed by another
      // without a wait, so a socket with messages left after its share is read again before the loop ever blocks.
      for (int i = 0; i < sockets.size(); i++) {
        busy |= readers.get(i).drain(sockets.get(i), MAX_FRAMES_PER_ROUND) > 0;
      }
      flush.run();
    }
  }

  /**
   * Sends frames to one peer as multipart messages of at most {@link #MAX_FRAMES_PER_MESSAGE} frames, without
   * blocking. ZeroMQ takes a multipart message whole or not at all.
   *
   * @param peer the ROUTER identity frame that addresses the peer, or {@code null} on a socket with one peer
   * @return how many of {@code frames}, from the first, were taken; fewer than all when the socket refused a message
   *     (its queue to the peer is full)
   */
  public static int sendBatched(ZMQ.Socket socket, byte[] peer, List<byte[]> frames) {
    int sent = 0;
    while (sent < frames.size()) {
      int end = Math.min(frames.size(), sent + MAX_FRAMES_PER_MESSAGE);
      if (peer != null && !socket.send(peer, ZMQ.SNDMORE | ZMQ.DONTWAIT)) {
        return sent;
      }
      for (int i = sent; i < end; i++) {
        boolean last = i == end - 1;
        if (!socket.send(frames.get(i), (last ? 0 : ZMQ.SNDMORE) | ZMQ.DONTWAIT) && i == sent) {
          return sent; // refused as the message's first frame: nothing of it was taken
        }
      }
      sent = end;
    }
    return sent;
  }

  private static boolean checkSignaler() {
    try {
      Class.forName("zmq.Signaler", false, SocketLoop.class.getClassLoader()).getDeclaredField("announced");
      return true;
    } catch (ClassNotFoundException | NoSuchFieldException e) {
      LOG.log(Level.WARNING, "JeroMQ's own zmq.Signaler was loaded instead of Apiary's (put apiary-core before jeromq on "
          + "the class path): at low load, JeroMQ's I/O threads and Apiary's socket loops may spin for milliseconds "
          + "after each signal, which shows as a p99 latency of several milliseconds");
      return false;
    }
  }

  private boolean anyReadable() {
    for (ZMQ.Socket s : sockets) {
      if ((s.getEvents() & ZMQ.Poller.POLLIN) != 0) {
        return true;
      }
    }
    return false;
  }
}
