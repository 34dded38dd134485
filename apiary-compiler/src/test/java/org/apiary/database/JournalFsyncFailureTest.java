package org.apiary.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apiary.runtime.journal.JournalStatusReport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 40, item 5: the journal's fsync fails for real, under a running server. The journal directory is an ext4 file
 * system on a loop device whose backing file is a sparse image on a small tmpfs: once the tmpfs is full, the loop
 * device cannot store a new block, the block layer fails the write-back, and the kernel's fsync returns an error
 * (ENOSPC on this kernel: a thin-provisioned volume running out of room) although every write() succeeded into the
 * page cache. This kernel has no device-mapper ({@code dm-flakey}/{@code error}), so this is the kernel-level fault at
 * hand. It needs root (mount, losetup, mkfs.ext4), as CI has; elsewhere it is skipped, saying why, and with
 * {@code CI=true} it fails instead.
 *
 * <p>A synchronously journaled database runs in a child JVM under load. After the fault: writes are refused with the
 * reason (the fsync failed), no write is acknowledged any more, and the status report says so. The child is then
 * SIGKILLed, the file system unmounted (its cached pages dropped), the tmpfs given room again and the file system
 * mounted anew, so the restart reads what the device holds: every acknowledged write must be there, exactly once.
 *
 * <p>One lie of this fault, measured ({@code src/test/scripts/loop-short-write-probe.py} appends with
 * {@code fdatasync} after each write, fills the tmpfs, then remounts and compares: every trial lost data): the loop driver completes a write that
 * stored only part of its pages (the backing file's {@code write} returns a short count when the tmpfs fills) as a
 * success, so the {@code fdatasync} whose write-back first reaches a new block returns 0 although that block never
 * reached the device; the next one fails. A journal cannot defend against a disk that acknowledges what it did not
 * store. So a loss is accepted only where the device shows that lie: the lost acknowledged writes number no more
 * than the records of the last group on the device that are not whole there (a group the device tore, which the
 * writer had been told was durable), everything before that group is whole, the writer's durable watermark at the
 * fault is no later than that group's end, and the kernel logged a write error on the loop device. Any other loss
 * fails the test. The load takes no periodic checkpoint, so the restart recovers from the journal on that device.
 */
class JournalFsyncFailureTest {
  private static final Duration RUN = Duration.ofSeconds(90);

  @TempDir Path dir;
  private final List<String[]> undo = new ArrayList<>();

  @Test
  void aFailedFsyncStopsAcknowledgementsSaysWhyAndLosesNothingAcknowledged() throws Exception {
    Path backing = dir.resolve("backing");
    Files.createDirectories(backing);
    Result tmpfs = run("mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", backing.toString());
    require(tmpfs.ok(), "mounting a tmpfs needs root: " + tmpfs.output());
    undo.add(new String[] {"umount", "-l", backing.toString()});
    Path image = backing.resolve("disk.img");
    try (var f = new java.io.RandomAccessFile(image.toFile(), "rw")) {
      f.setLength(256L << 20); // sparse: the tmpfs holds only the blocks written
    }
    Result loop = run("losetup", "-f", "--show", image.toString());
    require(loop.ok(), "no loop device: " + loop.output());
    String device = loop.output().strip();
    undo.add(0, new String[] {"losetup", "-d", device});
    Result mkfs = run("mkfs.ext4", "-q", "-F", "-b", "4096", device);
    require(mkfs.ok(), "mkfs.ext4 failed: " + mkfs.output());
    Path data = dir.resolve("data");
    Path journal = DatabaseJournal.directoryOf(data);
    Files.createDirectories(journal);
    assertTrue(run("mount", device, journal.toString()).ok(), "mount " + device);
    undo.add(0, new String[] {"umount", "-l", journal.toString()});
    Path reports = dir.resolve("reports");
    Files.createDirectories(reports);

    DurabilityFixture.Child load = start("load", data.toString(), "synchronous", "1", "report=" + reports);
    Set<Long> acknowledged;
    JournalStatusReport status;
    try {
      load.awaitLine("LOADING", RUN);
      Thread.sleep(300);
      fill(backing.resolve("filler"));
      String refused = awaitLine(load, l -> l.startsWith("ERR ") && l.contains("fsync failed"), Duration.ofSeconds(20));
      assertTrue(refused.contains(journal.toString()), "the refusal names the journal directory: " + refused);
      Thread.sleep(500); // completions already on their way when the fsync failed
      int seen = load.output().lines().toList().size();
      Thread.sleep(1500);
      List<String> later = load.output().lines().skip(seen).toList();
      assertTrue(later.stream().noneMatch(l -> l.startsWith("ACK ")), "acknowledged after the fsync failed: " + later);
      assertTrue(later.stream().anyMatch(l -> l.startsWith("ERR ") && l.contains("fsync failed")),
          "the server goes on refusing writes, saying why: " + later);
      status = awaitFailureReported(reports);
      assertTrue(status.failure().contains("fsync failed") && status.failure().contains("restart"), status.failure());
    } finally {
      load.kill();
    }
    acknowledged = new TreeSet<>();
    load.output().lines().filter(l -> l.startsWith("ACK ")).forEach(l -> acknowledged.add(Long.parseLong(l.substring(4))));
    assertTrue(acknowledged.size() >= 200, "the load ran: " + acknowledged.size());

    // What the device holds: no page cached by the dead server's file system survives the unmount.
    assertTrue(run("umount", journal.toString()).ok(), "umount " + journal);
    Files.delete(backing.resolve("filler"));
    assertTrue(run("mount", device, journal.toString()).ok(), "mount " + device + " again");
    // Read before the restart's recovery starts a new timeline: where each increment's record is, by its key.
    Map<Long, Long> journaled = new HashMap<>();
    StringBuilder onDisk = new StringBuilder();
    long[] tornOnDevice = {0};
    long[] lastGroupOnDevice = {-1};
    // Without accepting loss: damage anywhere but in the last group fails here.
    org.apiary.journal.JournalReader.scan(journal, false).forEach((t, timeline) -> {
      onDisk.append(String.format("timeline %x: records=%d sequences %d..%d, last group declared through %d, "
          + "notes=%s; ", t, timeline.records(), timeline.firstSequence(), timeline.lastSequence(),
          timeline.lastGroupDeclared(), timeline.notes()));
      tornOnDevice[0] = Math.max(tornOnDevice[0], timeline.lastGroupDeclared() - timeline.lastSequence());
      lastGroupOnDevice[0] = Math.max(lastGroupOnDevice[0], timeline.lastGroupDeclared());
      org.apiary.journal.JournalReader.forEach(timeline, r -> {
        if (r.procedure().equals("increment")) {
          journaled.put(((Number) DatabaseJournal.parameters(r)[0]).longValue(), r.sequence());
        }
      });
    });
    String snapshots;
    try (var files = Files.list(Snapshots.snapshotDirectory(data))) {
      snapshots = files.map(f -> f.getFileName().toString()).filter(n -> n.endsWith(".digest")).sorted().toList()
          .toString();
    }
    String out = start("count", data.toString(), "synchronous").finish(RUN);
    Map<Long, Long> counters = new HashMap<>();
    out.lines().filter(l -> l.startsWith("COUNTER ")).forEach(l -> {
      String[] p = l.split(" ");
      counters.put(Long.parseLong(p[1]), Long.parseLong(p[2]));
    });
    List<Long> lost = acknowledged.stream().filter(k -> !counters.containsKey(k)).toList();
    List<String> wrong = new ArrayList<>();
    counters.forEach((k, v) -> {
      if (v != (long) k) {
        wrong.add(k + "=" + v);
      }
    });
    System.getLogger(getClass().getName()).log(System.Logger.Level.INFO, "fsync failure: acknowledged="
        + acknowledged.size() + " present=" + counters.size() + " lost=" + lost.size() + " duplicated=" + wrong.size());
    String kernel = run("sh", "-c", "dmesg | tail -40").output();
    String why = lost.isEmpty() ? "" : "; the durable watermark when the fsync failed was " + status.durable()
        + " (report at " + status.at() + "); on the device after the fault: " + onDisk + "the lost keys' records: "
        + lost.stream().limit(20).map(k -> k + "@" + journaled.get(k)).toList() + "; snapshot digests " + snapshots
        + "; the kernel: " + kernel;
    String loopName = device.substring(device.lastIndexOf('/') + 1);
    // The writer never called durable more than the last group that reached the device (whose header is there).
    boolean deviceTore = tornOnDevice[0] > 0 && lost.size() <= tornOnDevice[0]
        && status.durable() <= lastGroupOnDevice[0] && kernel.contains("error") && kernel.contains(loopName);
    if (!lost.isEmpty() && deviceTore) {
      System.getLogger(getClass().getName()).log(System.Logger.Level.WARNING, "the device dropped " + tornOnDevice[0]
          + " record(s) of its last group after its fsync had returned (the loop driver's short write; see the class "
          + "comment); " + lost.size() + " acknowledged write(s) were in them" + why);
    } else {
      assertEquals(List.of(), lost.subList(0, Math.min(20, lost.size())), lost.size() + " acknowledged writes lost"
          + why);
    }
    assertEquals(List.of(), wrong, "counters applied other than exactly once");
  }

  /** Skips the test with the printed reason if the fault cannot be built here; with CI=true, fails. */
  private static void require(boolean possible, String why) {
    if (possible) {
      return;
    }
    String message = "the fsync fault cannot be built here (needs root, a loop device and mkfs.ext4): " + why;
    if ("true".equalsIgnoreCase(System.getenv("CI"))) {
      fail(message + "; CI=true, where this test must run");
    }
    System.out.println("SKIPPED: " + message);
    org.junit.jupiter.api.Assumptions.abort(message);
  }

  /** Fills the tmpfs under the loop device's image, so no new block of the device can be stored. */
  private static void fill(Path filler) throws IOException {
    byte[] chunk = new byte[1 << 20];
    try (OutputStream o = Files.newOutputStream(filler)) {
      for (int i = 0; i < 1024; i++) {
        o.write(chunk);
      }
    } catch (IOException e) {
      if (!String.valueOf(e.getMessage()).contains("No space left")) {
        throw e;
      }
      return;
    }
    throw new AssertionError("the 48 MB tmpfs took 1 GB without filling");
  }

  private static String awaitLine(DurabilityFixture.Child child, java.util.function.Predicate<String> wanted,
                                  Duration timeout) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      Optional<String> line = child.output().lines().filter(wanted).findFirst();
      if (line.isPresent()) {
        return line.get();
      }
      assertTrue(child.process().isAlive(), "the server died:\n" + child.output());
      Thread.sleep(100);
    }
    throw new AssertionError("no such line within " + timeout + ":\n" + tail(child.output()));
  }

  private static JournalStatusReport awaitFailureReported(Path reports) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    JournalStatusReport last = null;
    while (System.nanoTime() < deadline) {
      last = JournalStatusReport.readFrom(reports).orElse(null);
      if (last != null && last.failure() != null) {
        return last;
      }
      Thread.sleep(100);
    }
    throw new AssertionError("the journal's status report never gave a failure; last: " + last);
  }

  private static String tail(String output) {
    List<String> lines = output.lines().toList();
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
  }

  private static DurabilityFixture.Child start(String... args) throws IOException {
    return DurabilityFixture.Child.startMain(JournalCrashChild.class, null, args);
  }

  @AfterEach
  void tearDown() throws Exception {
    for (String[] command : undo) {
      run(command);
    }
  }

  private record Result(int exit, String output) {
    boolean ok() {
      return exit == 0;
    }
  }

  private static Result run(String... command) throws Exception {
    Process p;
    try {
      p = new ProcessBuilder(command).redirectErrorStream(true).start();
    } catch (IOException e) {
      return new Result(-1, command[0] + " cannot run: " + e.getMessage());
    }
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return new Result(-1, String.join(" ", command) + " did not finish within 30 s");
    }
    return new Result(p.exitValue(), new String(p.getInputStream().readAllBytes()));
  }
}
