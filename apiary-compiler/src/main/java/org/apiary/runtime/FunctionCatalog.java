package org.apiary.runtime;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.apiary.compiler.CompiledApplication;
import org.apiary.compiler.CompiledFunction;
import org.apiary.compiler.FunctionKind;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.PartitionKeyType;
import org.voltdb.VoltTable;

/** The deployed functions a caller can invoke, read from the database's system table or from a compilation. */
public final class FunctionCatalog {
  /** What a caller needs to know to invoke a function. */
  public record Entry(String name, FunctionKind kind, PartitionKeyType keyType, String partitionTable,
                      String partitionColumn, boolean hasWrites) {}

  private final Map<String, Entry> entries;

  private FunctionCatalog(Map<String, Entry> entries) {
    this.entries = Map.copyOf(entries);
  }

  /** The functions of a compiled application. */
  public static FunctionCatalog of(CompiledApplication app) {
    Map<String, Entry> m = new LinkedHashMap<>();
    for (CompiledFunction f : app.functions()) {
      m.put(f.name(), new Entry(f.name(), f.kind(), f.keyType(), f.partitionTable(), f.partitionColumn(), f.hasWrites()));
    }
    return new FunctionCatalog(m);
  }

  /** Every function deployed to the database, from Apiary's system table (created first if missing). */
  public static FunctionCatalog load(ApiaryDatabase db) {
    SystemSchema.ensure(db);
    return read(db);
  }

  /** Every function deployed to the database, where Apiary's system tables are known to exist. */
  public static FunctionCatalog read(ApiaryDatabase db) {
    VoltTable t = db.callAdmin("reading deployed functions", "@AdHoc",
        "SELECT name, kind, key_type, partition_table, partition_column, has_writes FROM "
            + SystemSchema.FUNCTIONS + " ORDER BY name").getResults()[0];
    Map<String, Entry> m = new LinkedHashMap<>();
    while (t.advanceRow()) {
      String key = t.getString(2);
      m.put(t.getString(0), new Entry(t.getString(0), FunctionKind.valueOf(t.getString(1)),
          key == null ? null : PartitionKeyType.valueOf(key), t.getString(3), t.getString(4), t.getLong(5) != 0));
    }
    return new FunctionCatalog(m);
  }

  public Optional<Entry> get(String name) {
    return Optional.ofNullable(entries.get(name));
  }

  public Map<String, Entry> entries() {
    return entries;
  }
}
