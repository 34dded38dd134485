package org.apiary;

import java.util.List;
import java.util.Optional;

/**
 * The result of one queued statement: the rows a query returned, or for a write the single row holding the
 * number of rows it changed (VoltDB's convention; see {@link #modifiedRowCount()}).
 */
public interface QueryResult extends Iterable<Row> {
  /** The column names, upper-case as VoltDB reports them. */
  List<String> columns();

  /** All rows, in the order the statement returned them. */
  List<Row> rows();

  /** The number of rows. */
  default int size() {
    return rows().size();
  }

  /** Whether there are no rows. */
  default boolean isEmpty() {
    return rows().isEmpty();
  }

  /** The first row, if there is one. */
  default Optional<Row> firstRow() {
    return rows().isEmpty() ? Optional.empty() : Optional.of(rows().get(0));
  }

  /**
   * For INSERT, UPSERT, UPDATE and DELETE: how many rows the statement changed.
   *
   * @throws IllegalStateException if this is the result of a query rather than a write
   */
  long modifiedRowCount();
}
