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

  @Test
  void aRegisteredSocketIsDrainedAndCanAnswerFromTheLoopThread() throws Exception {
    SocketLoop loop = new SocketLoop("test-loop");
    ZMQ.Socket router = loop.socket(SocketType.ROUTER);
    int port = router.bindToRandomPort("tcp://127.0.0.1");
    loop.register(router, socket -> {
      int read = 0;
      for (byte[] peer = socket.recv(ZMQ.DONTWAIT); peer != null; peer = socket.recv(ZMQ.DONTWAIT)) {
        byte[] body = socket.recv(0);
        socket.send(peer, ZMQ.SNDMORE);
        socket.send(("echo " + new String(body, StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8), 0);
        read++;
      }
      return read;
    });
    CompletableFuture<Throwable> loopFailure = new CompletableFuture<>();
    loop.start(loopFailure::complete);
    try (ZContext client = new ZContext()) {
      ZMQ.Socket dealer = client.createSocket(SocketType.DEALER);
      dealer.setReceiveTimeOut(10_000);
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
  void aLoopNeverStartedStopsAndClosesItsSockets() {
    SocketLoop loop = new SocketLoop("test-loop");
    ZMQ.Socket s = loop.socket(SocketType.ROUTER);
    s.bindToRandomPort("tcp://127.0.0.1");
    assertTrue(loop.stop(STOP));
    assertFalse(loop.inLoop());
  }
}
