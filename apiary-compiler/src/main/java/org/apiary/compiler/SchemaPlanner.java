package org.apiary.compiler;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apiary.RegistrationException;
import org.voltdb.VoltType;
import org.voltdb.catalog.Catalog;
import org.voltdb.catalog.Column;
import org.voltdb.catalog.Database;
import org.voltdb.catalog.Table;
import org.voltdb.compiler.PlannerTool;
import org.voltdb.compiler.VoltCompiler;
import org.voltdb.planner.CompiledPlan;
import org.voltdb.planner.StatementPartitioning;

/**
 * VoltDB's own DDL compiler and SQL planner, run offline over the application schema, so that statements are
 * checked exactly as the database will check them, before anything is deployed.
 */
final class SchemaPlanner {
  private final Database database;
  private final PlannerTool planner;

  /** What the planner says about one statement. */
  record Plan(boolean readOnly, int partitionedTables, boolean singlePartition, int partitionParameter,
              String partitionColumn, String partitionColumnType, boolean replicatedWrite, Object constantPartitionValue) {}

  private SchemaPlanner(Database database) {
    this.database = database;
    this.planner = new PlannerTool(database, new byte[20]);
  }

  /** The primary-key columns of every base table, by upper-case name (for read provenance). */
  java.util.Map<String, List<String>> primaryKeys() {
    if (primaryKeys == null) {
      primaryKeys = ReadCapture.primaryKeys(database);
    }
    return primaryKeys;
  }

  private java.util.Map<String, List<String>> primaryKeys;

  /** The tables (and views) the schema defines, each with its columns, upper-case. */
  java.util.Map<String, java.util.Set<String>> tables() {
    java.util.Map<String, java.util.Set<String>> tables = new java.util.TreeMap<>();
    for (Table t : database.getTables()) {
      java.util.Set<String> columns = new java.util.TreeSet<>();
      for (org.voltdb.catalog.Column c : t.getColumns()) {
        columns.add(c.getTypeName().toUpperCase(Locale.ROOT));
      }
      tables.put(t.getTypeName().toUpperCase(Locale.ROOT), columns);
    }
    return tables;
  }

  /**
   * Compiles the schema.
   *
   * @throws RegistrationException with VoltDB's message if the DDL does not compile
   */
  static SchemaPlanner forSchema(String ddl) {
    Path file = null;
    VoltCompiler compiler = new VoltCompiler(false);
    try {
      file = Files.createTempFile("apiary-schema-", ".sql");
      Files.writeString(file, ddl);
      Catalog catalog = compiler.compileCatalogFromDDL(file.toString());
      if (catalog == null || compiler.hasErrors()) {
        throw new RegistrationException(errors(compiler));
      }
      return new SchemaPlanner(VoltCompiler.getCatalogDatabase(catalog));
    } catch (VoltCompiler.VoltCompilerException e) {
      List<String> errors = new ArrayList<>(errors(compiler));
      errors.add("schema: " + e.getMessage());
      throw new RegistrationException(errors);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the schema to a temporary file", e);
    } finally {
      if (file != null) {
        file.toFile().delete();
      }
    }
  }

  /** VoltDB's compiler keeps its error lines in a package-private list; read them so the user sees the reason. */
  private static List<String> errors(VoltCompiler compiler) {
    List<String> lines = new ArrayList<>();
    try {
      java.lang.reflect.Field f = VoltCompiler.class.getDeclaredField("m_errors");
      f.setAccessible(true);
      for (Object feedback : (List<?>) f.get(compiler)) {
        VoltCompiler.Feedback fb = (VoltCompiler.Feedback) feedback;
        lines.add("schema" + (fb.getLineNumber() > 0 ? " line " + fb.getLineNumber() : "") + ": " + fb.getMessage());
      }
    } catch (ReflectiveOperationException | RuntimeException e) {
      lines.add("schema: VoltDB rejected the DDL (its error list could not be read: " + e + ")");
    }
    if (lines.isEmpty()) {
      lines.add("schema: VoltDB rejected the DDL");
    }
    return lines;
  }

  /**
   * Plans one statement.
   *
   * @throws IllegalArgumentException with the planner's message if it does not compile
   */
  Plan plan(String sql) {
    StatementPartitioning partitioning = StatementPartitioning.inferPartitioning();
    CompiledPlan plan;
    try {
      plan = planner.planSqlCore(sql, partitioning);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(cleanMessage(e));
    }
    if (plan == null) {
      throw new IllegalArgumentException("VoltDB's planner could not plan it");
    }
    String column = partitioning.getFullColumnName();
    return new Plan(plan.isReadOnly(), partitioning.getCountOfPartitionedTables(), partitioning.isInferredSingle(),
        partitioning.getInferredParameterIndex(), column, column == null ? null : columnType(column),
        partitioning.getIsReplicatedTableDML(), partitioning.getInferredPartitioningValue());
  }

  /**
   * A partitioned table's partition column ({@code TABLE.COLUMN}) of the given type, the first by table name; a local
   * function that reads only replicated tables is routed by it, so it runs on its key's partition.
   */
  java.util.Optional<String> partitionColumnOfType(String columnType) {
    java.util.TreeMap<String, String> byTable = new java.util.TreeMap<>();
    for (Table t : database.getTables()) {
      Column c = t.getPartitioncolumn();
      if (!t.getIsreplicated() && c != null && typeName(c).equals(columnType)) {
        byTable.put(t.getTypeName().toUpperCase(Locale.ROOT), c.getTypeName().toUpperCase(Locale.ROOT));
      }
    }
    return byTable.isEmpty() ? java.util.Optional.empty()
        : java.util.Optional.of(byTable.firstKey() + "." + byTable.firstEntry().getValue());
  }

  private String columnType(String fullColumn) {
    int dot = fullColumn.indexOf('.');
    Table table = database.getTables().getIgnoreCase(fullColumn.substring(0, dot));
    if (table == null) {
      return null;
    }
    Column column = table.getColumns().getIgnoreCase(fullColumn.substring(dot + 1));
    return column == null ? null : typeName(column);
  }

  private static String typeName(Column column) {
    return VoltType.get((byte) column.getType()).getName().toUpperCase(Locale.ROOT);
  }

  private static String cleanMessage(Throwable e) {
    String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    return m.replace("SQL error while compiling query: ", "").strip();
  }
}
