package org.apiary.provenance;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;

/**
 * Spill file channels whose flushes, truncations and overwrites fail while the test says so, as a failing disk's
 * would (an {@code fsync} that returns EIO): everything else goes to the real file.
 */
final class FailingChannels implements SpillFile.Channels {
  /** How many of the next flushes fail. */
  final java.util.concurrent.atomic.AtomicInteger forceFailures = new java.util.concurrent.atomic.AtomicInteger();
  volatile boolean failTruncate;
  volatile boolean failOverwrite;
  /** Whether appends fail as on a full disk (ENOSPC): every write at the file's position, the header's too. */
  volatile boolean failAppends;

  @Override
  public FileChannel create(Path file) throws IOException {
    return new Channel(FILES.create(file));
  }

  private final class Channel extends FileChannel {
    private final FileChannel real;

    Channel(FileChannel real) {
      this.real = real;
    }

    @Override
    public void force(boolean metaData) throws IOException {
      if (forceFailures.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        throw new IOException("injected: fsync failed (EIO)");
      }
      real.force(metaData);
    }

    @Override
    public FileChannel truncate(long size) throws IOException {
      if (failTruncate) {
        throw new IOException("injected: truncate failed (EIO)");
      }
      real.truncate(size);
      return this;
    }

    @Override
    public int write(ByteBuffer src, long position) throws IOException {
      if (failOverwrite) {
        throw new IOException("injected: write failed (EIO)");
      }
      return real.write(src, position);
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
      return real.read(dst);
    }

    @Override
    public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
      return real.read(dsts, offset, length);
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
      if (failAppends) {
        throw new IOException("injected: No space left on device");
      }
      return real.write(src);
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
      return real.write(srcs, offset, length);
    }

    @Override
    public long position() throws IOException {
      return real.position();
    }

    @Override
    public FileChannel position(long newPosition) throws IOException {
      real.position(newPosition);
      return this;
    }

    @Override
    public long size() throws IOException {
      return real.size();
    }

    @Override
    public long transferTo(long position, long count, WritableByteChannel target) throws IOException {
      return real.transferTo(position, count, target);
    }

    @Override
    public long transferFrom(ReadableByteChannel src, long position, long count) throws IOException {
      return real.transferFrom(src, position, count);
    }

    @Override
    public int read(ByteBuffer dst, long position) throws IOException {
      return real.read(dst, position);
    }

    @Override
    public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
      return real.map(mode, position, size);
    }

    @Override
    public FileLock lock(long position, long size, boolean shared) throws IOException {
      return real.lock(position, size, shared);
    }

    @Override
    public FileLock tryLock(long position, long size, boolean shared) throws IOException {
      return real.tryLock(position, size, shared);
    }

    @Override
    protected void implCloseChannel() throws IOException {
      real.close();
    }
  }
}
