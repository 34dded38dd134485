package org.apiary.runtime;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.PartitionKeyType;
import org.voltdb.VoltTable;

/**
 * Apiary's own tables and procedures in the application's database, defined here and nowhere else, with a version
 * so later releases can migrate them. Whatever is missing is created on first use.
 *
 * <ul>
 *   <li>{@value #FUNCTIONS}: the deployed functions;</li>
 *   <li>{@value #GRAPHS}: the registered graphs, so every frontend can serve every graph;</li>
 *   <li>{@code APIARY_RECORDED_*}: recorded function outputs for exactly-once, one table per partition key family,
 *       partitioned like the functions that write them so the record commits in the function's transaction;</li>
 *   <li>{@value #INVOCATIONS}: the invocation log (each graph invocation before it starts, and its outcome);</li>
 *   <li>{@value #FRONTENDS}: frontend leases, so live frontends can find dead ones' unfinished invocations.</li>
 * </ul>
 */
public final class SystemSchema {
  /** The schema version this code writes. */
  public static final int VERSION = 2;
  public static final String VERSION_TABLE = "APIARY_SCHEMA_VERSION";
  public static final String FUNCTIONS = "APIARY_FUNCTIONS";
  public static final String GRAPHS = "APIARY_GRAPHS";
  public static final String INVOCATIONS = "APIARY_INVOCATIONS";
  public static final String FRONTENDS = "APIARY_FRONTENDS";
  /** Recorded outputs of functions keyed by BIGINT, INTEGER, SMALLINT or TINYINT (VoltDB hashes them alike). */
  public static final String RECORDED_INTEGER = "APIARY_RECORDED_INTEGER";
  /** Recorded outputs of functions keyed by VARCHAR, and of global functions (keyed by invocation ID). */
  public static final String RECORDED_VARCHAR = "APIARY_RECORDED_VARCHAR";
  /** Recorded outputs of functions keyed by VARBINARY. */
  public static final String RECORDED_VARBINARY = "APIARY_RECORDED_VARBINARY";

  /** Begins an invocation: fails with a constraint violation if the ID is already logged. */
  public static final String BEGIN_INVOCATION = "ApiaryBeginInvocation";
  /** Reads one invocation's log row. */
  public static final String GET_INVOCATION = "ApiaryGetInvocation";
  /** Stores an invocation's outcome. */
  public static final String FINISH_INVOCATION = "ApiaryFinishInvocation";
  /** Hands a running invocation to another frontend. */
  public static final String CLAIM_INVOCATION = "ApiaryClaimInvocation";

  private static final Map<String, String> TABLES = new LinkedHashMap<>();
  private static final Map<String, String> PROCEDURES = new LinkedHashMap<>();

  static {
    TABLES.put(VERSION_TABLE, "CREATE TABLE APIARY_SCHEMA_VERSION (version INTEGER NOT NULL, PRIMARY KEY (version));");
    TABLES.put(FUNCTIONS, """
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
        );""");
    TABLES.put(GRAPHS, """
        CREATE TABLE APIARY_GRAPHS (
          name VARCHAR(64) NOT NULL,
          definition VARBINARY(1048576) NOT NULL,
          registered_at TIMESTAMP NOT NULL,
          PRIMARY KEY (name)
        );""");
    recordedTable(RECORDED_INTEGER, "BIGINT");
    recordedTable(RECORDED_VARCHAR, "VARCHAR(1024)");
    recordedTable(RECORDED_VARBINARY, "VARBINARY(1024)");
    TABLES.put(INVOCATIONS, """
        CREATE TABLE APIARY_INVOCATIONS (
          invocation_id VARCHAR(64) NOT NULL,
          graph VARCHAR(64) NOT NULL,
          request VARBINARY(524288) NOT NULL,
          frontend VARCHAR(64) NOT NULL,
          status VARCHAR(8) NOT NULL,
          result VARBINARY(1048576),
          started_at TIMESTAMP NOT NULL,
          finished_at TIMESTAMP,
          PRIMARY KEY (invocation_id)
        );
        PARTITION TABLE APIARY_INVOCATIONS ON COLUMN invocation_id;
        CREATE INDEX APIARY_INVOCATIONS_BY_FRONTEND ON APIARY_INVOCATIONS (frontend, status);
        CREATE INDEX APIARY_INVOCATIONS_BY_FINISH ON APIARY_INVOCATIONS (finished_at);""");
    TABLES.put(FRONTENDS, """
        CREATE TABLE APIARY_FRONTENDS (
          frontend VARCHAR(64) NOT NULL,
          endpoint VARCHAR(256) NOT NULL,
          lease_expires_ms BIGINT NOT NULL,
          PRIMARY KEY (frontend)
        );""");
    PROCEDURES.put(BEGIN_INVOCATION, "CREATE PROCEDURE " + BEGIN_INVOCATION
        + " PARTITION ON TABLE APIARY_INVOCATIONS COLUMN invocation_id PARAMETER 0 AS INSERT INTO APIARY_INVOCATIONS "
        + "(invocation_id, graph, request, frontend, status, started_at) VALUES (?, ?, ?, ?, 'RUNNING', NOW);");
    PROCEDURES.put(GET_INVOCATION, "CREATE PROCEDURE " + GET_INVOCATION
        + " PARTITION ON TABLE APIARY_INVOCATIONS COLUMN invocation_id PARAMETER 0 AS SELECT invocation_id, graph, "
        + "request, frontend, status, result FROM APIARY_INVOCATIONS WHERE invocation_id = ?;");
    PROCEDURES.put(FINISH_INVOCATION, "CREATE PROCEDURE " + FINISH_INVOCATION
        + " PARTITION ON TABLE APIARY_INVOCATIONS COLUMN invocation_id PARAMETER 2 AS UPDATE APIARY_INVOCATIONS "
        + "SET status = ?, result = ?, finished_at = NOW WHERE invocation_id = ?;");
    PROCEDURES.put(CLAIM_INVOCATION, "CREATE PROCEDURE " + CLAIM_INVOCATION
        + " PARTITION ON TABLE APIARY_INVOCATIONS COLUMN invocation_id PARAMETER 1 AS UPDATE APIARY_INVOCATIONS "
        + "SET frontend = ? WHERE invocation_id = ? AND status = 'RUNNING';");
  }

