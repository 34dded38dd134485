package org.apiary.internal.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/** The transport loop shared by the client and the frontend. */
class SocketLoopTest {
  private static final Duration STOP = Duration.ofSeconds(5);

  @Test
  void tasksFromManyThreadsAllRunOnTheLoopThreadInEachThreadsOrder() throws Exception {
    SocketLoop loop = new SocketLoop("test-loop");
    int threads = 4;
    int perThread = 20_000;
    List<List<Integer>> seen = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      seen.add(new ArrayList<>());
    }
    AtomicInteger offLoop = new AtomicInteger();
    CountDownLatch done = new CountDownLatch(threads * perThread);
    loop.start(e -> { });
    try {
      List<Thread> senders = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int sender = t;
        Thread thread = new Thread(() -> {
          for (int i = 0; i < perThread; i++) {
            int n = i;
            loop.execute(() -> {
              if (!loop.inLoop()) {
                offLoop.incrementAndGet();
              }
              seen.get(sender).add(n); // only the loop thread touches these lists
              done.countDown();
            });
          }
        });
        senders.add(thread);
        thread.start();
      }
      for (Thread t : senders) {
        t.join(10_000);
      }
      assertTrue(done.await(10, TimeUnit.SECONDS), () -> done.getCount() + " tasks never ran");
      assertEquals(0, offLoop.get());
      CompletableFuture<Void> barrier = new CompletableFuture<>();
      loop.execute(() -> barrier.complete(null)); // publishes the lists to this thread
      barrier.get(10, TimeUnit.SECONDS);
      for (List<Integer> s : seen) {
        assertEquals(perThread, s.size());
        for (int i = 0; i < perThread; i++) {
          assertEquals(i, s.get(i));
        }
      }
    } finally {
      assertTrue(loop.stop(STOP));
    }
  }

  /** A ROUTER's reader that answers each request with {@code prefix} and the request, from the loop thread. */
  private static SocketLoop.Reader echo(String prefix) {
    byte[] before = prefix.getBytes(StandardCharsets.UTF_8);
    return (socket, max) -> {
      int read = 0;
      for (byte[] peer = socket.recv(ZMQ.DONTWAIT); peer != null; peer = socket.recv(ZMQ.DONTWAIT)) {
        byte[] body = socket.recv(0);
        byte[] reply = java.util.Arrays.copyOf(before, before.length + body.length);
        System.arraycopy(body, 0, reply, before.length, body.length);
        socket.send(peer, ZMQ.SNDMORE);
        socket.send(reply, 0);
        read++;
      }
      return read;
    };
  }

  @Test
  void aRegisteredSocketIsDrainedAndCanAnswerFromTheLoopThread() throws Exception {
    SocketLoop loop = new SocketLoop("test-loop");
    ZMQ.Socket router = loop.socket(SocketType.ROUTER);
    int port = router.bindToRandomPort("tcp://127.0.0.1");
    loop.register(router, echo("echo "));
    CompletableFuture<Throwable> loopFailure = new CompletableFuture<>();
    loop.start(loopFailure::complete);
    try (ZContext client = new ZContext()) {
      ZMQ.Socket dealer = client.createSocket(SocketType.DEALER);
      dealer.setReceiveTimeOut(10_000);
      // This DEALER is not the loop's: without the loop's short handshake interval, JeroMQ's lost connection (see
      // aDealerOfTheLoopThatIsSilentAfterConnectingIsReconnectedSoon) would leave it silent for 30 s.
      dealer.setHandshakeIvl(SocketLoop.HANDSHAKE_MILLIS);
      dealer.connect("tcp://127.0.0.1:" + port);
      for (int i = 0; i < 500; i++) {
        dealer.send("m" + i);
      }
      for (int i = 0; i < 500; i++) {
        int n = i;
        String echo = dealer.recvStr();
        assertEquals("echo m" + i, echo, () -> "reply " + n + " (port " + port + ", dealer errno " + dealer.errno()
            + ", loop failure " + loopFailure.getNow(null) + ")");
      }
    } finally {
      assertTrue(loop.stop(STOP));
    }
  }

  /**
   * JeroMQ 0.6.0's I/O thread can lose a connecting socket's new connection: when the TCP connect completes, its
   * poller drops the connecter's selector key and adds the engine's for the same channel, and if both happen in one
   * pass the engine's is never registered. The connection is up but silent (no ZMTP greeting is sent or read) until
   * the handshake interval ends it, 30 s by default; then the socket reconnects. It happened to about 1 connect in
   * 30 on a 2-core machine. The loop's sockets use a short handshake interval, so such a connection is retried
   * within about {@link SocketLoop#HANDSHAKE_MILLIS} instead of staying silent for longer than a call's timeout.
   */
  @Test
  void aDealerOfTheLoopThatIsSilentAfterConnectingIsReconnectedSoon() throws Exception {
    int connects = 60;
    long limitMillis = SocketLoop.HANDSHAKE_MILLIS + 4_000; // well under JeroMQ's default 30 s
    try (ZContext server = new ZContext(1)) {
      ZMQ.Socket router = server.createSocket(SocketType.ROUTER);
      router.setLinger(0);
      router.setReceiveTimeOut((int) limitMillis);
      int port = router.bindToRandomPort("tcp://127.0.0.1");
      long slowest = 0;
      for (int c = 0; c < connects; c++) {
        SocketLoop loop = new SocketLoop("test-loop");
        ZMQ.Socket dealer = loop.socket(SocketType.DEALER);
        dealer.connect("tcp://127.0.0.1:" + port);
        CompletableFuture<String> answer = new CompletableFuture<>();
        loop.register(dealer, (socket, max) -> {
          int read = 0;
          for (String s = socket.recvStr(ZMQ.DONTWAIT); s != null; s = socket.recvStr(ZMQ.DONTWAIT)) {
            answer.complete(s);
            read++;
          }
          return read;
        });
        CompletableFuture<Throwable> loopFailure = new CompletableFuture<>();
        loop.start(loopFailure::complete);
        try {
          long start = System.nanoTime();
          String ping = "ping " + c;
          loop.execute(() -> dealer.send(ping)); // at once: the exchange starts while the connection is being made
          byte[] peer = router.recv();
          long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
          int n = c;
          assertTrue(peer != null, () -> "connection " + n + ": nothing reached the ROUTER in " + millis + " ms (loop "
              + "failure " + loopFailure.getNow(null) + ")");
          assertEquals(ping, router.recvStr());
          router.send(peer, ZMQ.SNDMORE);
          router.send("pong " + c);
          assertEquals("pong " + c, answer.get(limitMillis, TimeUnit.MILLISECONDS));
          slowest = Math.max(slowest, millis);
        } finally {
          assertTrue(loop.stop(STOP));
        }
      }
      System.getLogger(SocketLoopTest.class.getName()).log(System.Logger.Level.INFO,
          connects + " connections; the slowest first message took " + slowest + " ms");
    }
  }

  @Test
  void aFailingTaskEndsTheLoopAndIsReportedOnce() throws Exception {
    SocketLoop loop = new SocketLoop("test-loop");
    CompletableFuture<Throwable> reported = new CompletableFuture<>();
    AtomicInteger reports = new AtomicInteger();
    loop.start(e -> {
      reports.incrementAndGet();
      reported.complete(e);
    });
    Error injected = new OutOfMemoryError("injected");
    loop.execute(() -> {
      throw injected;
    });
    assertSame(injected, reported.get(10, TimeUnit.SECONDS));
    assertTrue(loop.stop(STOP), "the loop thread should have ended");
    AtomicInteger ran = new AtomicInteger();
    loop.execute(ran::incrementAndGet); // after the end: queued, never run, no exception
    Thread.sleep(200);
    assertEquals(0, ran.get());
    assertEquals(1, reports.get());
  }

  @Test
  void roundStartBoundsThePollSoTimersRunWithoutWakeUps() throws Exception {
    SocketLoop loop = new SocketLoop("test-loop");
    long start = System.nanoTime();
    CountDownLatch due = new CountDownLatch(1);
    long dueAt = start + TimeUnit.MILLISECONDS.toNanos(30);
    loop.onRoundStart(now -> {
      if (now - dueAt >= 0) {
        due.countDown();
        return SocketLoop.MAX_POLL_MILLIS;
      }
      return TimeUnit.NANOSECONDS.toMillis(dueAt - now) + 1;
    });
    loop.start(e -> { });
    try {
      assertTrue(due.await(5, TimeUnit.SECONDS));
    } finally {
      assertTrue(loop.stop(STOP));
    }
  }

  @Test
  void jeroMqsMailboxesUseApiarysSignaler() {
    assertTrue(SocketLoop.APIARY_SIGNALER, "zmq.Signaler should be apiary-core's, not the JeroMQ jar's");
  }

  /**
   * One request at a time between two loops: each exchange should cost each loop a few rounds. JeroMQ 0.6.0's signaler
   * writes a command's wake-up byte before it counts it, and the thread that byte wakes often preempts the writer
   * before the count: the woken loop (or JeroMQ I/O thread) then finds a readable pipe it may not read, every wait
   * returns at once, and it spins until the writer runs again. With JeroMQ's class this test saw 26-55 rounds per
   * exchange (and a p99 of 4-7 ms); with Apiary's {@code zmq.Signaler}, which counts first, 2 and 4.
   */
  @Test
  void oneRequestAtATimeCostsEachLoopAFewRoundsNotASpin() throws Exception {
    SocketLoop server = new SocketLoop("test-server");
    ZMQ.Socket router = server.socket(SocketType.ROUTER);
    int port = router.bindToRandomPort("tcp://127.0.0.1");
    server.register(router, echo(""));
    SocketLoop client = new SocketLoop("test-client");
    ZMQ.Socket dealer = client.socket(SocketType.DEALER);
    dealer.connect("tcp://127.0.0.1:" + port);
    AtomicReference<CompletableFuture<byte[]>> pending = new AtomicReference<>();
    client.register(dealer, (socket, max) -> {
      int read = 0;
      for (byte[] m = socket.recv(ZMQ.DONTWAIT); m != null; m = socket.recv(ZMQ.DONTWAIT)) {
        pending.get().complete(m);
        read++;
      }
      return read;
    });
    server.start(e -> { });
    client.start(e -> { });
    try {
      int warmup = 500;
      int exchanges = 3_000;
      long serverStart = 0;
      long clientStart = 0;
      for (int i = 0; i < warmup + exchanges; i++) {
        if (i == warmup) {
          serverStart = server.rounds();
          clientStart = client.rounds();
        }
        CompletableFuture<byte[]> reply = new CompletableFuture<>();
        pending.set(reply);
        byte[] body = ("m" + i).getBytes(StandardCharsets.UTF_8);
        client.execute(() -> dealer.send(body, 0));
        assertEquals("m" + i, new String(reply.get(10, TimeUnit.SECONDS), StandardCharsets.UTF_8));
      }
      double serverPerExchange = (server.rounds() - serverStart) / (double) exchanges;
      double clientPerExchange = (client.rounds() - clientStart) / (double) exchanges;
      System.getLogger(SocketLoopTest.class.getName()).log(System.Logger.Level.INFO, String.format(
          "rounds per exchange: server %.1f, client %.1f", serverPerExchange, clientPerExchange));
      assertTrue(serverPerExchange < 10, "server rounds per exchange " + serverPerExchange);
      assertTrue(clientPerExchange < 10, "client rounds per exchange " + clientPerExchange);
    } finally {
      assertTrue(client.stop(STOP));
      assertTrue(server.stop(STOP));
    }
  }

  @Test
  void aLoopNeverStartedStopsAndClosesItsSockets() {
    SocketLoop loop = new SocketLoop("test-loop");
    ZMQ.Socket s = loop.socket(SocketType.ROUTER);
    s.bindToRandomPort("tcp://127.0.0.1");
    assertTrue(loop.stop(STOP));
    assertFalse(loop.inLoop());
  }

  /**
   * Issue 45: when JeroMQ's I/O thread died (of an {@link OutOfMemoryError} where it allocates an inbound frame), the
   * loop went on as if serving while no socket of its context could move a byte. Now the loop fails, naming the
   * thread, so its owner stops (a frontend releases its lease and its process exits non-zero).
   */
  @Test
  void aDeadJeroMqIoThreadFailsTheLoop() throws Exception {
    SocketLoop loop = new SocketLoop("test-dead-io");
    ZMQ.Socket router = loop.socket(SocketType.ROUTER);
    router.setMsgAllocator(size -> {
      if (size == 4321) {
        throw new OutOfMemoryError("injected: allocating a frame of " + size + " bytes");
      }
      return new zmq.Msg(size);
    });
    router.bind("tcp://127.0.0.1:*");
    String endpoint = router.getLastEndpoint();
    loop.register(router, (s, max) -> {
      int n = 0;
      while (n < max && s.recv(ZMQ.DONTWAIT) != null) {
        n++;
      }
      return n;
    });
    CompletableFuture<Throwable> failed = new CompletableFuture<>();
    loop.start(failed::complete);
    try (ZContext ctx = new ZContext()) {
      ZMQ.Socket dealer = ctx.createSocket(SocketType.DEALER);
      dealer.setLinger(0);
      dealer.connect(endpoint);
      dealer.send(new byte[4321], 0);
      Throwable e = failed.get(10, TimeUnit.SECONDS);
      assertTrue(e.getMessage().contains("JeroMQ's thread"), e.toString());
      // The handler reports the error while the dying thread is still unwinding: give it a bounded moment to end.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (loop.zmqThreads().stream().allMatch(Thread::isAlive) && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertTrue(loop.zmqThreads().stream().anyMatch(t -> !t.isAlive()), "no JeroMQ thread died");
    } finally {
      loop.stop(STOP);
    }
  }
}
