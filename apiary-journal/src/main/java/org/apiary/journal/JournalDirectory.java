package org.apiary.journal;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A journal's directory, held by one server at a time: opening it takes an exclusive lock on {@code journal.lock}
 * (released when the process ends, however it ends), so a second server pointed at the same directory is refused.
 * The directory is owner-only (0700) and so are its files.
 */
public final class JournalDirectory implements AutoCloseable {
  static final String LOCK_FILE = "journal.lock";
  private static final Pattern SEGMENT = Pattern.compile("journal-([0-9a-f]{16})-([0-9]{8})\\.log");

  private final Path path;
  private final FileChannel lockChannel;
  private final FileLock lock;

  private JournalDirectory(Path path, FileChannel lockChannel, FileLock lock) {
    this.path = path;
    this.lockChannel = lockChannel;
    this.lock = lock;
  }

  /**
   * Opens (creating if need be) and locks {@code path}.
   *
   * @throws JournalException naming the directory if it cannot be created or written, or another server holds it
   */
  public static JournalDirectory open(Path path) {
    Path dir = path.toAbsolutePath();
    try {
      if (!Files.isDirectory(dir)) {
        Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      }
      Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
    } catch (IOException e) {
      throw new JournalException("cannot create the journal directory " + dir + ": " + describe(e), e);
    }
    if (!Files.isWritable(dir)) {
      throw new JournalException("the journal directory " + dir + " is not writable by this process; the server "
          + "cannot journal its writes there, so it does not start (fix its permissions or choose another directory)");
    }
    Path lockFile = dir.resolve(LOCK_FILE);
    FileChannel channel;
    try {
      channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.READ,
          StandardOpenOption.WRITE);
      Files.setPosixFilePermissions(lockFile, PosixFilePermissions.fromString("rw-------"));
    } catch (IOException e) {
      throw new JournalException("cannot open " + lockFile + ": " + describe(e), e);
    }
    FileLock lock;
    try {
      lock = channel.tryLock();
    } catch (OverlappingFileLockException e) {
      lock = null;
    } catch (IOException e) {
      closeQuietly(channel);
      throw new JournalException("cannot lock " + lockFile + ": " + describe(e), e);
    }
    if (lock == null) {
      String holder = "";
      try {
        holder = " (process " + Files.readString(lockFile, StandardCharsets.US_ASCII).strip() + ")";
      } catch (IOException ignored) {
        // The holder's pid only decorates the message.
      }
      closeQuietly(channel);
      throw new JournalException("the journal directory " + dir + " is in use by another server" + holder + "; two "
          + "servers cannot share one journal: stop the other one, or give this one its own data directory");
    }
    try {
      channel.truncate(0);
      channel.write(java.nio.ByteBuffer.wrap((ProcessHandle.current().pid() + "\n")
          .getBytes(StandardCharsets.US_ASCII)), 0);
    } catch (IOException e) {
      // The pid is informational; the lock is what counts.
    }
    return new JournalDirectory(dir, channel, lock);
  }

  /** The directory. */
  public Path path() {
    return path;
  }

  /** A segment file's timeline and number. */
  record SegmentName(Path file, long timeline, long segment) {}

  /** The segment files, by timeline then number. */
  List<SegmentName> segments() {
    return list(path);
  }

  /** Whether {@code dir} holds journal segments (a server journaled there). */
  public static boolean holdsSegments(Path dir) {
    return !list(dir).isEmpty();
  }

  static List<SegmentName> list(Path dir) {
    List<SegmentName> found = new ArrayList<>();
    if (!Files.isDirectory(dir)) {
      return found;
    }
    try (Stream<Path> files = Files.list(dir)) {
      files.forEach(f -> {
        Matcher m = SEGMENT.matcher(f.getFileName().toString());
        if (m.matches()) {
          found.add(new SegmentName(f, Long.parseUnsignedLong(m.group(1), 16), Long.parseLong(m.group(2))));
        }
      });
    } catch (IOException e) {
      throw new JournalException("cannot list the journal directory " + dir + ": " + describe(e), e);
    }
    found.sort(java.util.Comparator.comparingLong(SegmentName::timeline).thenComparingLong(SegmentName::segment));
    return found;
  }

  /** Deletes every segment of a timeline other than {@code keep}: they are covered by a snapshot. */
  public void deleteTimelinesOtherThan(long keep) {
    for (SegmentName s : segments()) {
      if (s.timeline() != keep) {
        delete(s.file());
      }
    }
  }

  static void delete(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      throw new JournalException("cannot delete the journal segment " + file + ": " + describe(e), e);
    }
  }

  /** Releases the lock. */
  @Override
  public void close() {
    try {
      lock.release();
    } catch (IOException e) {
      // The channel's close below releases it too.
    } finally {
      closeQuietly(lockChannel);
    }
  }

  static String describe(IOException e) {
    if (e instanceof AccessDeniedException) {
      return "permission denied";
    }
    return e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
  }

  private static void closeQuietly(FileChannel c) {
    try {
      c.close();
    } catch (IOException ignored) {
      // Closing after a failure; the failure is what is reported.
    }
  }
}
