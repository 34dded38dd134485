package org.apiary.internal.wire;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The transport both ends of Apiary's wire share: one thread that owns a ZeroMQ context and every socket in it, as
 * ZeroMQ requires. The client and the frontend each run one.
 *
 * <p>Other threads hand work to the loop with {@link #execute}: the task goes on a concurrent queue and, unless a
 * wake-up is already on its way, one byte through an inproc pipe ends the loop's poll. Each round the loop runs its
 * timer hook, polls (only when the previous round found nothing to do), then runs every queued task and reads up to
 * {@link #MAX_MESSAGES_PER_ROUND} messages from each registered socket, so one wake-up serves any number of tasks and
 * one poll many messages, and a flood of incoming messages never keeps the queued tasks (replies) waiting.
 */
public final class SocketLoop {
  private static final Logger LOG = System.getLogger(SocketLoop.class.getName());
  private static final AtomicInteger INSTANCES = new AtomicInteger();
  private static final byte[] WAKE = {1};
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
   * The most messages a round reads from one socket before it runs the queued tasks again. Reading until a socket is
   * empty let a sender faster than this thread keep every task (the replies to other clients) waiting for as long as
   * it kept sending.
   */
  public static final int MAX_MESSAGES_PER_ROUND = 256;

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

  private final String name;
  private final ZContext context = new ZContext(1);
  private final ZMQ.Socket wakeReceiver;
  /** The sending end of the wake-up pipe: used only under its own monitor; null once the loop has closed it. */
  private ZMQ.Socket wakeSender;
  private final Object wakeLock = new Object();
  private final AtomicBoolean wakePending = new AtomicBoolean();
  private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final List<ZMQ.Socket> sockets = new ArrayList<>();
  private final List<Reader> readers = new ArrayList<>();
  private final Thread thread;
  private RoundStart roundStart = now -> MAX_POLL_MILLIS;
  private Consumer<Throwable> onFailure = e -> { };
  private volatile boolean stopRequested;
  private volatile boolean started;

  /** Creates the context and the wake-up pipe; sockets are added with {@link #socket} before {@link #start}. */
  public SocketLoop(String threadName) {
    this.name = threadName;
    String endpoint = "inproc://apiary-wake-ups-" + INSTANCES.incrementAndGet();
    wakeReceiver = context.createSocket(SocketType.PAIR);
    wakeReceiver.setLinger(0);
    wakeReceiver.bind(endpoint);
    ZMQ.Socket sender = context.createSocket(SocketType.PAIR);
    sender.setLinger(0);
    sender.connect(endpoint);
    wakeSender = sender;
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
    synchronized (wakeLock) {
      if (wakeSender == null) {
        return;
      }
      // At most one wake-up is in the pipe at a time (wakePending), so this never meets a full pipe.
      if (!wakeSender.send(WAKE, ZMQ.DONTWAIT)) {
        LOG.log(Level.WARNING, name + ": could not wake the socket thread (ZeroMQ error " + wakeSender.errno()
            + "); it sees new work within " + MAX_POLL_MILLIS + " ms");
      }
    }
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
    ZMQ.Poller poller = null;
    try {
      poller = context.createPoller(1 + sockets.size());
      poller.register(wakeReceiver, ZMQ.Poller.POLLIN);
      for (ZMQ.Socket s : sockets) {
        poller.register(s, ZMQ.Poller.POLLIN);
      }
      loop(poller);
    } catch (RuntimeException | Error e) {
      if (!stopRequested) {
        LOG.log(Level.ERROR, name + ": the socket thread failed and stops", e);
        onFailure.accept(e);
      }
    } finally {
      if (poller != null) {
        poller.close();
      }
      closeContext();
    }
  }

  private void closeContext() {
    synchronized (wakeLock) {
      wakeSender = null; // closed with the context below; no other thread can be using it now
    }
    context.close();
  }

  private void loop(ZMQ.Poller poller) {
    boolean busy = false;
    while (!stopRequested) {
      long maxWait = roundStart.run(System.nanoTime());
      // Block only when the last round found nothing to do: under load, polling every round costs more (JeroMQ
      // re-registers its sockets with the selector each time) than the work itself.
      if (!busy && poller.poll(Math.max(0, Math.min(MAX_POLL_MILLIS, maxWait))) < 0 && !stopRequested) {
        // JeroMQ reports an interrupt (EINTR) this way: poll again rather than leave the sockets unserved.
        boolean interrupted = Thread.interrupted();
        LOG.log(Level.WARNING, name + ": polling failed (ZeroMQ error " + wakeReceiver.errno()
            + (interrupted ? ", thread interrupted" : "") + "); polling again");
      }
      busy = false;
      // Read whatever the poll said: ZeroMQ signals readiness by edges, and a message that arrived while this thread
      // was busy may not raise another one. A round that read anything is followed by another without a poll, so a
      // socket with messages left after its share is read again before the loop ever blocks.
      while (wakeReceiver.recv(ZMQ.DONTWAIT) != null) {
        busy = true;
      }
      wakePending.set(false); // before taking the queue: a task added after this sends a new wake-up
      for (Runnable task = tasks.poll(); task != null; task = tasks.poll()) {
        task.run();
        busy = true;
      }
      for (int i = 0; i < sockets.size(); i++) {
        busy |= readers.get(i).drain(sockets.get(i), MAX_MESSAGES_PER_ROUND) > 0;
      }
    }
  }
}
