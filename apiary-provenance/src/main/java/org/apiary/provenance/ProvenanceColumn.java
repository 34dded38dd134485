package org.apiary.provenance;

import java.util.Objects;

/**
 * A column of a provenance table.
 *
 * @param name lower-case, unquoted in SQL
 * @param type its type
 */
public record ProvenanceColumn(String name, ColumnType type) {
  public ProvenanceColumn {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
  }
}
