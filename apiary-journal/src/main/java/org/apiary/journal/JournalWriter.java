package org.apiary.journal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Appends records to a journal and makes them durable in groups. Database sites call {@link #append} at the end of
 * each committed write transaction (cheap: it encodes into memory under a lock); one writer thread takes whatever has
 * accumulated, writes it as one group and fsyncs it, then advances the durable watermark. In
 * {@link JournalMode#SYNCHRONOUS} mode the writer starts a group as soon as records wait and the previous fsync is
 * done (group commit); in {@link JournalMode#ASYNCHRONOUS} mode at least every {@link Settings#fsyncInterval()}.
 *
 * <p>Faults: a failed write (a full disk) keeps the group in memory, refuses further appends with the reason (so no
 * new write commits that could not be journaled), and retries every {@link Settings#retryInterval()} until it succeeds;
 * then appends resume. A failed fsync is final (after one, what reached the disk is unknown): every append is refused
 * and every waiter fails until the server is restarted and recovers from what is on disk.
 */
public final class JournalWriter implements AutoCloseable {
  /**
   * How a writer behaves.
   *
   * @param mode when replies may leave (this writer only needs to know whether to wait for the interval)
   * @param fsyncInterval asynchronous mode: the longest a record waits before its group is fsynced
   * @param segmentBytes a segment is closed and the next started once it holds about this many bytes
   * @param maxPendingBytes appends are refused while more than this many bytes wait for the disk
   * @param retryInterval how often a failed write is tried again
   */
  public record Settings(JournalMode mode, Duration fsyncInterval, long segmentBytes, long maxPendingBytes,
                         Duration retryInterval) {
    /** The default asynchronous interval: a crash loses at most about this much acknowledged work. */
    public static final Duration DEFAULT_FSYNC_INTERVAL = Duration.ofMillis(100);

    public Settings {
      if (mode == null || mode == JournalMode.NONE) {
        throw new IllegalArgumentException("a journal writer needs mode asynchronous or synchronous, got " + mode);
      }
      if (fsyncInterval.isNegative() || fsyncInterval.isZero()) {
        throw new IllegalArgumentException("fsyncInterval must be positive, got " + fsyncInterval);
      }
      if (segmentBytes < JournalFormat.HEADER_BYTES + 1 || maxPendingBytes < 1) {
        throw new IllegalArgumentException("segmentBytes and maxPendingBytes must be positive");
      }
    }

    /** Defaults for {@code mode}: 100 ms interval, 64 MiB segments, 64 MiB waiting at most, retry every second. */
    public static Settings of(JournalMode mode) {
      return new Settings(mode, DEFAULT_FSYNC_INTERVAL, 64L << 20, 64L << 20, Duration.ofSeconds(1));
    }

    public Settings withSegmentBytes(long bytes) {
      return new Settings(mode, fsyncInterval, bytes, maxPendingBytes, retryInterval);
    }

    public Settings withFsyncInterval(Duration interval) {
      return new Settings(mode, interval, segmentBytes, maxPendingBytes, retryInterval);
    }

    public Settings withRetryInterval(Duration interval) {
      return new Settings(mode, fsyncInterval, segmentBytes, maxPendingBytes, interval);
    }
  }

  /**
   * What the writer has done, for status and benchmarks.
   *
   * @param durableLag records appended but not yet on disk
   * @param failure why appends are refused, or {@code null} while healthy
   */
  public record Status(JournalMode mode, long timeline, long appended, long durable, long durableLag, long groups,
                       long records, long bytes, int segments, String failure) {}

  private record Waiter(long sequence, CompletableFuture<Void> future) {}

  private record Segment(Path file, long first) {}

  private final JournalDirectory directory;
  private final long timeline;
  private final Settings settings;
  private final Object lock = new Object();
  private GrowableBuffer pending = new GrowableBuffer(1 << 16);
  private GrowableBuffer spare = new GrowableBuffer(1 << 16);
  private long lastAppended;
  private long firstPending;
  private int pendingRecords;
  private final PriorityQueue<Waiter> waiters = new PriorityQueue<>((a, b) -> Long.compare(a.sequence, b.sequence));
  private volatile long durable;
  private volatile String failure;
  private volatile boolean permanentlyFailed;
  private boolean closing;
  private final Thread thread;
  private final ExecutorService acks;
  private FileChannel channel;
  private long segmentNumber;
  private long segmentSize;
  private final ArrayDeque<Segment> segments = new ArrayDeque<>();
  private long groups;
  private long recordsWritten;
  private long bytesWritten;

  private JournalWriter(JournalDirectory directory, long timeline, long firstSequence, Settings settings) {
    this.directory = directory;
    this.timeline = timeline;
    this.settings = settings;
    this.lastAppended = firstSequence - 1;
    this.durable = firstSequence - 1;
    this.firstPending = firstSequence;
    this.acks = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "apiary-journal-acks");
      t.setDaemon(true);
      return t;
    });
    this.thread = new Thread(this::run, "apiary-journal-writer");
    this.thread.setDaemon(true);
  }

  /**
   * Starts a writer on a new timeline in {@code directory}; its first record gets {@code firstSequence}.
   *
   * @throws JournalException if the first segment cannot be created
   */
  public static JournalWriter start(JournalDirectory directory, long timeline, long firstSequence, Settings settings) {
    JournalWriter w = new JournalWriter(directory, timeline, firstSequence, settings);
    try {
      w.openSegment(firstSequence);
    } catch (IOException e) {
      throw new JournalException("cannot create a journal segment in " + directory.path() + ": "
          + JournalDirectory.describe(e), e);
    }
    w.thread.start();
    return w;
  }

  /**
   * Starts a writer that continues {@code continued}, a timeline of {@code directory} as {@link JournalReader#scan}
   * found it (a cluster node that died and rejoins the running cluster writes the timeline the other nodes write):
   * the torn tail of its last segment is cut at the last whole record, and the next record goes into a new segment
   * with the next sequence, so a reader sees one timeline without a gap. The earlier segments are this writer's to
   * delete once a checkpoint covers them ({@link #deleteSegmentsBefore}).
   *
   * @throws JournalException if the tail cannot be cut or the new segment created
   */
  public static JournalWriter continueTimeline(JournalDirectory directory, JournalReader.Timeline continued,
                                               Settings settings) {
    long timeline = continued.timeline();
    List<JournalDirectory.SegmentName> names = JournalDirectory.list(directory.path()).stream()
        .filter(n -> n.timeline() == timeline).toList();
    try {
      if (continued.records() == 0) { // nothing to continue: a fresh start of the timeline
        for (JournalDirectory.SegmentName n : names) {
          Files.delete(n.file());
        }
        return start(directory, timeline, 1, settings);
      }
      JournalWriter w = new JournalWriter(directory, timeline, continued.lastSequence() + 1, settings);
      List<Path> kept = continued.segments();
      for (JournalDirectory.SegmentName n : names) {
        int i = kept.indexOf(n.file());
        long valid = i < 0 ? 0 : continued.validBytes().get(i);
        if (i < 0 || Files.size(n.file()) < JournalFormat.HEADER_BYTES) {
          Files.delete(n.file()); // after the damage the scan stopped at, or a header that never reached the disk
          continue;
        }
        if (Files.size(n.file()) > valid) {
          try (FileChannel c = FileChannel.open(n.file(), StandardOpenOption.WRITE)) {
            c.truncate(valid);
            c.force(true);
          }
        }
        byte[] header = new byte[JournalFormat.HEADER_BYTES];
        try (java.io.InputStream in = Files.newInputStream(n.file())) {
          in.readNBytes(header, 0, header.length);
        }
        w.segments.addLast(new Segment(n.file(), JournalFormat.parseHeader(header).firstSequence()));
        w.segmentNumber = Math.max(w.segmentNumber, n.segment());
      }
      w.openSegment(continued.lastSequence() + 1);
      w.thread.start();
      return w;
    } catch (IOException e) {
      throw new JournalException("cannot continue timeline " + Long.toHexString(timeline) + " in "
          + directory.path() + ": " + JournalDirectory.describe(e), e);
    }
  }

  /** The timeline this writer writes. */
  public long timeline() {
    return timeline;
  }

  /** The settings it runs with. */
  public Settings settings() {
    return settings;
  }

  /**
   * Appends one committed transaction's record and returns its sequence. Called from a database site, at the end of
   * the transaction: a refusal must roll the transaction back.
   *
   * @throws JournalUnavailableException if the journal cannot take records now; the message says why
   */
  public long append(int partition, long txnId, long uniqueId, int catalogVersion, long resultHash, String procedure,
                     String invocationId, byte[] parameters) {
    return append(partition, txnId, uniqueId, catalogVersion, resultHash, procedure, invocationId, null,
        JournalRecord.NO_GRAPH_VERSION, parameters);
  }

  /**
   * As {@link #append(int, long, long, int, long, String, String, byte[])}, for a transaction that ran for an
   * invocation of {@code graph} at version {@code graphVersion} (see {@link JournalRecord#graphVersion()}).
   */
  public long append(int partition, long txnId, long uniqueId, int catalogVersion, long resultHash, String procedure,
                     String invocationId, String graph, int graphVersion, byte[] parameters) {
    synchronized (lock) {
      String refused = failure;
      if (refused != null) {
        throw new JournalUnavailableException(refused);
      }
      if (closing) {
        throw new JournalUnavailableException("the journal is closing; the server is stopping");
      }
      if (pending.size() > settings.maxPendingBytes()) {
        throw new JournalUnavailableException("the journal is " + (pending.size() >> 20) + " MiB behind its disk "
            + "(at most " + (settings.maxPendingBytes() >> 20) + " MiB may wait); the write was refused");
      }
      long sequence = lastAppended + 1;
      JournalFormat.writeRecord(pending, sequence, partition, txnId, uniqueId, catalogVersion, resultHash, procedure,
          invocationId, graph, graphVersion, parameters);
      lastAppended = sequence;
      pendingRecords++;
      if (settings.mode() == JournalMode.SYNCHRONOUS && pendingRecords == 1) {
        lock.notifyAll();
      }
      return sequence;
    }
  }

  /**
   * Appends a {@link JournalRecord#mark mark}: the multi-partition transaction {@code multiPartitionTxnId} is
   * executing now on {@code partition} (its site is blocked in it), so the mark falls between the partition's
   * transactions before and after it.
   */
  public long appendMark(int partition, long multiPartitionTxnId, int catalogVersion) {
    return append(partition, multiPartitionTxnId, 0, catalogVersion, 0, "", null, new byte[0]);
  }

  /** The sequence of the newest record appended (not necessarily durable). */
  public long lastAppended() {
    synchronized (lock) {
      return lastAppended;
    }
  }

  /** Every record up to this sequence is on disk. */
  public long durableSequence() {
    return durable;
  }

  /** Why appends are refused, or {@code null} while the journal is healthy. */
  public String failure() {
    return failure;
  }

  /**
   * Completes once the record at {@code sequence} (and every one before it) is on disk, on a thread of its own (never
   * a database site or the writer); fails with {@link JournalUnavailableException} if the journal failed for good.
   */
  public CompletableFuture<Void> whenDurable(long sequence) {
    if (sequence <= durable) {
      return CompletableFuture.completedFuture(null);
    }
    CompletableFuture<Void> f = new CompletableFuture<>();
    synchronized (lock) {
      if (permanentlyFailed) {
        f.completeExceptionally(new JournalUnavailableException(failure));
        return f;
      }
      if (sequence <= durable) {
        return CompletableFuture.completedFuture(null);
      }
      waiters.add(new Waiter(sequence, f));
      lock.notifyAll(); // a waiter does not wait out the asynchronous interval

    }
    return f;
  }

  /** Waits until everything appended so far is on disk, at most {@code timeout}. */
  public void flush(Duration timeout) {
    long target = lastAppended();
    try {
      whenDurable(target).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new JournalUnavailableException("the journal could not write its last records: " + e.getCause().getMessage());
    } catch (java.util.concurrent.TimeoutException e) {
      throw new JournalUnavailableException("the journal did not write its last records within " + timeout
          + (failure == null ? "" : ": " + failure));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new JournalUnavailableException("interrupted while flushing the journal");
    }
  }

  /** The writer's counters. */
  public Status status() {
    synchronized (lock) {
      return new Status(settings.mode(), timeline, lastAppended, durable, lastAppended - durable, groups,
          recordsWritten, bytesWritten, segments.size(), failure);
    }
  }

  /**
   * Deletes this timeline's closed segments whose records all come before {@code sequence} (a snapshot covers them).
   */
  public void deleteSegmentsBefore(long sequence) {
    List<Path> doomed = new ArrayList<>();
    synchronized (lock) {
      while (segments.size() > 1) {
        Segment oldest = segments.peekFirst();
        Segment next = segments.stream().skip(1).findFirst().orElseThrow();
        if (next.first() <= sequence) {
          doomed.add(oldest.file());
          segments.removeFirst();
        } else {
          break;
        }
      }
    }
    doomed.forEach(JournalDirectory::delete);
  }

  private void run() {
    long intervalMs = settings.fsyncInterval().toMillis();
    while (true) {
      GrowableBuffer batch;
      long first;
      long last;
      int count;
      synchronized (lock) {
        long deadline = System.currentTimeMillis() + intervalMs;
        while (!closing && !permanentlyFailed) {
          boolean ready = pendingRecords > 0 && (settings.mode() == JournalMode.SYNCHRONOUS
              || System.currentTimeMillis() >= deadline || !waiters.isEmpty()
              || pending.size() >= settings.maxPendingBytes() / 2);
          if (ready) {
            break;
          }
          long wait = settings.mode() == JournalMode.SYNCHRONOUS || pendingRecords == 0 ? intervalMs
              : Math.max(1, deadline - System.currentTimeMillis());
          try {
            lock.wait(wait);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closing = true;
          }
        }
        if (permanentlyFailed || (closing && pendingRecords == 0)) {
          break;
        }
        batch = pending;
        pending = spare;
        spare = batch;
        first = firstPending;
        last = lastAppended;
        count = pendingRecords;
        firstPending = last + 1;
        pendingRecords = 0;
      }
      GrowableBuffer group = new GrowableBuffer(JournalFormat.GROUP_BODY_BYTES + JournalFormat.FRAME_PREFIX_BYTES);
      JournalFormat.writeGroup(group, first, last, count, System.currentTimeMillis());
      if (!writeGroup(group, batch, first)) {
        break;
      }
      synchronized (lock) {
        spare.clear();
        durable = last;
        groups++;
        recordsWritten += count;
        releaseWaiters();
      }
    }
    synchronized (lock) {
      if (permanentlyFailed) {
        failAllWaiters();
      }
    }
    closeChannel();
  }

  /** Writes one group and fsyncs it; retries failed writes; returns false after a failed fsync. */
  private boolean writeGroup(GrowableBuffer group, GrowableBuffer batch, long first) {
    while (true) {
      long sizeBefore = segmentSize;
      try {
        long bytes = group.size() + batch.size();
        if (segmentSize > JournalFormat.HEADER_BYTES && segmentSize + bytes > settings.segmentBytes()) {
          channel.force(false);
          channel.close();
          openSegment(first);
          sizeBefore = segmentSize;
        }
        ByteBuffer[] buffers = {group.readable(), batch.readable()};
        while (buffers[0].hasRemaining() || buffers[1].hasRemaining()) {
          channel.write(buffers);
        }
        segmentSize += bytes;
      } catch (IOException e) {
        String reason = "the journal cannot write to " + directory.path() + " (" + JournalDirectory.describe(e)
            + "); writes are refused until it can, retried every " + settings.retryInterval().toMillis() + " ms";
        boolean firstFailure;
        synchronized (lock) {
          firstFailure = failure == null;
          failure = reason;
        }
        if (firstFailure) {
          System.getLogger(JournalWriter.class.getName()).log(System.Logger.Level.ERROR, reason);
        }
        truncateTo(sizeBefore);
        if (!sleep(settings.retryInterval())) {
          return false;
        }
        continue;
      }
      try {
        channel.force(false);
      } catch (IOException e) {
        String reason = "the journal's fsync failed in " + directory.path() + " (" + JournalDirectory.describe(e)
            + "): what reached the disk is unknown, so no more writes are accepted; restart the server to recover "
            + "from what is on disk";
        synchronized (lock) {
          failure = reason;
          permanentlyFailed = true;
        }
        System.getLogger(JournalWriter.class.getName()).log(System.Logger.Level.ERROR, reason);
        return false;
      }
      synchronized (lock) {
        if (failure != null && !permanentlyFailed) {
          System.getLogger(JournalWriter.class.getName()).log(System.Logger.Level.INFO,
              "the journal writes again; writes are accepted");
          failure = null;
        }
        bytesWritten += group.size() + batch.size();
      }
      return true;
    }
  }

  private void truncateTo(long size) {
    try {
      channel.truncate(size);
      channel.position(size);
      segmentSize = size;
    } catch (IOException e) {
      // The next write attempt reports the disk's state again; a partial frame left here is cut by recovery.
      System.getLogger(JournalWriter.class.getName()).log(System.Logger.Level.WARNING, "cannot truncate the journal "
          + "segment after a failed write: " + JournalDirectory.describe(e));
    }
  }

  private boolean sleep(Duration d) {
    synchronized (lock) {
      if (closing) {
        return true; // keep trying while closing: close() bounds the wait
      }
      try {
        lock.wait(d.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return true;
  }

  private void releaseWaiters() {
    List<CompletableFuture<Void>> done = new ArrayList<>();
    while (!waiters.isEmpty() && waiters.peek().sequence() <= durable) {
      done.add(waiters.poll().future());
    }
    if (!done.isEmpty()) {
      acks.execute(() -> done.forEach(f -> f.complete(null)));
    }
  }

  private void failAllWaiters() {
    List<CompletableFuture<Void>> failed = new ArrayList<>();
    while (!waiters.isEmpty()) {
      failed.add(waiters.poll().future());
    }
    String reason = failure;
    acks.execute(() -> failed.forEach(f -> f.completeExceptionally(new JournalUnavailableException(reason))));
  }

  private void openSegment(long firstSequence) throws IOException {
    segmentNumber++;
    Path file = directory.path().resolve(JournalFormat.segmentName(timeline, segmentNumber));
    channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    ByteBuffer header = ByteBuffer.wrap(JournalFormat.header(timeline, segmentNumber, firstSequence));
    while (header.hasRemaining()) {
      channel.write(header);
    }
    channel.force(true);
    // The new file's directory entry must be on disk before records in it are called durable.
    try (FileChannel dir = FileChannel.open(directory.path(), StandardOpenOption.READ)) {
      dir.force(true);
    }
    segmentSize = JournalFormat.HEADER_BYTES;
    synchronized (lock) {
      segments.addLast(new Segment(file, firstSequence));
    }
  }

  private void closeChannel() {
    try {
      if (channel != null && channel.isOpen()) {
        channel.close();
      }
    } catch (IOException e) {
      System.getLogger(JournalWriter.class.getName()).log(System.Logger.Level.WARNING, "closing the journal segment: "
          + JournalDirectory.describe(e));
    }
  }

  /**
   * Writes and fsyncs what was appended (waiting at most {@code timeout}), then stops the writer. Appends are refused
   * from here on.
   */
  public void close(Duration timeout) {
    synchronized (lock) {
      closing = true;
      lock.notifyAll();
    }
    try {
      thread.join(timeout.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (thread.isAlive()) {
      thread.interrupt();
      System.getLogger(JournalWriter.class.getName()).log(System.Logger.Level.WARNING, "the journal writer did not "
          + "finish within " + timeout + (failure == null ? "" : " (" + failure + ")") + "; records after "
          + durable + " are not on disk");
    }
    acks.shutdown();
  }

  @Override
  public void close() {
    close(Duration.ofSeconds(10));
  }
}
