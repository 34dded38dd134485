package org.apiary.frontend;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apiary.Application;
import org.apiary.RegistrationException;
import org.apiary.SchemaMigration;
import org.apiary.database.ApiaryDatabase;
import org.apiary.runtime.SystemSchema;
import org.voltdb.VoltTable;

/**
 * Brings an application's tables to the schema version it declares ({@link SchemaMigration}): a new database gets
 * the whole {@link Application#currentSchema()}; one that has the tables gets the migrations it has not recorded in
 * {@value SystemSchema#APPLICATION_SCHEMA} (none recorded: version 0, the schema as first deployed), as one catalog
 * update. The version is the database's: of several applications in one database, one declares migrations (an
 * application without any only needs its tables there). A migration that would drop data, or that VoltDB cannot make on a table with rows, is refused before
 * anything changes unless data loss is allowed.
 */
final class ApplicationSchema {
  private ApplicationSchema() {}

  /**
   * What a deploy does to the application's tables.
   *
   * @param emptied tables whose rows are deleted first (allowed data loss), upper-case
   * @param ddl the DDL of one catalog update; empty if the database has the declared version
   * @param applied the migrations the update applies, whose versions are then recorded
   */
  record Plan(List<String> emptied, String ddl, List<SchemaMigration> applied) {}

  /**
   * Decides what a deploy of {@code app} changes, refusing a migration a deploy must not make.
   *
   * @param declared the tables and views of {@link Application#currentSchema()} with their columns, upper-case
   * @throws RegistrationException naming every refused statement, if the database's version is newer than the
   *     application's, if it has only some of the schema's tables, or if it lacks a table or column the schema
   *     declares that no pending migration adds (the schema or a deployed migration was edited)
   */
  static Plan plan(ApiaryDatabase db, Application app, Map<String, Set<String>> declared, boolean allowDataLoss) {
    SystemSchema.ensure(db);
    Set<String> existing = SystemSchema.tables(db);
    Integer recorded = recordedVersion(db);
    // An application without migrations (one of several in a database, or one that never changed its schema) only
    // needs its tables there; the recorded version belongs to the application that declares migrations.
    if (recorded == null || app.migrations().isEmpty()) {
      Set<String> base = createdTables(app.schema());
      Set<String> present = new TreeSet<>(base);
      present.retainAll(existing);
      if (present.isEmpty()) {
        return new Plan(List.of(), app.currentSchema(), app.migrations());
      }
      if (present.size() != base.size()) {
        Set<String> missing = new TreeSet<>(base);
        missing.removeAll(existing);
        throw new RegistrationException(List.of("the database has some of the schema's tables " + present
            + " but not " + missing + " and records no schema version: create the missing tables or use a fresh "
            + "database"));
      }
      if (app.migrations().isEmpty()) {
        requireDeclared(db, declared, existing, List.of());
        return new Plan(List.of(), "", List.of());
      }
      recorded = 0; // deployed before versions were recorded, or without migrations: the schema as declared
    }
    if (recorded > app.schemaVersion()) {
      throw new RegistrationException(List.of("the database's schema is version " + recorded + ", newer than this "
          + "application's " + app.schemaVersion() + " (its last migration): deploy the application that has "
          + "migration " + recorded));
    }
    int from = recorded;
    List<SchemaMigration> pending = app.migrations().stream().filter(m -> m.version() > from).toList();
    requireDeclared(db, declared, existing, pending);
    List<String> refused = new ArrayList<>();
    Set<String> emptied = new LinkedHashSet<>();
    Map<String, Long> rows = new HashMap<>();
    List<String> ddl = new ArrayList<>();
    for (SchemaMigration m : pending) {
      for (String statement : m.statements()) {
        ddl.add(statement + ";");
        Risk risk = risk(statement);
        if (risk == null || !existing.contains(risk.table())) {
          continue;
        }
        long n = rows.computeIfAbsent(risk.table(), t -> count(db, t));
        if (n == 0) {
          continue;
        }
        if (!allowDataLoss) {
          refused.add("migration " + m.version() + " (" + m.description() + "): '" + statement + "' " + risk.what()
              + " of table " + risk.table() + ", which has " + n + " row(s)");
        } else if (risk.needsEmptyTable()) {
          emptied.add(risk.table());
        }
      }
    }
    if (!refused.isEmpty()) {
      refused.add("nothing was changed; deploy with --allow-data-loss (Registrar.register(..., true)) to make "
          + "these changes, deleting the rows of a table that cannot be changed in place");
      throw new RegistrationException(refused);
    }
    return new Plan(List.copyOf(emptied), String.join("\n", ddl), pending);
  }

