package org.apiary.runtime.provenance;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apiary.database.OwnerOnlyFile;
import org.apiary.internal.Json;

/**
 * One database server's provenance backlog as the server last wrote it to {@value #FILE} in its own spill directory,
 * every {@link #INTERVAL} while it captures and once more when its capture stops. The spooler lives inside the
 * server's process (embedded in {@code apiary start}, or one process per cluster node), so this file is how a command
 * in another process learns what waits there: {@code apiary status} reads every server's under the spill root.
 *
 * @param server the server's VoltDB root (absolute), naming which server this is
 * @param pid the server's process
 * @param rowsInMemory rows (function executions, reads, denials, refused writes) waiting in memory
 * @param rowsOnDisk rows waiting in spill files
 * @param rowsLoaded rows loaded since the capture started
 * @param rowsDropped rows dropped since the capture started, for want of room in memory and on disk
 * @param lastError the spooler's last failure or stall, or {@code null}
 * @param refusing why the server refuses functions (a volume below the disk reserve), or {@code null}
 * @param stopped whether the capture had stopped when this was written (its server stopping)
 * @param at when the counts were taken (ISO-8601)
 * @param spillBytes bytes of the spill files holding {@code rowsOnDisk}; {@code null} in a report written before
 *     servers reported it
 * @param oldestUnloadedSeconds how long the oldest row not yet loaded had waited when the counts were taken (0 when
 *     none waits; {@link org.apiary.provenance.SpoolerStats#oldestWaiting()}); {@code null} in an older report
 * @param sinkReachable whether the spooler's last attempt to open the sink and load into it succeeded ({@code null}
 *     before its first attempt, or in an older report)
 */
public record BacklogReport(String server, long pid, long rowsInMemory, long rowsOnDisk, long rowsLoaded,
                            long rowsDropped, String lastError, String refusing, boolean stopped, String at,
                            Long spillBytes, Double oldestUnloadedSeconds, Boolean sinkReachable) {
  /** The report's file name in a server's spill directory. */
  public static final String FILE = "backlog.json";
  /** How often a capturing server rewrites its report. */
  public static final java.time.Duration INTERVAL = java.time.Duration.ofSeconds(2);

  /** A report of a spooler's counters {@code s}, taken at {@code at}. */
  public static BacklogReport of(String server, long pid, org.apiary.provenance.SpoolerStats s, String refusing,
                                 boolean stopped, java.time.Instant at) {
    return new BacklogReport(server, pid, s.rowsInMemory(), s.rowsOnDisk(), s.rowsLoaded(), s.rowsDropped(),
        s.lastError(), refusing, stopped, at.toString(), s.bytesOnDisk(), s.oldestWaiting().toMillis() / 1000.0,
        s.sinkReachable());
  }

  /** Rows waiting, in memory and on disk. */
  public long rowsWaiting() {
    return rowsInMemory + rowsOnDisk;
  }

  /** Replaces the report in {@code serverSpillDirectory} atomically, owner-only (it names the server's paths). */
  void writeTo(Path serverSpillDirectory) {
    Path file = serverSpillDirectory.resolve(FILE);
    try {
      OwnerOnlyFile.createDirectory(serverSpillDirectory);
      OwnerOnlyFile.replaceAtomically(file, Json.MAPPER.writeValueAsBytes(this));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the provenance backlog report " + file + ": " + e.getMessage(), e);
    }
  }

  /**
   * Every server's report under a spill root (the directory a deployment names; each server spills into a
   * subdirectory of its own, see {@link ServerProvenance#serverSpillDirectory}), ordered by server.
   *
   * @throws UncheckedIOException if the root or a report cannot be read (a report being replaced is read again)
   */
  public static List<BacklogReport> readAll(Path spillRoot) {
    List<BacklogReport> reports = new ArrayList<>();
    if (!Files.isDirectory(spillRoot)) {
      return reports;
    }
    try (DirectoryStream<Path> servers = Files.newDirectoryStream(spillRoot, Files::isDirectory)) {
      for (Path server : servers) {
        Path file = server.resolve(FILE);
        if (Files.exists(file)) {
          reports.add(Json.MAPPER.readValue(file.toFile(), BacklogReport.class));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the provenance backlog reports under " + spillRoot + ": "
          + e.getMessage(), e);
    }
    reports.sort(java.util.Comparator.comparing(BacklogReport::server));
    return reports;
  }
}