  private static void recordedTable(String name, String keyType) {
    TABLES.put(name, "CREATE TABLE " + name + " (\n"
        + "  pkey " + keyType + " NOT NULL,\n"
        + "  invocation_id VARCHAR(64) NOT NULL,\n"
        + "  function_name VARCHAR(64) NOT NULL,\n"
        + "  outputs VARBINARY(1048576) NOT NULL,\n"
        + "  recorded_at TIMESTAMP NOT NULL,\n"
        + "  PRIMARY KEY (pkey, invocation_id, function_name)\n"
        + ");\n"
        + "PARTITION TABLE " + name + " ON COLUMN pkey;\n"
        + "CREATE INDEX " + name + "_BY_TIME ON " + name + " (recorded_at);");
  }

  private SystemSchema() {}

  /** The table that holds recorded outputs of functions with this key type ({@code null}: global functions). */
  public static String recordedTable(PartitionKeyType keyType) {
    if (keyType == null) {
      return RECORDED_VARCHAR;
    }
    return switch (keyType) {
      case BIGINT, INTEGER, SMALLINT, TINYINT -> RECORDED_INTEGER;
      case VARCHAR -> RECORDED_VARCHAR;
      case VARBINARY -> RECORDED_VARBINARY;
    };
  }

  /** Every recorded-outputs table. */
  public static Set<String> recordedTables() {
    return Set.of(RECORDED_INTEGER, RECORDED_VARCHAR, RECORDED_VARBINARY);
  }

  /** The query a recorded function runs first: its outputs from an earlier execution, if there was one. */
  public static String findRecordedSql(String table) {
    return "SELECT outputs FROM " + table + " WHERE pkey = ? AND invocation_id = ? AND function_name = ?;";
  }

  /** The insert a recorded function runs last, in its own transaction. */
  public static String recordSql(String table) {
    return "INSERT INTO " + table + " (pkey, invocation_id, function_name, outputs, recorded_at) VALUES (?, ?, ?, ?, ?);";
  }

  /** Creates the system tables and procedures the database does not have yet. */
  public static synchronized void ensure(ApiaryDatabase db) {
    Set<String> tables = tables(db);
    StringBuilder missing = new StringBuilder();
    TABLES.forEach((name, ddl) -> {
      if (!tables.contains(name)) {
        missing.append(ddl).append('\n');
      }
    });
    Set<String> procedures = procedures(db);
    PROCEDURES.forEach((name, ddl) -> {
      if (!procedures.contains(name)) {
        missing.append(ddl).append('\n');
      }
    });
    if (missing.length() == 0) {
      return;
    }
    db.loadSchema(missing.toString());
    db.callAdmin("recording the system schema version", "@AdHoc",
        "UPSERT INTO " + VERSION_TABLE + " VALUES (" + VERSION + ")");
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