  /** Carries out a plan: deletes the emptied tables' rows, loads the DDL as one catalog update, records versions. */
  static void apply(ApiaryDatabase db, Plan plan) {
    for (String table : plan.emptied()) {
      db.callAdmin("deleting the rows of " + table + " (data loss allowed)", "@AdHoc", "DELETE FROM " + table + ";");
    }
    if (!plan.ddl().isBlank()) {
      db.loadSchema(plan.ddl());
    }
    for (SchemaMigration m : plan.applied()) {
      db.callAdmin("recording schema version " + m.version(), "@AdHoc", "UPSERT INTO "
          + SystemSchema.APPLICATION_SCHEMA + " (version, description, applied_at) VALUES (?, ?, NOW)",
          m.version(), m.description().length() > 1024 ? m.description().substring(0, 1024) : m.description());
    }
  }

  /**
   * Refuses a deploy whose schema declares a table or column the database lacks and no pending migration adds: VoltDB
   * would otherwise refuse the functions with "object not found", after a deployed schema was edited in place.
   */
  private static void requireDeclared(ApiaryDatabase db, Map<String, Set<String>> declared, Set<String> existing,
                                      List<SchemaMigration> pending) {
    Set<String> created = new TreeSet<>();
    Map<String, Set<String>> added = new HashMap<>();
    for (SchemaMigration m : pending) {
      created.addAll(createdTables(m.ddl()));
      for (String statement : m.statements()) {
        Matcher a = ADD_COLUMN.matcher(statement.strip().replaceAll("\\s+", " "));
        if (a.matches()) {
          added.computeIfAbsent(upper(a.group(1)), t -> new TreeSet<>()).add(upper(a.group(2)));
        }
      }
    }
    Map<String, Set<String>> present = columns(db);
    List<String> problems = new ArrayList<>();
    declared.forEach((table, columns) -> {
      if (created.contains(table)) {
        return;
      }
      if (!existing.contains(table)) {
        problems.add("the application's schema declares table " + table + ", which the database lacks and no "
            + "pending migration creates: append a SchemaMigration that creates it (a deployed schema or migration "
            + "is never applied again, so editing it changes nothing)");
        return;
      }
      Set<String> missing = new TreeSet<>(columns);
      missing.removeAll(present.getOrDefault(table, Set.of()));
      missing.removeAll(added.getOrDefault(table, Set.of()));
      if (!missing.isEmpty()) {
        problems.add("the application's schema declares column(s) " + missing + " of table " + table + ", which the "
            + "database lacks and no pending migration adds: append a SchemaMigration (ALTER TABLE " + table
            + " ADD COLUMN ...) instead of editing the deployed schema or a deployed migration");
      }
    });
    if (!problems.isEmpty()) {
      throw new RegistrationException(problems);
    }
  }

  /** Every table's columns in the database, upper-case. */
  private static Map<String, Set<String>> columns(ApiaryDatabase db) {
    Map<String, Set<String>> columns = new HashMap<>();
    VoltTable c = db.callAdmin("listing columns", "@SystemCatalog", "COLUMNS").getResults()[0];
    while (c.advanceRow()) {
      columns.computeIfAbsent(upper(c.getString("TABLE_NAME")), t -> new TreeSet<>())
          .add(upper(c.getString("COLUMN_NAME")));
    }
    return columns;
  }

