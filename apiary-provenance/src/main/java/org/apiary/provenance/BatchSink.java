package org.apiary.provenance;

import java.nio.file.Path;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;

/**
 * Where a {@link ProvenanceSpooler} loads its batches: the analytical database itself ({@link ProvenanceSink}), or a
 * loader process that loads them into it and answers once each batch is committed there (the loader's client in
 * {@code org.apiary.provenance.loader}). A batch counts as loaded only when {@link #loadBatch} returns.
 *
 * <p>Not thread-safe: one spooler thread uses a sink at a time.
 */
public interface BatchSink extends AutoCloseable {
  /** Where the rows go, for messages; never holds a password. */
  String url();

  /**
   * The file whose volume fills as rows are loaded, when this process writes it (an embedded DuckDB): the spooler
   * pauses loading while that volume is short of its reserve. Empty by default.
   */
  default Optional<Path> localFile() {
    return Optional.empty();
  }

  /** Makes sure {@code table} exists in the database (see {@link ProvenanceSink#ensureTable}). */
  void ensureTable(ProvenanceTable table) throws SQLException;

  /**
   * Loads rows of {@code table} in one transaction and returns once it committed. {@code fresh} rows were never
   * loaded before by any attempt (they may be appended without looking for their keys); otherwise rows whose key is
   * present are skipped. The rows were checked against the table when they were offered
   * ({@link ProvenanceSink#load} checks them itself).
   *
   * @return how many rows were added, or -1 if the database does not say
   * @throws SQLException if the load failed; nothing of it, or all of it, may have committed
   */
  int loadBatch(ProvenanceTable table, List<ProvenanceRow> rows, boolean fresh) throws SQLException;

  /** Closes the connection; an uncommitted load is rolled back. */
  @Override
  void close() throws SQLException;
}
