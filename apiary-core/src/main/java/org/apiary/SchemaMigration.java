package org.apiary;

import java.util.List;
import java.util.Objects;

/**
 * One numbered change to an application's schema ({@link Application#withMigrations}): VoltDB DDL that brings the
 * schema from the previous version to {@link #version()}. A deploy applies, in order, every migration the database
 * has not recorded yet, in the same deploy that loads the functions written against the new schema, and records each
 * applied version in the database ({@code APIARY_APPLICATION_SCHEMA}).
 *
 * <p>Never edit a migration that has been deployed; append one with the next number instead. The application's
 * {@link Application#schema() schema} is version 0: a new database gets it and every migration at once.
 *
 * <p>A deploy refuses, naming the statement, a migration that would drop data (a {@code DROP TABLE} or
 * {@code ALTER TABLE ... DROP COLUMN} of a table with rows) or that VoltDB cannot make in place on a table with rows
 * (a {@code NOT NULL} column without a {@code DEFAULT}, a unique index or constraint, a primary key, a change of
 * partitioning), unless the deploy allows data loss ({@code apiary deploy --allow-data-loss}); it then deletes such a
 * table's rows before the change.
 *
 * @param version the schema version once this migration is applied: 1 for the first, then consecutive
 * @param description what the migration changes and why, shown when it is applied or refused
 * @param ddl the VoltDB DDL statements, each ending with {@code ;} (no {@code ;} inside string literals)
 */
public record SchemaMigration(int version, String description, String ddl) {
  /** @throws IllegalArgumentException if the version is below 1 or the DDL is blank */
  public SchemaMigration {
    Objects.requireNonNull(description, "description");
    Objects.requireNonNull(ddl, "ddl");
    if (version < 1) {
      throw new IllegalArgumentException("a schema migration's version is 1 or more, not " + version);
    }
    if (ddl.isBlank()) {
      throw new IllegalArgumentException("schema migration " + version + " has no DDL");
    }
  }

  /** The DDL's statements, one per {@code ;}, without the {@code ;}, blank ones left out. */
  public List<String> statements() {
    return java.util.Arrays.stream(ddl.split(";")).map(String::strip).filter(s -> !s.isEmpty()).toList();
  }
}
