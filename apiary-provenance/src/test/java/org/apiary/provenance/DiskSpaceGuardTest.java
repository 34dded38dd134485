package org.apiary.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The disk reserve: when a volume counts as short, when it has room again, and what the reason says. */
class DiskSpaceGuardTest {
  @TempDir
  Path dir;

  private final AtomicLong usable = new AtomicLong(Long.MAX_VALUE);
  private final AtomicInteger reads = new AtomicInteger();
  private volatile boolean unreadable;

  private DiskSpaceGuard guard(long reserve, Duration interval) {
    return DiskSpaceGuard.reserving(reserve, new DiskSpaceGuard.Space() {
      @Override
      public Object volume(Path path) {
        return "one";
      }

      @Override
      public long usable(Object volume) throws IOException {
        reads.incrementAndGet();
        if (unreadable) {
          throw new IOException("injected: statfs failed");
        }
        return usable.get();
      }
    }, interval);
  }

  @Test
  void shortBelowTheReserveAndRoomAgainOnlyPastTheReserveAndAQuarter() {
    DiskSpaceGuard guard = guard(4L << 20, Duration.ZERO);
    Path file = dir.resolve("sink.db");
    usable.set(5L << 20);
    assertEquals(Optional.empty(), guard.shortage(file, "the sink"));
    usable.set((4L << 20) - 1);
    String reason = guard.shortage(file, "the sink").orElseThrow();
    assertTrue(reason.contains("disk space") && reason.contains(file.toString()) && reason.contains("(the sink)")
        && reason.contains("4.0 MiB usable") && reason.contains("reserve of 4.0 MiB")
        && reason.contains("resumes once 5.0 MiB are usable"), reason);
    usable.set((5L << 20) - 1);
    assertTrue(guard.shortage(file, "the sink").isPresent(), "room again before the reserve and a quarter");
    usable.set(5L << 20);
    assertEquals(Optional.empty(), guard.shortage(file, "the sink"));
  }

  @Test
  void aVolumeIsReadAtMostOncePerIntervalAndAPathStillToBeCreatedOnItsAncestorsVolume() throws Exception {
    DiskSpaceGuard guard = guard(1000, Duration.ofHours(1));
    Path missing = dir.resolve("not").resolve("yet");
    usable.set(10);
    assertTrue(guard.shortage(missing, "spill files").isPresent());
    usable.set(1_000_000);
    for (int i = 0; i < 1000; i++) {
      assertTrue(guard.shortage(missing, "spill files").isPresent(), "read again within the interval");
    }
    assertEquals(1, reads.get());
    Files.createDirectories(missing);
    assertTrue(guard.shortage(missing, "spill files").isPresent(), "one volume, one reading");
  }

  @Test
  void aVolumeWhoseSpaceCannotBeReadCountsAsHavingRoomAndAZeroReserveWatchesNothing() {
    unreadable = true;
    assertEquals(Optional.empty(), guard(1000, Duration.ZERO).shortage(dir, "x"));
    assertEquals(Optional.empty(), DiskSpaceGuard.reserving(0).shortage(dir, "x"));
    assertEquals(0, DiskSpaceGuard.none().reserveBytes());
    assertThrows(IllegalArgumentException.class, () -> DiskSpaceGuard.reserving(-1));
    assertFalse(DiskSpaceGuard.reserving(Long.MAX_VALUE).shortage(dir, "everything").isEmpty(),
        "no real volume has Long.MAX_VALUE bytes usable");
  }
}
