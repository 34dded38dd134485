package org.apiary.provenance;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;

/**
 * Finds the executions in spill files left by an earlier process that are not known to have committed, and moves
 * their rows into {@code unconfirmed-*.spill} files that no spooler loads (see {@link SpoolerConfig.Recovery#REPLICATED}).
 *
 * <p>An execution is known by its {@value ProvenanceSchema#FUNCTION_INVOCATIONS} row: {@code exec_seq} 0 on a
 * partition is a single-partition writer, above 0 a read-only execution, and partition
 * {@value ProvenanceSchema#MULTI_PARTITION} a multi-partition one. All rows of an execution share its {@code exec_id},
 * so its reads are set aside with it. Rows of tables without an {@code exec_id} column are left as they are.
 */
final class UnconfirmedExecutions {
  private static final System.Logger LOG = System.getLogger(UnconfirmedExecutions.class.getName());
  static final String PREFIX = "unconfirmed-";

  private UnconfirmedExecutions() {}

  /**
   * Sets aside the rows of unconfirmed executions in {@code files} (segment id to file, in offer order).
   *
   * @param registered tables registered so far, for files that carry no definitions
   * @return how many rows were set aside
   */
  static long setAside(SortedMap<Long, Path> files, SpoolerConfig.Recovery recovery,
                       Map<String, ProvenanceTable> registered) throws IOException {
    if (recovery != SpoolerConfig.Recovery.REPLICATED) {
      return 0;
    }
    Set<String> unconfirmed = find(files, registered);
    if (unconfirmed.isEmpty()) {
      return 0;
    }
    long moved = 0;
    for (Map.Entry<Long, Path> entry : files.entrySet()) {
      moved += rewrite(entry.getKey(), entry.getValue(), unconfirmed, registered);
    }
    LOG.log(System.Logger.Level.WARNING, "provenance of " + unconfirmed.size() + " execution(s) (" + moved + " rows) "
        + "in the spill files of " + files.get(files.firstKey()).getParent() + " is not known to have committed "
        + "(single-partition writers, which live replicas captured if they committed); set aside in " + PREFIX
        + "*.spill files, not loaded: exec_id " + unconfirmed.stream().sorted().limit(20).toList()
        + (unconfirmed.size() > 20 ? " and " + (unconfirmed.size() - 20) + " more" : ""));
    return moved;
  }

  /** The exec_ids of the single-partition writers in the files. */
  private static Set<String> find(SortedMap<Long, Path> files, Map<String, ProvenanceTable> registered)
      throws IOException {
    Set<String> writers = new HashSet<>();
    for (Path file : files.values()) {
      SpillFile.Contents contents = SpillFile.read(file);
      ProvenanceTable invocations = table(ProvenanceSchema.FUNCTION_INVOCATIONS, contents, registered);
      if (invocations == null) {
        continue;
      }
      int execId = invocations.indexOf(ProvenanceSchema.EXEC_ID);
      int execSeq = invocations.indexOf(ProvenanceSchema.EXEC_SEQ);
      int partition = invocations.indexOf(ProvenanceSchema.PARTITION_ID);
      for (ProvenanceRow row : contents.rows()) {
        if (row.table().equals(invocations.name())
            && row.values().get(partition) instanceof Number p && p.intValue() != ProvenanceSchema.MULTI_PARTITION
            && row.values().get(execSeq) instanceof Number seq && seq.longValue() == 0) {
          writers.add(String.valueOf(row.values().get(execId)));
        }
      }
    }
    return writers;
  }

  private static ProvenanceTable table(String name, SpillFile.Contents contents,
                                       Map<String, ProvenanceTable> registered) {
    ProvenanceTable table = contents.tables().get(name);
    return table != null ? table : registered.get(name);
  }

  /** Moves one file's rows of unconfirmed executions to a file of their own; returns how many. */
  private static long rewrite(long id, Path file, Set<String> unconfirmed, Map<String, ProvenanceTable> registered)
      throws IOException {
    SpillFile.Contents contents = SpillFile.read(file);
    Map<String, ProvenanceTable> tables = new HashMap<>(registered);
    tables.putAll(contents.tables());
    List<ProvenanceRow> kept = new ArrayList<>();
    List<ProvenanceRow> aside = new ArrayList<>();
    for (ProvenanceRow row : contents.rows()) {
      ProvenanceTable table = tables.get(row.table());
      int execId = table == null ? -1 : table.indexOf(ProvenanceSchema.EXEC_ID);
      boolean unconfirmedRow = execId >= 0 && unconfirmed.contains(String.valueOf(row.values().get(execId)));
      (unconfirmedRow ? aside : kept).add(row);
    }
    if (aside.isEmpty()) {
      return 0;
    }
    if (contents.damagedUnits() > 0) {
      LOG.log(System.Logger.Level.WARNING, "spill file " + file + " had " + contents.damagedUnits() + " damaged "
          + "unit(s) (" + contents.damagedRows() + " rows or more), skipped when it was rewritten without the rows of "
          + "unconfirmed executions");
    }
    // The set-aside copy is durable before the rows leave the segment: a crash in between only repeats them there.
    try (SpillFile.Writer writer = SpillFile.Writer.create(freshPath(file.getParent(), id))) {
      writer.append(aside, tables);
    }
    if (kept.isEmpty()) {
      Files.delete(file);
    } else {
      Path rewritten = file.resolveSibling(file.getFileName() + ".rewrite");
      Files.deleteIfExists(rewritten);
      try (SpillFile.Writer writer = SpillFile.Writer.create(rewritten)) {
        writer.append(kept, tables);
      }
      Files.move(rewritten, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
    return aside.size();
  }

  private static Path freshPath(Path directory, long id) {
    Path path = directory.resolve(String.format(PREFIX + "segment-%020d.spill", id));
    for (int n = 1; Files.exists(path); n++) {
      path = directory.resolve(String.format(PREFIX + "segment-%020d-%d.spill", id, n));
    }
    return path;
  }
}
