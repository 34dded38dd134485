package org.apiary.journal;

import java.nio.ByteBuffer;

/** A byte buffer that grows as frames are appended; not thread-safe (the writer guards it). */
final class GrowableBuffer {
  private ByteBuffer buffer;

  GrowableBuffer(int initialCapacity) {
    buffer = ByteBuffer.allocate(initialCapacity);
  }

  int size() {
    return buffer.position();
  }

  void clear() {
    buffer.clear();
  }

  /** The bytes appended so far, as a buffer to read from (shares this buffer's storage). */
  ByteBuffer readable() {
    return ByteBuffer.wrap(buffer.array(), 0, buffer.position());
  }

  private void ensure(int more) {
    if (buffer.remaining() < more) {
      int needed = buffer.position() + more;
      ByteBuffer bigger = ByteBuffer.allocate(Math.max(needed, buffer.capacity() * 2));
      buffer.flip();
      bigger.put(buffer);
      buffer = bigger;
    }
  }

  int reserveFramePrefix() {
    ensure(JournalFormat.FRAME_PREFIX_BYTES);
    int start = buffer.position();
    buffer.position(start + JournalFormat.FRAME_PREFIX_BYTES);
    return start;
  }

  void finishFrame(int start) {
    int bodyStart = start + JournalFormat.FRAME_PREFIX_BYTES;
    int length = buffer.position() - bodyStart;
    buffer.putInt(start, length);
    buffer.putInt(start + 4, (int) JournalFormat.crc(buffer.array(), bodyStart, length));
  }

  GrowableBuffer put(byte b) {
    ensure(1);
    buffer.put(b);
    return this;
  }

  GrowableBuffer put(byte[] b) {
    ensure(b.length);
    buffer.put(b);
    return this;
  }

  GrowableBuffer putShort(short v) {
    ensure(2);
    buffer.putShort(v);
    return this;
  }

  GrowableBuffer putInt(int v) {
    ensure(4);
    buffer.putInt(v);
    return this;
  }

  GrowableBuffer putLong(long v) {
    ensure(8);
    buffer.putLong(v);
    return this;
  }
}
