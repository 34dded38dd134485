package org.apiary.provenance;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Whether the volumes some files live on still have room: a volume is <em>short</em> once the space usable on it falls
 * below the reserve, and has room again only once that space is back above the reserve plus a quarter of it (so a
 * volume at the edge does not flap between the two). What is written must stop before a volume is full because not
 * every writer survives a full disk: VoltDB exits when it cannot write its export overflow, which holds every captured
 * write until provenance has loaded it.
 *
 * <p>The usable space of a volume is read (one {@code statfs}) at most once per {@link #CHECK_INTERVAL}; in between,
 * asking costs a clock read, so a database site may ask on every transaction. A path that does not exist yet is
 * measured on its nearest existing ancestor. A volume whose space cannot be read counts as having room, with a
 * warning: the guard must not stop a server whose file system it does not understand. Thread-safe.
 */
public final class DiskSpaceGuard {
  private static final System.Logger LOG = System.getLogger(DiskSpaceGuard.class.getName());

  /** The reserve a database server keeps on its volumes by default: 64 MiB. */
  public static final long DEFAULT_RESERVE_BYTES = 64L << 20;
  /** How often a volume's usable space is read at most. */
  public static final Duration CHECK_INTERVAL = Duration.ofMillis(100);

  /** Reads a volume's usable space; a test replaces it. */
  interface Space {
    /** The volume {@code path} is on (any object with equality per volume). */
    Object volume(Path path) throws IOException;

    /** Bytes usable on {@code volume} by this process. */
    long usable(Object volume) throws IOException;
  }

  private static final Space FILE_STORES = new Space() {
    @Override
    public Object volume(Path path) throws IOException {
      return Files.getFileStore(path);
    }

    @Override
    public long usable(Object volume) throws IOException {
      return ((FileStore) volume).getUsableSpace();
    }
  };

  private static final DiskSpaceGuard NONE = new DiskSpaceGuard(0, FILE_STORES, CHECK_INTERVAL);

  private final long reserveBytes;
  private final long resumeBytes;
  private final Space space;
  private final long intervalNanos;
  private final Map<Path, Resolved> volumesByPath = new ConcurrentHashMap<>();
  private final Map<Object, Volume> volumes = new ConcurrentHashMap<>();

  private DiskSpaceGuard(long reserveBytes, Space space, Duration interval) {
    if (reserveBytes < 0) {
      throw new IllegalArgumentException("the disk space reserve must not be negative, not " + reserveBytes);
    }
    this.reserveBytes = reserveBytes;
    this.resumeBytes = reserveBytes > Long.MAX_VALUE - reserveBytes / 4 ? Long.MAX_VALUE
        : reserveBytes + reserveBytes / 4;
    this.space = space;
    this.intervalNanos = interval.toNanos();
  }

  /**
   * A guard that keeps {@code reserveBytes} usable on every volume it is asked about.
   *
   * @param reserveBytes zero for a guard that never finds a volume short
   * @throws IllegalArgumentException if it is negative
   */
  public static DiskSpaceGuard reserving(long reserveBytes) {
    return reserveBytes == 0 ? NONE : new DiskSpaceGuard(reserveBytes, FILE_STORES, CHECK_INTERVAL);
  }

  /** A guard whose volumes' space is read through {@code space}, every {@code interval} at most (tests). */
  static DiskSpaceGuard reserving(long reserveBytes, Space space, Duration interval) {
    return new DiskSpaceGuard(reserveBytes, space, interval);
  }

  /** A guard that never finds a volume short. */
  public static DiskSpaceGuard none() {
    return NONE;
  }

  /** The bytes kept usable on each volume; zero if the guard is off. */
  public long reserveBytes() {
    return reserveBytes;
  }

  /**
   * Why nothing more may be written to {@code path}: its volume is short. The reason names the path, what it holds,
   * the space usable and the reserve, and says that writing resumes once space is freed there.
   *
   * @param what what {@code path} holds, for the reason ("VoltDB's export overflow")
   * @return the reason, or empty if the volume has room (or the guard is off)
   */
  public Optional<String> shortage(Path path, String what) {
    if (reserveBytes == 0) {
      return Optional.empty();
    }
    Volume volume = volumeOf(path);
    if (volume == null) {
      return Optional.empty();
    }
    long usable = volume.usable(space, intervalNanos, reserveBytes, resumeBytes);
    if (!volume.shortNow) {
      return Optional.empty();
    }
    return Optional.of("too little disk space: the volume of " + path + " (" + what + ") has " + mib(usable)
        + " usable, below the reserve of " + mib(reserveBytes) + " kept so that nothing on it fails for want of space; "
        + "writing there resumes once " + mib(resumeBytes) + " are usable");
  }

  /** How long the volume found for a path that did not exist yet (measured on an ancestor) is kept. */
  private static final long UNRESOLVED_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(5);

  /** Where a path's space is read: its volume, and whether the path existed (else an ancestor was measured). */
  private record Resolved(Volume volume, boolean exact, long at) {}

  private Volume volumeOf(Path path) {
    Path absolute = path.toAbsolutePath().normalize();
    Resolved known = volumesByPath.get(absolute);
    // Finding a path's volume reads the mount table: done once for a path that exists, and every few seconds for one
    // still to be created (it may yet be a mount point of its own).
    if (known != null && (known.exact() || System.nanoTime() - known.at() < UNRESOLVED_NANOS)) {
      return known.volume();
    }
    Path existing = absolute;
    while (existing != null && !Files.exists(existing)) {
      existing = existing.getParent();
    }
    Volume volume = null;
    if (existing != null) {
      try {
        volume = volumes.computeIfAbsent(space.volume(existing), Volume::new);
      } catch (IOException | RuntimeException e) {
        if (known == null) {
          LOG.log(System.Logger.Level.WARNING, "cannot tell which volume " + existing + " is on (" + e + "); its "
              + "free space is not watched");
        }
      }
    }
    volumesByPath.put(absolute, new Resolved(volume, volume != null && existing.equals(absolute), System.nanoTime()));
    return volume;
  }

  static String mib(long bytes) {
    if (bytes < (1L << 20)) {
      return bytes + " bytes";
    }
    return String.format(Locale.ROOT, "%.1f MiB", bytes / (double) (1L << 20));
  }

  /** One volume's last reading. */
  private static final class Volume {
    private final Object id;
    private volatile long checkedAt;
    private volatile long lastUsable = Long.MAX_VALUE;
    private volatile boolean shortNow;
    private volatile boolean checkedOnce;
    private boolean unreadableWarned;

    Volume(Object id) {
      this.id = Objects.requireNonNull(id);
    }

    /** The usable bytes, read again if the last reading is older than the interval; updates {@link #shortNow}. */
    long usable(Space space, long intervalNanos, long reserve, long resume) {
      long now = System.nanoTime();
      if (checkedOnce && now - checkedAt < intervalNanos) {
        return lastUsable;
      }
      synchronized (this) {
        if (checkedOnce && now - checkedAt < intervalNanos) {
          return lastUsable;
        }
        long usable;
        try {
          usable = space.usable(id);
          unreadableWarned = false;
        } catch (IOException | RuntimeException e) {
          if (!unreadableWarned) {
            unreadableWarned = true;
            LOG.log(System.Logger.Level.WARNING, "cannot read the usable space of " + id + " (" + e + "); it counts "
                + "as having room until it can be read");
          }
          usable = Long.MAX_VALUE;
        }
        boolean wasShort = shortNow;
        boolean nowShort = wasShort ? usable < resume : usable < reserve;
        lastUsable = usable;
        shortNow = nowShort;
        checkedAt = now;
        checkedOnce = true;
        if (nowShort != wasShort) {
          LOG.log(nowShort ? System.Logger.Level.WARNING : System.Logger.Level.INFO, "volume " + id + ": "
              + mib(usable) + " usable, " + (nowShort ? "below the reserve of " + mib(reserve) + "; what Apiary "
              + "writes there pauses" : "room again (at least " + mib(resume) + "); what Apiary writes there resumes"));
        }
        return usable;
      }
    }
  }
}
