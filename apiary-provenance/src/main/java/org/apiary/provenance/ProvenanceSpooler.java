package org.apiary.provenance;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * Moves provenance rows into the analytical database in the background, without ever blocking the code that
 * produces them on that database, and without losing or duplicating a row.
 *
 * <p>Life cycle: {@link #start}, {@link #register} each table, {@link #offer} rows, {@link #close()}. Rows wait in
 * memory; once more than {@link SpoolerConfig#maxMemoryRows()} wait, further rows go to spill files in
 * {@link SpoolerConfig#spillDirectory()} until memory has room again. A spill file,
 * {@code segment-<20-digit id>.spill}, is append-only and holds about {@code maxBatchRows} rows in units, each the
 * rows of one append with checksums, and the definitions of the tables it holds rows of (the format is described in
 * the package-private {@code SpillFile}). One background thread wakes every {@link SpoolerConfig#flushInterval()} (earlier when a full batch waits)
 * and loads waiting rows in the order they were offered, in batches of at most
 * {@link SpoolerConfig#maxBatchRows()} rows of one table, each batch one transaction of
 * {@link ProvenanceSink#load}. Within a table rows are loaded in offer order, spilled rows before the newer rows
 * that were kept in memory after them; across tables order is not kept.
 *
 * <p>When a load fails the rows stay where they are, the sink is closed, and the thread waits
 * {@link SpoolerConfig#initialBackoff()}, doubling after each further consecutive failure up to
 * {@link SpoolerConfig#maxBackoff()}, then opens a new sink through the factory, ensures the tables again and retries
 * the same batch. A retried batch may have committed before the failure was seen, and a spill file found at start
 * may have been loaded by the spooler that wrote it: their rows are {@linkplain ProvenanceSink#load loaded}, which
 * skips rows whose key is present, so they are not duplicated; rows on their first attempt are
 * {@linkplain ProvenanceSink#append appended}. A spill file is deleted only after all its rows are loaded.
 *
 * <p>A row that the database rejects every time (for example a string PostgreSQL cannot store) blocks the rows
 * behind it: the spooler keeps retrying, never dropping it, and {@link SpoolerStats#lastError()} says why.
 *
 * <p>A full disk: the spooler keeps {@link SpoolerConfig#diskReserveBytes()} usable on the volume of its spill
 * directory and on that of the sink's file, if the sink is one (DuckDB), as a {@link DiskSpaceGuard} measures them.
 * While the spill directory's volume is below it, or spill files cannot be written at all, no spill file is written:
 * {@link #offerDurably} fails (capture refuses the execution, saying why), and rows {@link #offer} finds no room for
 * in memory are <em>dropped</em> and counted in {@link SpoolerStats#rowsDropped()} (capture pauses, with a warning
 * when it starts, every 10 s while it lasts, and when it ends), so memory never holds more than
 * {@link SpoolerConfig#maxMemoryRows()} rows. While the sink's volume is below it, loading pauses (rows wait where
 * they are, the pause is in {@link SpoolerStats#lastError()}) and is tried again after each backoff. {@link #close()}
 * writes the rows still in memory to spill files even below the reserve, their last chance to be kept; if the disk
 * refuses them they are lost, and logged as lost.
 *
 * <p>Spill files survive {@link #close()} and process restarts: a spooler started on the same directory loads the
 * files it finds there first, whether or not anybody registers their tables again. A damaged unit is skipped with a
 * warning and counted in {@link SpoolerStats#rowsDamaged()}; the units after it are loaded. They are written to the operating system as each {@code offer} returns and
 * forced to the storage device when a file is complete, so a crash of the process loses none of them, but a crash of
 * the machine may lose the file being written. Rows waiting in memory are lost by a process crash.
 *
 * <p>Thread-safe: any thread may offer, flush or read stats.
 */
public final class ProvenanceSpooler implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(ProvenanceSpooler.class.getName());
  private static final String LOCK_FILE = "spool.lock";
  /** How long close() waits for the thread past closeTimeout, for a load that started before the deadline. */
  private static final Duration CLOSE_GRACE = Duration.ofSeconds(2);

  private final SpoolerConfig config;
  private final Supplier<? extends BatchSink> sinkFactory;
  private final Map<String, ProvenanceTable> tables = new ConcurrentHashMap<>();
  private final FileChannel lockChannel;
  private final FileLock directoryLock;
  private final Thread loader;

  private final ReentrantLock lock = new ReentrantLock();
  /** Signalled to wake the loader: work waits, a flush asks, or close. */
  private final Condition wake = lock.newCondition();
  /** Signalled when rows are loaded or the spooler closes. */
  private final Condition progress = lock.newCondition();

  // Guarded by lock. The queue holds every waiting row in offer order; only the loader removes from its head.
  private final ArrayDeque<Segment> queue = new ArrayDeque<>();
  private long nextSegmentId;
  private long rowsOffered;
  private long rowsRecovered;
  private long rowsLoaded;
  private long rowsSpilled;
  private long rowsInMemory;
  private long rowsOnDisk;
  /** Bytes of the spill files in the queue (the sum of their {@link DiskSegment#bytes}). */
  private long bytesOnDisk;
  /** Whether the last attempt to open the sink and load into it succeeded; null before the first. */
  private Boolean sinkReachable;
  private long failedLoadAttempts;
  /** Rows loaded that the latest {@link #flush} waits for; the loader does not stop short of it. */
  private long flushTarget;
  /** Load transactions committed; written by the loader thread only. */
  private final java.util.concurrent.atomic.AtomicLong batchesLoaded = new java.util.concurrent.atomic.AtomicLong();
  private long rowsDamaged;
  private long rowsSetAside;
  private String lastError;
  private long rowsDropped;
  /** Rows dropped since capture last paused; the pause ends when rows are kept again. */
  private long droppedInPause;
  private long droppedSinceReport;
  private long lastDropReportNanos;
  /** Set once a durable append could not be undone: every later durable offer fails (capture stops, visibly). */
  private String durableFailure;
  private boolean spillFailing;
  private boolean capturePaused;
  /**
   * Set when a load fails, the loader stops for a table not registered, or an offer's wait for room runs out;
   * cleared when a load completes. Offers wait for room in memory only while it is clear.
   */
  private boolean loaderStalled;
  private boolean wakeRequested;
  private boolean closing;
  private boolean closed;
  /** Set by close(): a loader still running must not change the queue any more. */
  private boolean abandoned;
  private long closeDeadlineNanos;
  /** Mirrors closing for the loader's lock-free check between batches. */
  private volatile boolean stopping;

  // Used by the loader thread only.
  private BatchSink sink;
  private final Set<String> ensured = new HashSet<>();
  private int consecutiveFailures;
  private long stallWarnedSegment = -1;
  /** Why loading is paused (the sink's volume is short), or null; loader thread only. */
  private String loadPause;

  private final SpillFile.Channels channels;
  private final DiskSpaceGuard disk;

  private ProvenanceSpooler(SpoolerConfig config, Supplier<? extends BatchSink> sinkFactory, FileChannel lockChannel,
                            FileLock directoryLock, SpillFile.Channels channels, DiskSpaceGuard disk) {
    this.config = config;
    this.channels = channels;
    this.disk = disk;
    this.sinkFactory = sinkFactory;
    this.lockChannel = lockChannel;
    this.directoryLock = directoryLock;
    this.loader = new Thread(this::runLoader, "apiary-provenance-spooler");
    this.loader.setDaemon(true);
  }

  /**
   * Starts a spooler: takes the spill directory (creating it), finds spill files an earlier spooler left there (they
   * are loaded before anything offered to this one), and starts the loading thread. Nothing connects to the
   * database until there is something to load.
   *
   * @param sinkFactory opens a sink each time it is called; called again after every failure, so it reconnects.
   *     It may throw (for example {@link ProvenanceSink#opener}'s {@code DatabaseException}): that counts as a failed
   *     attempt and is retried after the backoff.
   * @throws IllegalStateException if another spooler uses the spill directory
   * @throws UncheckedIOException if the spill directory or a spill file in it cannot be read or written
   */
  public static ProvenanceSpooler start(SpoolerConfig config, Supplier<? extends BatchSink> sinkFactory) {
    return start(config, sinkFactory, SpillFile.Channels.FILES, null);
  }

  /**
   * As {@link #start(SpoolerConfig, Supplier)}, with the volumes measured by {@code disk}, a guard shared with the
   * process's other writers (its reserve is used, not {@link SpoolerConfig#diskReserveBytes()}).
   */
  public static ProvenanceSpooler start(SpoolerConfig config, Supplier<? extends BatchSink> sinkFactory,
                                        DiskSpaceGuard disk) {
    return start(config, sinkFactory, SpillFile.Channels.FILES, Objects.requireNonNull(disk, "disk"));
  }

  /** Starts a spooler whose spill files are written through {@code channels} (tests inject failures). */
  static ProvenanceSpooler start(SpoolerConfig config, Supplier<? extends BatchSink> sinkFactory,
                                 SpillFile.Channels channels) {
    return start(config, sinkFactory, channels, null);
  }

  /**
   * Starts a spooler whose spill files are written through {@code channels} and whose volumes {@code disk} measures
   * ({@code null}: one reserving {@link SpoolerConfig#diskReserveBytes()}); tests inject both.
   */
  static ProvenanceSpooler start(SpoolerConfig config, Supplier<? extends BatchSink> sinkFactory,
                                 SpillFile.Channels channels, DiskSpaceGuard disk) {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(sinkFactory, "sinkFactory");
    Path directory = config.spillDirectory();
    FileChannel channel = null;
    try {
      Files.createDirectories(directory);
      channel = FileChannel.open(directory.resolve(LOCK_FILE), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      FileLock directoryLock;
      try {
        directoryLock = channel.tryLock();
      } catch (OverlappingFileLockException e) {
        directoryLock = null; // held by another spooler of this JVM
      }
      if (directoryLock == null) {
        throw new IllegalStateException("spill directory " + directory + " is in use by another provenance "
            + "spooler; give each spooler its own");
      }
      ProvenanceSpooler spooler = new ProvenanceSpooler(config, sinkFactory, channel, directoryLock, channels,
          disk != null ? disk : DiskSpaceGuard.reserving(config.diskReserveBytes()));
      spooler.recover();
      spooler.loader.start();
      return spooler;
    } catch (IOException e) {
      closeQuietlyAfter(channel, e);
      throw new UncheckedIOException("cannot use spill directory " + directory + ": " + e.getMessage(), e);
    } catch (RuntimeException e) {
      closeQuietlyAfter(channel, e);
      throw e;
    }
  }

  /**
   * Registers a table: rows of it may be offered from now on. Before the first load into it, and again after each
   * reconnect, the table is {@linkplain ProvenanceSink#ensureTable ensured} in the database. Registering the same
   * definition again does nothing.
   *
   * @throws IllegalArgumentException if a table of that name is registered with another definition, or the table
   *     cannot be loaded idempotently (see {@link ProvenanceSink#ensureTable})
   * @throws IllegalStateException after {@link #close()}
   */
  public void register(ProvenanceTable table) {
    ProvenanceSink.checkTable(table);
    lock.lock();
    try {
      if (closing) {
        throw new IllegalStateException("register(" + table.name() + ") after close()");
      }
      ProvenanceTable previous = tables.putIfAbsent(table.name(), table);
      if (previous != null && !previous.equals(table)) {
        throw new IllegalArgumentException("table " + table.name() + " is already registered with another "
            + "definition: " + previous);
      }
      wakeRequested = true; // spill files may have waited for this table
      wake.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Hands rows over for loading; drops a row only when it can be kept neither in memory nor on disk (see below). Rows
   * go to memory while fewer than {@link SpoolerConfig#maxMemoryRows()} wait there. An offer that finds memory full
   * waits for room, at most {@link SpoolerConfig#offerWait()}, while the loader keeps loading (a sink slower than the
   * offers paces the offering threads); rows that still find none go to spill files, and so do rows offered while
   * loads fail, while spill files wait, or after a wait has run out until a load completes again. If no spill file
   * can be written (the disk refuses it, or its volume is below {@link SpoolerConfig#diskReserveBytes()}) those rows
   * are dropped and counted in {@link SpoolerStats#rowsDropped()}: capture pauses, loudly, rather than let memory
   * grow without bound.
   *
   * @throws IllegalArgumentException if a row's table is not registered or a row does not fit its table; then
   *     none of the rows is taken
   * @throws IllegalStateException after {@link #close()}
   */
  public void offer(List<ProvenanceRow> rows) {
    checkRows(rows);
    if (rows.isEmpty()) {
      return;
    }
    lock.lock();
    try {
      if (closing) {
        throw new IllegalStateException("offer() after close(): the provenance spooler no longer takes rows");
      }
      int next = 0;
      long waitUntil = 0;
      boolean waiting = false;
      while (next < rows.size()) {
        if (rowsInMemory >= config.maxMemoryRows() && waitsForRoom()) {
          if (!waiting) {
            waiting = true;
            waitUntil = System.nanoTime() + config.offerWait().toNanos();
            wakeRequested = true;
            wake.signalAll();
          }
          long left = waitUntil - System.nanoTime();
          if (left > 0) {
            try {
              progress.awaitNanos(left);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt(); // waitsForRoom is false for this thread now: the rest spill
            }
            if (closed) { // the directory is no longer this spooler's to write
              throw new IllegalStateException("offer() waited past close(): the provenance spooler no longer "
                  + "takes rows");
            }
            continue; // closing also stops the wait (waitsForRoom): the rest spill, for the next spooler to load
          }
          loaderStalled = true; // later offers spill at once until a load completes
        }
        if (rowsInMemory < config.maxMemoryRows()) {
          int count = (int) Math.min(rows.size() - next, config.maxMemoryRows() - rowsInMemory);
          keepInMemory(rows.subList(next, next + count));
          next += count;
        } else {
          next += spill(rows, next);
        }
      }
      rowsOffered += rows.size();
      if (rowsInMemory >= config.maxBatchRows() || rowsOnDisk > 0) {
        wakeRequested = true;
        wake.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }

  /** Whether an offer that finds memory full should wait for the loader to free room (called with lock held). */
  private boolean waitsForRoom() {
    return !loaderStalled && rowsOnDisk == 0 && config.maxMemoryRows() > 0 && !config.offerWait().isZero()
        && !closing && !Thread.currentThread().isInterrupted();
  }

  /** Rejects rows of unregistered tables or rows that do not fit their table, before any is taken. */
  private void checkRows(List<ProvenanceRow> rows) {
    Objects.requireNonNull(rows, "rows");
    for (ProvenanceRow row : rows) {
      ProvenanceTable table = tables.get(row.table());
      if (table == null) {
        throw new IllegalArgumentException("table " + row.table() + " is not registered with the provenance "
            + "spooler; call register() first");
      }
      ProvenanceSink.checkRow(table, row);
    }
  }

  /**
   * Hands rows over durably: they are appended to a spill file and forced to the storage device before this
   * returns, so they survive a crash of this process (a new spooler on the same directory loads them). Slower than
   * {@link #offer} by a disk flush per call.
   *
   * @throws IllegalArgumentException if a row's table is not registered or a row does not fit its table
   * @throws java.io.UncheckedIOException if the rows could not be made durable; then the caller must not treat
   *     them as captured
   * @throws IllegalStateException after {@link #close()}
   */
  public void offerDurably(List<ProvenanceRow> rows) {
    checkRows(rows);
    if (rows.isEmpty()) {
      return;
    }
    lock.lock();
    try {
      if (closing) {
        throw new IllegalStateException("offerDurably() after close(): the provenance spooler no longer takes rows");
      }
      if (durableFailure != null) {
        throw new java.io.UncheckedIOException(new java.io.IOException("durable provenance capture has stopped: "
            + durableFailure));
      }
      Optional<String> shortage = disk.shortage(config.spillDirectory(), "provenance spill files");
      if (shortage.isPresent()) {
        lastError = "durable provenance capture refuses executions: " + shortage.get();
        throw new java.io.UncheckedIOException(new java.io.IOException(shortage.get()));
      }
      // One unit, in one file: the rows of one execution are on disk whole or not at all.
      DiskSegment disk = openDiskTail();
      try {
        disk.writer.appendDurably(rows, tables);
      } catch (SpillFile.Tainted e) {
        durableFailure = e.getMessage();
        lastError = durableFailure;
        LOG.log(System.Logger.Level.ERROR, "durable provenance capture stops: " + durableFailure + "; every later "
            + "function execution that captures provenance fails until this server restarts", e);
        written(disk, e.offset);
        seal(disk);
        throw e;
      } catch (java.io.IOException e) {
        seal(disk); // the unit was taken out again; later units go to a new file
        throw e;
      }
      written(disk, disk.writer.size());
      if (disk.rows == 0) {
        disk.firstRowNanos = System.nanoTime();
      }
      int count = rows.size();
      disk.rows += count;
      rowsOnDisk += count;
      rowsSpilled += count;
      if (disk.rows >= config.maxBatchRows()) {
        seal(disk);
      }
      rowsOffered += count;
      wakeRequested = true;
      wake.signalAll();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException("cannot make provenance rows durable in " + config.spillDirectory()
          + ": " + e.getMessage(), e);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits until every row offered before this call (and every row recovered from spill files at start) is loaded,
   * except those dropped (see {@link #offer}).
   * Wakes the loading thread at once unless it is backing off after a failure.
   *
   * @return true if they are all loaded; false if the timeout passed first, the spooler closed, or the calling
   *     thread was interrupted (its interrupt status is then set again)
   */
  public boolean flush(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    lock.lock();
    try {
      // Rows are dropped only as they are offered, so none offered before this call is dropped after it.
      long target = rowsOffered + rowsRecovered - rowsDropped;
      flushTarget = Math.max(flushTarget, target);
      if (rowsLoaded < target) {
        wakeRequested = true;
        wake.signalAll();
      }
      while (rowsLoaded < target) {
        long left = deadline - System.nanoTime();
        if (closed || left <= 0) {
          return false;
        }
        progress.awaitNanos(left);
      }
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } finally {
      lock.unlock();
    }
  }

  /** The current counters. */
  public SpoolerStats stats() {
    lock.lock();
    try {
      return new SpoolerStats(rowsOffered, rowsRecovered, rowsLoaded, rowsSpilled, rowsInMemory, rowsOnDisk,
          rowsDamaged, rowsSetAside, failedLoadAttempts, batchesLoaded.get(), rowsDropped, lastError, bytesOnDisk,
          oldestWaiting(), sinkReachable);
    } finally {
      lock.unlock();
    }
  }

  /** How long the oldest row still waiting has waited: the head of the queue (called with lock held). */
  private Duration oldestWaiting() {
    for (Segment segment : queue) {
      long since;
      if (segment instanceof MemorySegment memory) {
        long[] oldest = memory.offers.peekFirst();
        if (oldest == null) {
          continue;
        }
        since = oldest[1];
      } else {
        DiskSegment disk = (DiskSegment) segment;
        if (disk.rows == 0) {
          continue;
        }
        since = disk.firstRowNanos;
      }
      return Duration.ofNanos(Math.max(0, System.nanoTime() - since));
    }
    return Duration.ZERO;
  }

  /** Records a spill file's new length: its unit's bytes count in {@link #bytesOnDisk} (called with lock held). */
  private void written(DiskSegment disk, long validBytes) {
    disk.validBytes = validBytes;
    bytesOnDisk += validBytes - disk.bytes;
    disk.bytes = validBytes;
  }

  /**
   * Stops the spooler. The loading thread makes one last pass, without retries, loading waiting rows in order
   * until none is left, a load fails, or {@link SpoolerConfig#closeTimeout()} has passed; whatever is still waiting
   * in memory is then written to spill files, where a spooler started later on the same directory finds it and loads
   * it first. Returns within the close timeout plus about two seconds, even if a load hangs (that thread is then
   * left to finish on its own; its outcome changes nothing, as the rows it carries are in spill files too). Later
   * calls do nothing.
   */
  @Override
  public void close() {
    lock.lock();
    try {
      if (closing) {
        return;
      }
      closeDeadlineNanos = System.nanoTime() + config.closeTimeout().toNanos();
      closing = true;
      stopping = true;
      wake.signalAll();
      progress.signalAll();
    } finally {
      lock.unlock();
    }
    try {
      loader.join(config.closeTimeout().plus(CLOSE_GRACE).toMillis() + 1);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (loader.isAlive()) {
      LOG.log(System.Logger.Level.WARNING, "provenance spooler thread did not stop within "
          + config.closeTimeout().plus(CLOSE_GRACE) + "; the rows it was loading stay in spill files");
    }
    lock.lock();
    try {
      abandoned = true;
      spillMemoryAtClose();
      closed = true;
      progress.signalAll();
    } finally {
      lock.unlock();
    }
    releaseDirectory();
  }

  // ---- offer side (called with lock held)

  private void keepInMemory(List<ProvenanceRow> rows) {
    MemorySegment memory = queue.peekLast() instanceof MemorySegment tail ? tail : null;
    if (memory == null) {
      memory = new MemorySegment(nextSegmentId++);
      queue.addLast(memory);
    }
    memory.rows.addAll(rows);
    memory.offers.addLast(new long[] {rows.size(), System.nanoTime()});
    rowsInMemory += rows.size();
    resumeCapture();
  }

  /** Writes rows from {@code from} on to the open spill file (starting a new one if needed); returns how many. */
  private int spill(List<ProvenanceRow> rows, int from) {
    DiskSegment disk = null;
    int count = Math.min(rows.size() - from, config.maxBatchRows());
    Optional<String> shortage = this.disk.shortage(config.spillDirectory(), "provenance spill files");
    if (shortage.isPresent()) {
      drop(count, shortage.get());
      return count;
    }
    try {
      disk = openDiskTail();
      count = Math.min(rows.size() - from, config.maxBatchRows() - disk.rows);
      disk.writer.append(rows.subList(from, from + count), tables);
      written(disk, disk.writer.size());
      if (disk.rows == 0) {
        disk.firstRowNanos = System.nanoTime();
      }
      disk.rows += count;
      rowsOnDisk += count;
      rowsSpilled += count;
      if (disk.rows >= config.maxBatchRows()) {
        seal(disk);
      }
      spillFailing = false;
      resumeCapture();
    } catch (IOException e) {
      if (disk != null) {
        seal(disk);
      }
      String message = "cannot write provenance spill file in " + config.spillDirectory() + " (" + e.getMessage()
          + ")";
      if (!spillFailing) {
        LOG.log(System.Logger.Level.WARNING, message, e);
      }
      spillFailing = true;
      drop(count, message);
    }
    return count;
  }

  /** How often a pause of capture is reported while it lasts. */
  private static final long DROP_REPORT_NANOS = TimeUnit.SECONDS.toNanos(10);

  /** Counts rows that can be neither kept in memory nor spilled; reports the pause (called with lock held). */
  private void drop(int count, String why) {
    rowsDropped += count;
    droppedInPause += count;
    droppedSinceReport += count;
    long now = System.nanoTime();
    if (!capturePaused) {
      capturePaused = true;
      lastDropReportNanos = now;
      droppedSinceReport = 0;
      LOG.log(System.Logger.Level.WARNING, "provenance capture paused: rows are dropped, not loaded, while "
          + config.maxMemoryRows() + " rows wait in memory (maxMemoryRows) and no spill file can be written: " + why
          + "; counted in rowsDropped, reported every 10 s while it lasts");
    } else if (now - lastDropReportNanos >= DROP_REPORT_NANOS) {
      LOG.log(System.Logger.Level.WARNING, "provenance capture still paused: " + droppedSinceReport + " rows dropped in "
          + "the last " + TimeUnit.NANOSECONDS.toSeconds(now - lastDropReportNanos) + " s (" + droppedInPause
          + " in this pause, " + rowsDropped + " since start): " + why);
      lastDropReportNanos = now;
      droppedSinceReport = 0;
    }
    lastError = "provenance capture paused: " + droppedInPause + " rows dropped (" + rowsDropped + " since start), as "
        + "memory holds maxMemoryRows (" + config.maxMemoryRows() + ") and no spill file can be written: " + why;
  }

  /** Ends a pause of capture once rows are kept again (called with lock held). */
  private void resumeCapture() {
    if (capturePaused) {
      capturePaused = false;
      LOG.log(System.Logger.Level.INFO, "provenance capture resumed after dropping " + droppedInPause + " rows ("
          + rowsDropped + " since start)");
      droppedInPause = 0;
    }
  }

  private DiskSegment openDiskTail() throws IOException {
    if (queue.peekLast() instanceof DiskSegment tail && tail.writer != null) {
      if (tail.rows < config.maxBatchRows()) {
        return tail;
      }
      seal(tail);
    }
    long id = nextSegmentId++;
    DiskSegment disk = new DiskSegment(id, SpillFile.path(config.spillDirectory(), id), 0);
    try {
      disk.writer = SpillFile.Writer.create(disk.file, channels);
    } catch (IOException e) {
      if (!(e instanceof java.nio.file.FileAlreadyExistsException) && Files.isRegularFile(disk.file)) {
        try {
          Files.delete(disk.file); // created, but its header did not fit (a full disk): nothing of it is usable
        } catch (IOException deleting) {
          e.addSuppressed(deleting);
        }
      }
      throw e;
    }
    written(disk, disk.writer.size());
    queue.addLast(disk);
    return disk;
  }

  private void seal(DiskSegment disk) {
    if (disk.writer == null) {
      return;
    }
    try {
      disk.writer.close();
    } catch (IOException e) {
      LOG.log(System.Logger.Level.WARNING, "cannot force spill file " + disk.file + " to disk (" + e.getMessage()
          + "); its rows are still readable by this process, but may not survive a machine crash", e);
    }
    disk.writer = null;
  }

  // ---- start and close

  private void recover() throws IOException {
    TreeMap<Long, Path> files = new TreeMap<>();
    try (Stream<Path> entries = Files.list(config.spillDirectory())) {
      entries.forEach(file -> {
        OptionalLong id = SpillFile.idOf(file);
        if (id.isPresent()) {
          files.put(id.getAsLong(), file);
        }
      });
    }
    if (!files.isEmpty()) {
      rowsSetAside = UnconfirmedExecutions.setAside(files, config.recovery(), tables);
      files.values().removeIf(file -> !Files.exists(file)); // every row of it was set aside
    }
    long rows = 0;
    int segments = 0;
    for (Map.Entry<Long, Path> file : files.entrySet()) {
      SpillFile.Census census = SpillFile.census(file.getValue()); // the loader decodes the rows when it loads them
      int count = census.rows();
      nextSegmentId = Math.max(nextSegmentId, file.getKey() + 1);
      if (census.damagedUnits() > 0) {
        lastError = "spill file " + file.getValue() + " had " + census.damagedUnits() + " damaged unit(s) ("
            + census.damagedRows() + " rows or more); they were skipped, its " + count + " intact rows are loaded";
        LOG.log(System.Logger.Level.WARNING, lastError);
      }
      if (count == 0) {
        Files.delete(file.getValue());
        continue;
      }
      DiskSegment recovered = new DiskSegment(file.getKey(), file.getValue(), count);
      recovered.mayBeInSink = true;
      // Its rows were offered before the file was last written: at least that long ago.
      long ageMillis = Math.max(0, System.currentTimeMillis() - Files.getLastModifiedTime(file.getValue()).toMillis());
      recovered.firstRowNanos = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(ageMillis);
      written(recovered, Files.size(file.getValue()));
      queue.addLast(recovered);
      rows += count;
      segments++;
    }
    rowsRecovered = rows;
    rowsOnDisk = rows;
    if (rows > 0) {
      LOG.log(System.Logger.Level.INFO, "found " + rows + " provenance rows in " + segments + " spill files in "
          + config.spillDirectory() + "; loading them first");
    }
  }

  /** Writes every row still in memory to spill files named by its segment, so queue order survives. */
  private void spillMemoryAtClose() {
    List<Segment> segments = new ArrayList<>(queue);
    queue.clear();
    for (Segment segment : segments) {
      if (segment instanceof DiskSegment disk) {
        seal(disk);
        queue.addLast(disk);
      } else if (segment instanceof MemorySegment memory && !memory.rows.isEmpty()) {
        int count = memory.rows.size();
        DiskSegment disk = new DiskSegment(memory.id, SpillFile.path(config.spillDirectory(), memory.id), count);
        long[] oldest = memory.offers.peekFirst();
        disk.firstRowNanos = oldest == null ? System.nanoTime() : oldest[1];
        List<ProvenanceRow> waiting = new ArrayList<>(memory.rows);
        try (SpillFile.Writer writer = SpillFile.Writer.create(disk.file, channels)) {
          for (int from = 0; from < count; from += config.maxBatchRows()) {
            writer.append(waiting.subList(from, Math.min(count, from + config.maxBatchRows())), tables);
          }
          written(disk, writer.size());
          rowsInMemory -= count;
          rowsOnDisk += count;
          rowsSpilled += count;
          queue.addLast(disk);
        } catch (IOException e) {
          lastError = "lost " + count + " provenance rows: cannot write them to " + disk.file + " at close: "
              + e.getMessage();
          LOG.log(System.Logger.Level.ERROR, lastError, e);
          queue.addLast(memory);
        }
      }
    }
  }

  private void releaseDirectory() {
    try (lockChannel) {
      directoryLock.release();
    } catch (IOException e) {
      LOG.log(System.Logger.Level.WARNING, "cannot release the lock on spill directory " + config.spillDirectory()
          + "; it is released when this process exits", e);
    }
  }

  private static void closeQuietlyAfter(FileChannel channel, Exception failure) {
    if (channel != null) {
      try {
        channel.close();
      } catch (IOException e) {
        failure.addSuppressed(e);
      }
    }
  }

  // ---- loader thread

  private void runLoader() {
    try {
      while (awaitWork()) {
        if (drain(false)) {
          consecutiveFailures = 0;
        }
      }
      drain(true);
    } catch (RuntimeException | Error e) {
      // Logged and recorded here rather than rethrown to the default handler, which would only print it.
      LOG.log(System.Logger.Level.ERROR, "provenance spooler thread stopped by an unexpected failure; rows not yet "
          + "loaded are spilled at close()", e);
      recordError("spooler thread stopped: " + e);
    } finally {
      closeSink();
    }
  }

  /** Waits for the flush interval, a wake-up, or the backoff after a failure; false once the spooler closes. */
  private boolean awaitWork() {
    lock.lock();
    try {
      boolean backingOff = consecutiveFailures > 0;
      long deadline = System.nanoTime() + (backingOff ? backoffNanos() : config.flushInterval().toNanos());
      while (!closing) {
        long left = deadline - System.nanoTime();
        if (left <= 0 || (wakeRequested && !backingOff)) {
          break;
        }
        wake.awaitNanos(left);
      }
      wakeRequested = false;
      return !closing;
    } catch (InterruptedException e) {
      LOG.log(System.Logger.Level.WARNING, "provenance spooler thread interrupted; making its final pass now");
      return false;
    } finally {
      lock.unlock();
    }
  }

  private long backoffNanos() {
    long max = config.maxBackoff().toNanos();
    long backoff = config.initialBackoff().toNanos();
    for (int i = 1; i < consecutiveFailures && backoff < max; i++) {
      backoff *= 2;
    }
    return Math.min(backoff, max);
  }

  /**
   * Loads waiting rows from the head of the queue until none is left (or only rows that must wait for a table to be
   * registered). Returns false if an attempt failed (or, on the final pass, the close deadline passed).
   */
  private boolean drain(boolean finalPass) {
    boolean loadedThisPass = false;
    while (true) {
      if (!finalPass && stopping) {
        return true; // the final pass takes over, bounded by the close deadline
      }
      // After a first load, rows that arrived during it wait for the next interval unless a full batch (or a
      // flush) waits: loading them at once ran the loader back to back, a load per table every few milliseconds.
      Batch batch = nextBatch(loadedThisPass && !finalPass);
      loadedThisPass = true;
      if (batch == null) {
        return true;
      }
      if (finalPass && System.nanoTime() - closeDeadlineNanos > 0) {
        return false;
      }
      SpillFile.Contents contents;
      try {
        contents = batch.contents();
      } catch (IOException e) {
        recordFailure("cannot read spill file " + ((DiskSegment) batch.segment).file + ": " + e.getMessage(), e,
            false);
        return false;
      }
      Map<String, List<ProvenanceRow>> byTable = new LinkedHashMap<>();
      for (ProvenanceRow row : contents.rows()) {
        byTable.computeIfAbsent(row.table(), name -> new ArrayList<>()).add(row);
      }
      // A spill file's own definitions come first: its rows were written under them, and nobody need register them
      // again after a restart. Only files of the first format carry none.
      List<String> unregistered = byTable.keySet().stream()
          .filter(name -> !contents.tables().containsKey(name) && !tables.containsKey(name)).toList();
      if (!unregistered.isEmpty()) {
        reportStall(batch.segment, unregistered);
        return true;
      }
      try {
        if (sink == null) {
          sink = Objects.requireNonNull(sinkFactory.get(), "the provenance sink factory returned null");
          ensured.clear();
        }
        if (!sinkHasRoom()) {
          return false;
        }
        for (Map.Entry<String, List<ProvenanceRow>> group : byTable.entrySet()) {
          ProvenanceTable table = contents.tables().getOrDefault(group.getKey(), tables.get(group.getKey()));
          if (!ensured.contains(table.name())) {
            sink.ensureTable(table);
            ensured.add(table.name());
          }
          List<ProvenanceRow> tableRows = group.getValue();
          for (int from = 0; from < tableRows.size(); from += config.maxBatchRows()) {
            // Checked when offered (a spill file's rows before they were written, under its own definitions).
            sink.loadBatch(table, tableRows.subList(from, Math.min(tableRows.size(), from + config.maxBatchRows())),
                !batch.segment.mayBeInSink);
            batchesLoaded.incrementAndGet();
          }
        }
      } catch (SQLException | RuntimeException | AssertionError e) {
        // AssertionError: pgjdbc 42.7 throws one from executeBatch when the connection breaks mid-batch
        batch.segment.mayBeInSink = true; // other tables' rows of the batch, or these, may have committed
        recordFailure(describe(e), e, true);
        closeSink();
        return false;
      }
      if (!complete(batch)) {
        return false;
      }
    }
  }

  /** The next rows to load, from the head of the queue; null if there are none (or the spooler was abandoned). */
  private Batch nextBatch(boolean onlyFull) {
    lock.lock();
    try {
      while (!abandoned) {
        Segment head = queue.peekFirst();
        if (head == null) {
          return null;
        }
        if (head instanceof MemorySegment memory) {
          if (memory.rows.isEmpty()) {
            if (queue.size() == 1) {
              return null; // the tail that offers append to
            }
            queue.pollFirst();
            continue;
          }
          if (onlyFull && queue.size() == 1 && memory.rows.size() < config.maxBatchRows()
              && rowsLoaded >= flushTarget) {
            return null;
          }
          int count = Math.min(memory.rows.size(), config.maxBatchRows());
          List<ProvenanceRow> rows = new ArrayList<>(count);
          Iterator<ProvenanceRow> it = memory.rows.iterator();
          for (int i = 0; i < count; i++) {
            rows.add(it.next());
          }
          return new Batch(memory, rows, count);
        }
        DiskSegment disk = (DiskSegment) head;
        seal(disk); // new offers start another file; this one is complete
        return new Batch(disk, null, disk.rows);
      }
      return null;
    } finally {
      lock.unlock();
    }
  }

  /** Removes a loaded batch from the queue; false if close() has taken over the queue. */
  private boolean complete(Batch batch) {
    lock.lock();
    try {
      if (abandoned) {
        return false;
      }
      int loaded = batch.count;
      if (batch.segment instanceof MemorySegment memory) {
        for (int i = 0; i < batch.count; i++) {
          memory.rows.pollFirst();
        }
        for (long left = batch.count; left > 0; ) {
          long[] offer = memory.offers.peekFirst();
          long taken = Math.min(left, offer[0]);
          offer[0] -= taken;
          left -= taken;
          if (offer[0] == 0) {
            memory.offers.pollFirst();
          }
        }
        rowsInMemory -= batch.count;
        if (memory.rows.isEmpty() && queue.size() > 1) {
          queue.pollFirst();
        }
      } else {
        DiskSegment disk = (DiskSegment) queue.pollFirst();
        rowsOnDisk -= disk.rows;
        bytesOnDisk -= disk.bytes;
        int intact = disk.cached == null ? disk.rows : disk.cached.rows().size();
        loaded = Math.min(batch.count, intact);
        if (intact < disk.rows) {
          rowsDamaged += disk.rows - intact;
          lastError = "spill file " + disk.file + " lost " + (disk.rows - intact) + " rows to damage on disk; its "
              + intact + " intact rows are loaded";
          LOG.log(System.Logger.Level.WARNING, lastError);
        }
        try {
          Files.deleteIfExists(disk.file);
        } catch (IOException e) {
          LOG.log(System.Logger.Level.WARNING, "cannot delete loaded spill file " + disk.file + " (" + e.getMessage()
              + "); a later spooler will load it again, which is harmless as loads skip rows already present", e);
        }
      }
      rowsLoaded += loaded;
      sinkReachable = true;
      loaderStalled = false;
      progress.signalAll();
      return true;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Whether the volume of the sink's file, for a sink that is one, has room for loading; if not, pauses loading:
   * records why (the offers stop waiting for the loader) and counts a consecutive failure, so it is checked again
   * after the backoff. Loader thread only.
   */
  private boolean sinkHasRoom() {
    Optional<Path> file = sink.localFile();
    Optional<String> shortage = file.flatMap(f -> disk.shortage(f, "the provenance database " + sink.url()));
    if (shortage.isEmpty()) {
      if (loadPause != null) {
        loadPause = null;
        LOG.log(System.Logger.Level.INFO, "provenance loading resumed: the volume of " + file.orElseThrow()
            + " has room again");
      }
      return true;
    }
    consecutiveFailures++;
    String message = "provenance loading paused: " + shortage.get();
    if (loadPause == null) {
      LOG.log(System.Logger.Level.WARNING, message + "; rows wait (in memory up to maxMemoryRows, then in spill files "
          + "if their volume has room) and loading is tried again after each backoff");
    }
    loadPause = message;
    recordError(message);
    return false;
  }

  private void reportStall(Segment segment, List<String> unregistered) {
    String message = "waiting for register() of table(s) " + unregistered + ": spill file "
        + ((DiskSegment) segment).file + " holds rows of them";
    recordError(message);
    if (stallWarnedSegment != segment.id) {
      stallWarnedSegment = segment.id;
      LOG.log(System.Logger.Level.WARNING, message + "; loading of all later rows waits until they are registered");
    }
  }

  /** Records a failed attempt; {@code sinkFailed}: opening the sink or loading into it failed. */
  private void recordFailure(String message, Throwable e, boolean sinkFailed) {
    consecutiveFailures++;
    lock.lock();
    try {
      failedLoadAttempts++;
      if (sinkFailed) {
        sinkReachable = false;
      }
      lastError = message;
      loaderStalled = true;
      progress.signalAll(); // offers waiting for room spill now
    } finally {
      lock.unlock();
    }
    String text = "provenance load failed (" + consecutiveFailures + " in a row), retrying in "
        + TimeUnit.NANOSECONDS.toMillis(backoffNanos()) + " ms: " + message;
    if (consecutiveFailures == 1) {
      LOG.log(System.Logger.Level.WARNING, text, e);
    } else {
      LOG.log(System.Logger.Level.WARNING, text);
    }
  }

  /** A failure's message, with its cause's when the failure itself says little (as pgjdbc's AssertionError). */
  private static String describe(Throwable e) {
    String message = e.getMessage() == null ? e.toString() : e.getMessage();
    Throwable cause = e.getCause();
    if (cause != null && cause.getMessage() != null && !message.contains(cause.getMessage())) {
      message += " (cause: " + cause.getMessage() + ")";
    }
    return message;
  }

  private void recordError(String message) {
    lock.lock();
    try {
      lastError = message;
      loaderStalled = true;
      progress.signalAll();
    } finally {
      lock.unlock();
    }
  }

  private void closeSink() {
    if (sink == null) {
      return;
    }
    try {
      sink.close();
    } catch (SQLException e) {
      LOG.log(System.Logger.Level.DEBUG, "closing the provenance sink " + sink.url() + " failed", e);
    }
    sink = null;
    ensured.clear();
  }

  // ---- queue segments

  /** A run of consecutive waiting rows, in memory or in one spill file; ids increase along the queue. */
  private abstract static class Segment {
    final long id;
    /**
     * Whether the sink may hold some of its rows already: a spill file found at start (its spooler may have loaded it
     * and died before deleting it), or rows of which a load attempt failed (it may have committed part, or all, of
     * them). Such rows are {@linkplain ProvenanceSink#load loaded}, skipping present keys; the others are
     * {@linkplain ProvenanceSink#append appended}. Read and set by the loader thread only (and before it starts).
     */
    boolean mayBeInSink;

    Segment(long id) {
      this.id = id;
    }
  }

  private static final class MemorySegment extends Segment {
    final ArrayDeque<ProvenanceRow> rows = new ArrayDeque<>();
    /** Per offer of its rows still waiting, oldest first: {rows left, System.nanoTime() when offered}. */
    final ArrayDeque<long[]> offers = new ArrayDeque<>();

    MemorySegment(long id) {
      super(id);
    }
  }

  private static final class DiskSegment extends Segment {
    final Path file;
    /** Rows in the file; changed only under the spooler's lock. */
    int rows;
    /** Open while offers may still append; null once sealed. */
    SpillFile.Writer writer;
    /** Where the last unit appended whole by this process ends; the loader reads no further. */
    long validBytes = Long.MAX_VALUE;
    /** The file's bytes counted in {@code bytesOnDisk}. */
    long bytes;
    /** System.nanoTime() when its first row was offered (estimated for a file found at start). */
    long firstRowNanos;
    /** The file's content once read by the loader, kept while a load of them is retried. */
    SpillFile.Contents cached;

    DiskSegment(long id, Path file, int rows) {
      super(id);
      this.file = file;
      this.rows = rows;
    }
  }

  /** Rows taken from the head segment for one attempt. */
  private static final class Batch {
    final Segment segment;
    private final List<ProvenanceRow> memoryRows;
    final int count;

    Batch(Segment segment, List<ProvenanceRow> memoryRows, int count) {
      this.segment = segment;
      this.memoryRows = memoryRows;
      this.count = count;
    }

    SpillFile.Contents contents() throws IOException {
      if (memoryRows != null) {
        return new SpillFile.Contents(Map.of(), memoryRows, 0, 0);
      }
      DiskSegment disk = (DiskSegment) segment;
      if (disk.cached == null) {
        disk.cached = SpillFile.read(disk.file, disk.validBytes);
      }
      return disk.cached;
    }
  }
}
