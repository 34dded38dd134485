package org.apiary.provenance;

import java.util.List;
import java.util.Objects;

/**
 * A table of the analytical database that provenance is loaded into.
 *
 * @param name the table's name, unquoted in SQL
 * @param columns its columns, in the order of {@link ProvenanceRow#values()}
 * @param key the columns that identify a row: loading a row whose key is already present does nothing, so loads
 *     can be repeated safely
 * @param recordKey for an events table, the application table's primary key columns (identifying the record an
 *     event is about); empty otherwise
 */
public record ProvenanceTable(String name, List<ProvenanceColumn> columns, List<String> key, List<String> recordKey) {
  public ProvenanceTable {
    Objects.requireNonNull(name, "name");
    columns = List.copyOf(columns);
    key = List.copyOf(key);
    recordKey = List.copyOf(recordKey);
    for (String k : key) {
      if (columns.stream().noneMatch(c -> c.name().equals(k))) {
        throw new IllegalArgumentException("key column " + k + " is not a column of " + name);
      }
    }
  }

  /** The position of a column, or -1. */
  public int indexOf(String column) {
    for (int i = 0; i < columns.size(); i++) {
      if (columns.get(i).name().equals(column)) {
        return i;
      }
    }
    return -1;
  }
}
