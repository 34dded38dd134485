package org.apiary.runtime.journal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.apiary.database.OwnerOnlyFile;
import org.apiary.internal.Json;
import org.apiary.journal.JournalWriter;

/**
 * A database server's journal as the server last wrote it to {@value #FILE}, every {@link #INTERVAL}: the writer
 * lives in the server's process ({@code apiary start}'s, or each node's of a journaled cluster), so this file is how
 * {@code apiary status} in another process learns the journal's mode, size and durable lag.
 *
 * @param mode synchronous or asynchronous
 * @param durable the sequence of the last record on disk
 * @param durableLag records appended but not yet on disk
 * @param groups groups written since the server started
 * @param records records written since the server started
 * @param bytes bytes written since the server started
 * @param segments segment files of the current timeline
 * @param failure why the journal refuses writes, or {@code null}
 * @param at when the counters were taken (ISO-8601)
 */
public record JournalStatusReport(String mode, long durable, long durableLag, long groups, long records, long bytes,
                                  int segments, String failure, String at) {
  /** The report's file name, in the server's data directory (a node's root). */
  public static final String FILE = "journal-status.json";
  /** How often a server rewrites it. */
  public static final Duration INTERVAL = Duration.ofSeconds(2);

  /** The report of the journal {@code journal} is writing now, if it writes. */
  public static Optional<JournalStatusReport> of(ServerJournal journal) {
    JournalWriter w = journal == null ? null : journal.writer();
    if (w == null) {
      return Optional.empty();
    }
    JournalWriter.Status j = w.status();
    return Optional.of(new JournalStatusReport(j.mode().name().toLowerCase(java.util.Locale.ROOT), j.durable(),
        j.durableLag(), j.groups(), j.records(), j.bytes(), j.segments(), j.failure(), Instant.now().toString()));
  }

  /** Replaces the report in {@code directory} atomically, owner-only. */
  public void writeTo(Path directory) {
    Path file = directory.resolve(FILE);
    try {
      OwnerOnlyFile.replaceAtomically(file, Json.MAPPER.writeValueAsBytes(this));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the journal's status " + file + ": " + e.getMessage(), e);
    }
  }

  /** The report in {@code directory}, if there is one. */
  public static Optional<JournalStatusReport> readFrom(Path directory) {
    Path file = directory.resolve(FILE);
    if (!Files.exists(file)) {
      return Optional.empty();
    }
    try {
      return Optional.of(Json.MAPPER.readValue(file.toFile(), JournalStatusReport.class));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the journal's status " + file + ": " + e.getMessage(), e);
    }
  }

  /** Deletes the report in {@code directory} (its server stopped). */
  public static void deleteIn(Path directory) {
    try {
      Files.deleteIfExists(directory.resolve(FILE));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + directory.resolve(FILE) + ": " + e.getMessage(), e);
    }
  }
}
