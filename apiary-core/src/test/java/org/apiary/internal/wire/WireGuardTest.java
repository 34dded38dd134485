package org.apiary.internal.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import zmq.Msg;

class WireGuardTest {
  /**
   * Issue 45, the garbage drill's finding: frames above 1 MiB were allocated by JeroMQ's default allocator as direct
   * buffers, zeroed (so resident at once) and freed only when a collection happened to find their small buffer
   * objects dead; 30 connections each declaring 8 MB, remade every time the wire timeout closed them, took the
   * frontend's resident memory up by 700-900 MB with the wire limits holding at 256 MiB. The guard allocates every
   * frame on the Java heap, which the heap's bound and the collector govern.
   */
  @Test
  void framesOfAnySizeAreAllocatedOnTheHeap() {
    try (ZContext ctx = new ZContext(1)) {
      ZMQ.Socket socket = ctx.createSocket(SocketType.ROUTER);
      WireGuard guard = WireGuard.install(socket, new WireGuard.Limits(10, 10, 32L << 20, 64L << 20,
          Duration.ofSeconds(30)), size -> { });
      for (int size : new int[] {0, 100, 1 << 20, (1 << 20) + 1, 8_000_000}) {
        Msg msg = guard.allocate(size);
        assertEquals(size, msg.size());
        assertFalse(msg.buf().isDirect(), "a frame of " + size + " bytes was allocated off the heap");
      }
    }
  }
}