  /** The version the database records, or null if it records none. */
  private static Integer recordedVersion(ApiaryDatabase db) {
    VoltTable t = db.callAdmin("reading the application's schema version", "@AdHoc",
        "SELECT MAX(version) FROM " + SystemSchema.APPLICATION_SCHEMA).getResults()[0];
    if (!t.advanceRow()) {
      return null;
    }
    long v = t.getLong(0);
    return t.wasNull() ? null : (int) v;
  }

  private static long count(ApiaryDatabase db, String table) {
    VoltTable t = db.callAdmin("counting the rows of " + table, "@AdHoc", "SELECT COUNT(*) FROM " + table)
        .getResults()[0];
    t.advanceRow();
    return t.getLong(0);
  }

  /**
   * What a statement risks on a table with rows.
   *
   * @param table the table, upper-case
   * @param what what it does, for the refusal
   * @param needsEmptyTable whether VoltDB refuses it on a table with rows (so allowing data loss empties the table)
   */
  record Risk(String table, String what, boolean needsEmptyTable) {}

  private static final Pattern DROP_TABLE = Pattern.compile("(?i)DROP TABLE (?:IF EXISTS )?(\\w+).*");
  private static final Pattern DROP_COLUMN = Pattern.compile("(?i)ALTER TABLE (\\w+) DROP COLUMN (\\w+).*");
  private static final Pattern ADD_COLUMN = Pattern.compile("(?i)ALTER TABLE (\\w+) ADD COLUMN (\\w+) (.*)");
  private static final Pattern ADD_CONSTRAINT = Pattern.compile(
      "(?i)ALTER TABLE (\\w+) ADD (CONSTRAINT|PRIMARY KEY|UNIQUE|ASSUMEUNIQUE)\\b.*");
  private static final Pattern UNIQUE_INDEX = Pattern.compile(
      "(?i)CREATE (?:UNIQUE|ASSUMEUNIQUE) INDEX \\w+ ON (\\w+).*");
  private static final Pattern PARTITION = Pattern.compile("(?i)PARTITION TABLE (\\w+) ON .*");
  private static final Pattern CREATE_TABLE = Pattern.compile("(?i)\\bCREATE (?:TABLE|VIEW) (\\w+)");

  /** What a statement risks on a table with rows; null if nothing (VoltDB makes it in place, keeping every row). */
  static Risk risk(String statement) {
    String s = statement.strip().replaceAll("\\s+", " ");
    Matcher m;
    if ((m = DROP_TABLE.matcher(s)).matches()) {
      return new Risk(upper(m.group(1)), "drops the rows", false);
    }
    if ((m = DROP_COLUMN.matcher(s)).matches()) {
      return new Risk(upper(m.group(1)), "drops the data of column " + upper(m.group(2)), false);
    }
    if ((m = ADD_COLUMN.matcher(s)).matches()) {
      String rest = upper(m.group(3));
      if (rest.contains("NOT NULL") && !rest.contains("DEFAULT")) {
        return new Risk(upper(m.group(1)), "adds a NOT NULL column without a DEFAULT, which VoltDB cannot do to the "
            + "rows", true);
      }
      return null;
    }
    if ((m = ADD_CONSTRAINT.matcher(s)).matches()) {
      return new Risk(upper(m.group(1)), "adds a constraint, which VoltDB cannot do to the rows", true);
    }
    if ((m = UNIQUE_INDEX.matcher(s)).matches()) {
      return new Risk(upper(m.group(1)), "adds a unique index, which VoltDB cannot do to the rows", true);
    }
    if ((m = PARTITION.matcher(s)).matches()) {
      return new Risk(upper(m.group(1)), "changes the partitioning, which VoltDB cannot do to the rows", true);
    }
    return null;
  }

  /** The tables and views a DDL script creates, upper-case. */
  static Set<String> createdTables(String ddl) {
    Set<String> tables = new TreeSet<>();
    Matcher m = CREATE_TABLE.matcher(ddl.replaceAll("\\s+", " "));
    while (m.find()) {
      tables.add(upper(m.group(1)));
    }
    return tables;
  }

  private static String upper(String s) {
    return s.toUpperCase(Locale.ROOT);
  }
}
