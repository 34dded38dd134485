package org.apiary.internal.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMQException;
import zmq.ZError;

/**
 * Apiary's {@code zmq.Signaler} under JeroMQ's own blocking paths, which the socket loops do not use (they never
 * block in JeroMQ): a receive that times out, one that is interrupted, one whose context is closed under it, and many
 * threads signalling one mailbox at once.
 */
@Timeout(60)
class SignalerTest {

  @Test
  void aReceiveWithATimeoutOnAnEmptySocketReturnsNothingWithEagain() {
    try (ZContext context = new ZContext(1)) {
      ZMQ.Socket pull = context.createSocket(SocketType.PULL);
      pull.bind("inproc://empty");
      pull.setReceiveTimeOut(200);
      assertNull(pull.recv());
      assertEquals(ZError.EAGAIN, pull.errno());
    }
  }

  @Test
  void anInterruptedBlockingReceiveReturnsAndTheSocketStillWorks() throws Exception {
    try (ZContext context = new ZContext(1)) {
      ZMQ.Socket pull = context.createSocket(SocketType.PULL);
      pull.bind("inproc://interrupted");
      ZMQ.Socket push = context.createSocket(SocketType.PUSH);
      push.connect("inproc://interrupted");
      CompletableFuture<Object> first = new CompletableFuture<>();
      Thread reader = new Thread(() -> {
        try {
          first.complete(pull.recv()); // blocks: nothing was sent
        } catch (ZMQException e) {
          first.complete(e);
        }
      });
      reader.start();
      Thread.sleep(200);
      reader.interrupt();
      Object ended = first.get(10, TimeUnit.SECONDS);
      assertTrue(ended == null || ended instanceof ZMQException, () -> "the interrupted receive returned " + ended);
      reader.join(10_000);
      // The interrupt must not have closed the mailbox's pipe: the socket goes on receiving, on this thread.
      assertTrue(push.send("after"));
      pull.setReceiveTimeOut(10_000);
      assertEquals("after", pull.recvStr());
    }
  }

  /** ZeroMQ's shutdown: terminating the context ends a receive blocked on another thread with ETERM. */
  @Test
  void terminatingTheContextEndsABlockedReceive() throws Exception {
    ZMQ.Context context = ZMQ.context(1);
    ZMQ.Socket pull = context.socket(SocketType.PULL);
    pull.setLinger(0);
    pull.bind("inproc://closing");
    CompletableFuture<Object> ended = new CompletableFuture<>();
    Thread reader = new Thread(() -> {
      try {
        ended.complete(pull.recv());
      } catch (RuntimeException e) {
        ended.complete(e);
      } finally {
        pull.close(); // the owning thread closes its socket, which lets term() finish
      }
    });
    reader.start();
    Thread.sleep(200);
    Thread terminator = new Thread(context::term);
    terminator.start();
    Object result = ended.get(10, TimeUnit.SECONDS);
    assertTrue(result instanceof ZMQException && ((ZMQException) result).getErrorCode() == ZError.ETERM,
        () -> "the blocked receive ended with " + result);
    terminator.join(10_000);
    assertTrue(!terminator.isAlive(), "terminating the context did not finish");
  }

  /**
   * Inproc connections signal the peer's mailbox from the sending thread, so eight senders write one ROUTER's signal
   * pipe at once; every message arrives, in each sender's order.
   */
  @Test
  void manyThreadsSignallingOneMailboxLoseNothing() throws Exception {
    int senders = 8;
    int perSender = 2_000;
    try (ZContext context = new ZContext(1)) {
      ZMQ.Socket router = context.createSocket(SocketType.ROUTER);
      router.setReceiveTimeOut(10_000);
      router.setRcvHWM(0);
      router.bind("inproc://many");
      List<Thread> threads = new ArrayList<>();
      List<Throwable> failures = new ArrayList<>();
      for (int s = 0; s < senders; s++) {
        ZMQ.Socket dealer = context.createSocket(SocketType.DEALER);
        dealer.setIdentity(("sender-" + s).getBytes(StandardCharsets.UTF_8));
        dealer.setSndHWM(0);
        dealer.connect("inproc://many");
        Thread t = new Thread(() -> {
          try {
            for (int i = 0; i < perSender; i++) {
              dealer.send(Integer.toString(i));
            }
          } catch (RuntimeException e) {
            synchronized (failures) {
              failures.add(e);
            }
          }
        });
        threads.add(t);
      }
      threads.forEach(Thread::start);
      Map<String, Integer> next = new HashMap<>();
      for (int n = 0; n < senders * perSender; n++) {
        byte[] peer = router.recv();
        int received = n;
        assertTrue(peer != null, () -> "only " + received + " messages arrived (errno " + router.errno() + ")");
        String sender = new String(peer, StandardCharsets.UTF_8);
        int expected = next.getOrDefault(sender, 0);
        assertEquals(Integer.toString(expected), router.recvStr(), sender);
        next.put(sender, expected + 1);
      }
      for (Thread t : threads) {
        t.join(10_000);
      }
      assertTrue(failures.isEmpty(), () -> "senders failed: " + failures);
      assertEquals(senders, next.size());
    }
  }
}
