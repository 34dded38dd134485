package org.apiary.runtime;

import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import org.apiary.database.ApiaryDatabase;
import org.voltdb.VoltTable;

/**
 * Apiary's own tables in the application's database, defined here and nowhere else, with a version so later
 * releases can migrate them. Created on first use.
 */
public final class SystemSchema {
  /** The schema version this code writes. */
  public static final int VERSION = 1;
  public static final String VERSION_TABLE = "APIARY_SCHEMA_VERSION";
  public static final String FUNCTIONS = "APIARY_FUNCTIONS";

  private static final String DDL = """
      CREATE TABLE APIARY_SCHEMA_VERSION (
        version INTEGER NOT NULL,
        PRIMARY KEY (version)
      );
      CREATE TABLE APIARY_FUNCTIONS (
        name VARCHAR(64) NOT NULL,
        kind VARCHAR(8) NOT NULL,
        key_type VARCHAR(16),
        partition_table VARCHAR(128),
        partition_column VARCHAR(128),
        has_writes TINYINT NOT NULL,
        function_class VARCHAR(1024) NOT NULL,
        procedure_class VARCHAR(1024) NOT NULL,
        deployed_at TIMESTAMP NOT NULL,
        PRIMARY KEY (name)
      );
      """;

  private SystemSchema() {}

  /** Creates the system tables if the database does not have them yet. */
  public static synchronized void ensure(ApiaryDatabase db) {
    if (tables(db).contains(VERSION_TABLE)) {
      return;
    }
    db.loadSchema(DDL);
    db.callAdmin("recording the system schema version", "@AdHoc",
        "INSERT INTO " + VERSION_TABLE + " VALUES (" + VERSION + ")");
  }

  /** Names of every table in the database, upper-case. */
  public static Set<String> tables(ApiaryDatabase db) {
    VoltTable t = db.callAdmin("listing tables", "@SystemCatalog", "TABLES").getResults()[0];
    Set<String> names = new HashSet<>();
    while (t.advanceRow()) {
      names.add(t.getString("TABLE_NAME").toUpperCase(Locale.ROOT));
    }
    return names;
  }

  /** Names of every user-defined procedure in the database. */
  public static Set<String> procedures(ApiaryDatabase db) {
    VoltTable t = db.callAdmin("listing procedures", "@SystemCatalog", "PROCEDURES").getResults()[0];
    Set<String> names = new HashSet<>();
    while (t.advanceRow()) {
      names.add(t.getString("PROCEDURE_NAME"));
    }
    return names;
  }
}
