package zmq.io.coder.v2;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.SplittableRandom;
import org.apiary.internal.wire.WireGuard;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import zmq.Msg;
import zmq.io.coder.IDecoder.Step;
import zmq.util.Errno;
import zmq.util.ValueReference;

class V2DecoderTest {
  private static final int DECLARED = 8_000_000;

  private static byte[] largeHeader(int flags, long size) {
    return ByteBuffer.allocate(9).put((byte) (flags | 2)).putLong(size).array();
  }

  /** Feeds {@code bytes} as JeroMQ's engine does when it read them (not zero-copy); the last step's result. */
  private static Step.Result feed(V2Decoder decoder, byte[] bytes) {
    ByteBuffer data = ByteBuffer.wrap(bytes);
    Step.Result result = Step.Result.MORE_DATA;
    while (data.hasRemaining()) {
      ValueReference<Integer> processed = new ValueReference<>(0);
      result = decoder.decode(data, data.remaining(), processed);
      data.position(Math.min(bytes.length, data.position()));
      if (result != Step.Result.MORE_DATA) {
        return result;
      }
    }
    return result;
  }

  private static long allocatedHere() {
    return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
  }

  /**
   * Issue 45, finding 9 (the garbage drill's resident memory grew by 581 MB): a guarded connection's frame was
   * allocated at its declared size as soon as the size arrived, so a peer that declared 8 MB and sent 8 bytes held
   * 8 MB until the wire timeout closed it, and thousands of them in turn kept the heap large. Now a large frame's body
   * grows as its bytes arrive, and a whole frame is still decoded exactly.
   */
  @Test
  void aLargeFrameIsAllocatedAsItsBytesArriveNotAtItsDeclaredSize() {
    try (ZContext ctx = new ZContext(1)) {
      ZMQ.Socket socket = ctx.createSocket(SocketType.ROUTER);
      WireGuard guard = WireGuard.install(socket, new WireGuard.Limits(10, 10, 32L << 20, 64L << 20,
          Duration.ofSeconds(30)), size -> { });
      V2Decoder stalled = new V2Decoder(new Errno(), 8192, -1, guard);
      long before = allocatedHere();
      assertEquals(Step.Result.MORE_DATA, feed(stalled, largeHeader(0, DECLARED)));
      assertEquals(Step.Result.MORE_DATA, feed(stalled, new byte[8]));
      long allocated = allocatedHere() - before;
      assertTrue(allocated < 1 << 20, "a frame declaring " + DECLARED + " bytes with 8 sent allocated " + allocated
          + " bytes");
      assertEquals(DECLARED, guard.unfinishedBytes(), "the bounds count the declared size");
      stalled.destroy();
      assertEquals(0, guard.unfinishedBytes());

      V2Decoder whole = new V2Decoder(new Errno(), 8192, -1, guard);
      byte[] bodyBytes = new byte[DECLARED];
      new SplittableRandom(45).nextBytes(bodyBytes);
      assertEquals(Step.Result.MORE_DATA, feed(whole, largeHeader(0, DECLARED)));
      Step.Result last = Step.Result.MORE_DATA;
      for (int off = 0; off < DECLARED; off += 100_000) {
        last = feed(whole, java.util.Arrays.copyOfRange(bodyBytes, off, Math.min(DECLARED, off + 100_000)));
      }
      assertEquals(Step.Result.DECODED, last);
      Msg msg = whole.msg();
      assertEquals(DECLARED, msg.size());
      assertArrayEquals(bodyBytes, msg.data());
      assertEquals(0, guard.unfinishedBytes());
      whole.destroy();
    }
  }
}
