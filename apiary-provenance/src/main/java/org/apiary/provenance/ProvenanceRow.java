package org.apiary.provenance;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * One row bound for a provenance table.
 *
 * @param table the {@link ProvenanceTable#name() table's name}
 * @param values one value per column, in the table's column order; {@code null} for SQL NULL
 */
public record ProvenanceRow(String table, List<Object> values) {
  public ProvenanceRow {
    Objects.requireNonNull(table, "table");
    values = Collections.unmodifiableList(new ArrayList<>(values)); // List.copyOf refuses nulls
  }
}
