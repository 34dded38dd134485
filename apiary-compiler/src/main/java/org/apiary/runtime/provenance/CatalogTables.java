package org.apiary.runtime.provenance;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.apiary.provenance.ColumnType;
import org.apiary.provenance.ProvenanceColumn;
import org.apiary.provenance.ProvenanceSchema;
import org.apiary.provenance.ProvenanceTable;
import org.voltdb.VoltDB;
import org.voltdb.VoltType;
import org.voltdb.catalog.Column;
import org.voltdb.catalog.ColumnRef;
import org.voltdb.catalog.Index;
import org.voltdb.catalog.Table;
import org.voltdb.utils.CatalogUtil;

/** The events table of an application table, described from the running server's catalog. */
final class CatalogTables {
  private CatalogTables() {}

  /** The events table for {@code table}, or empty if the catalog has no such table. */
  static Optional<ProvenanceTable> eventsTable(String table) {
    Table t = VoltDB.instance().getCatalogContext().database.getTables().getIgnoreCase(table);
    if (t == null) {
      return Optional.empty();
    }
    List<Column> columns = new ArrayList<>();
    t.getColumns().forEach(columns::add);
    columns.sort(Comparator.comparingInt(Column::getIndex));
    List<ProvenanceColumn> described = new ArrayList<>();
    for (Column c : columns) {
      described.add(new ProvenanceColumn(c.getName().toLowerCase(Locale.ROOT),
          ColumnType.fromVoltType(VoltType.get((byte) c.getType()).getName())));
    }
    List<String> key = new ArrayList<>();
    Index pk;
    try {
      pk = CatalogUtil.getPrimaryKeyIndex(t);
    } catch (Exception e) {
      pk = null; // VoltDB signals "no primary key" this way: events then identify no single record
    }
    if (pk != null) {
      List<ColumnRef> refs = new ArrayList<>();
      pk.getColumns().forEach(refs::add);
      refs.sort(Comparator.comparingInt(ColumnRef::getIndex));
      refs.forEach(r -> key.add(r.getColumn().getName()));
    }
    return Optional.of(ProvenanceSchema.eventsTable(t.getTypeName(), described, key));
  }
}
