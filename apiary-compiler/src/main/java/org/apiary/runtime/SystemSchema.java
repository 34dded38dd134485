package org.apiary.runtime;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
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
  public static final int VERSION = 4;
  public static final String VERSION_TABLE = "APIARY_SCHEMA_VERSION";
  public static final String FUNCTIONS = "APIARY_FUNCTIONS";
  public static final String GRAPHS = "APIARY_GRAPHS";
  public static final String INVOCATIONS = "APIARY_INVOCATIONS";
  public static final String FRONTENDS = "APIARY_FRONTENDS";
  /** API keys (their SHA-256 hashes, never the keys) and the identities they belong to; replicated, rarely written. */
  public static final String CREDENTIALS = "APIARY_CREDENTIALS";
  /** Recorded outputs of functions keyed by BIGINT, INTEGER, SMALLINT or TINYINT (VoltDB hashes them alike). */
  public static final String RECORDED_INTEGER = "APIARY_RECORDED_INTEGER";
  /** Recorded outputs of functions keyed by VARCHAR, and of global functions (keyed by invocation ID). */
  public static final String RECORDED_VARCHAR = "APIARY_RECORDED_VARCHAR";
  /** Recorded outputs of functions keyed by VARBINARY. */
  public static final String RECORDED_VARBINARY = "APIARY_RECORDED_VARBINARY";
  /** The longest VARCHAR or VARBINARY partition key under which outputs can be recorded, in bytes. */
  public static final int RECORDED_KEY_BYTES = 1024;
  /** The most bytes of encoded outputs one function execution may return (and record). */
  public static final int MAX_OUTPUTS_BYTES = 1048576;
  /** The most bytes of an invocation's stored outcome (the reply for its clients). */
  public static final int MAX_RESULT_BYTES = 1048576;

  /** Reads one invocation's log row. */
  public static final String GET_INVOCATION = "ApiaryGetInvocation";
  /** Hands a running invocation to a frontend for its next attempt, under a graph version. */
  public static final String CLAIM_INVOCATION = "ApiaryClaimInvocation";
  /** Begins invocations and stores outcomes, many of one partition per transaction ({@code InvocationLogBatch}). */
  public static final String LOG_BATCH = "InvocationLogBatch";
  /** Extends (or creates) a frontend's lease: a single-partition write. */
  public static final String RENEW_LEASE = "ApiaryRenewLease";
  /** Deletes a frontend's lease if it has expired. */
  public static final String EXPIRE_LEASE = "ApiaryExpireLease";
  /** Records a call refused by a graph's access policy in provenance ({@code RecordDenial}). */
  public static final String RECORD_DENIAL = "RecordDenial";

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
          version INTEGER NOT NULL,
          definition VARBINARY(1048576) NOT NULL,
          registered_at TIMESTAMP NOT NULL,
          PRIMARY KEY (name, version)
        );""");
    recordedTable(RECORDED_INTEGER, "BIGINT");
    recordedTable(RECORDED_VARCHAR, "VARCHAR(1024)");
    recordedTable(RECORDED_VARBINARY, "VARBINARY(1024)");
    TABLES.put(INVOCATIONS, """
        CREATE TABLE APIARY_INVOCATIONS (
          invocation_id VARCHAR(64) NOT NULL,
          graph VARCHAR(64) NOT NULL,
          graph_version INTEGER NOT NULL,
          request VARBINARY(524288) NOT NULL,
          frontend VARCHAR(64) NOT NULL,
          status VARCHAR(8) NOT NULL,
          attempts INTEGER NOT NULL,
          result VARBINARY(1048576),
          started_at TIMESTAMP NOT NULL,
          finished_at TIMESTAMP,
          PRIMARY KEY (invocation_id)
        );
        PARTITION TABLE APIARY_INVOCATIONS ON COLUMN invocation_id;
        CREATE INDEX APIARY_INVOCATIONS_BY_FRONTEND ON APIARY_INVOCATIONS (frontend, status);
        CREATE INDEX APIARY_INVOCATIONS_BY_FINISH ON APIARY_INVOCATIONS (finished_at);""");
    TABLES.put(CREDENTIALS, """
        CREATE TABLE APIARY_CREDENTIALS (
          key_id VARCHAR(32) NOT NULL,
          secret_sha256 VARBINARY(32) NOT NULL,
          identity VARCHAR(128) NOT NULL,
          created_at TIMESTAMP NOT NULL,
          revoked_at TIMESTAMP,
          roles VARCHAR(1024),
          PRIMARY KEY (key_id)
        );""");
    TABLES.put(FRONTENDS, """
        CREATE TABLE APIARY_FRONTENDS (
          frontend VARCHAR(64) NOT NULL,
          endpoint VARCHAR(256) NOT NULL,
          lease_expires_ms BIGINT NOT NULL,
          PRIMARY KEY (frontend)
        );
        PARTITION TABLE APIARY_FRONTENDS ON COLUMN frontend;""");
    PROCEDURES.put(GET_INVOCATION, "CREATE PROCEDURE " + GET_INVOCATION
        + " PARTITION ON TABLE APIARY_INVOCATIONS COLUMN invocation_id PARAMETER 0 AS SELECT invocation_id, graph, "
        + "graph_version, request, frontend, status, attempts, result FROM APIARY_INVOCATIONS WHERE invocation_id = ?;");
    PROCEDURES.put(CLAIM_INVOCATION, "CREATE PROCEDURE " + CLAIM_INVOCATION
        + " PARTITION ON TABLE APIARY_INVOCATIONS COLUMN invocation_id PARAMETER 2 AS UPDATE APIARY_INVOCATIONS "
        + "SET frontend = ?, graph_version = ?, attempts = attempts + 1 WHERE invocation_id = ? AND status = 'RUNNING';");
    PROCEDURES.put(LOG_BATCH, "CREATE PROCEDURE PARTITION ON TABLE APIARY_INVOCATIONS COLUMN invocation_id PARAMETER 0 "
        + "FROM CLASS " + org.apiary.runtime.procedure.InvocationLogBatch.class.getName() + ";");
    PROCEDURES.put(RENEW_LEASE, "CREATE PROCEDURE " + RENEW_LEASE
        + " PARTITION ON TABLE APIARY_FRONTENDS COLUMN frontend PARAMETER 0 AS UPSERT INTO APIARY_FRONTENDS "
        + "(frontend, endpoint, lease_expires_ms) VALUES (?, ?, SINCE_EPOCH(MILLISECOND, NOW) + ?);");
    PROCEDURES.put(EXPIRE_LEASE, "CREATE PROCEDURE " + EXPIRE_LEASE
        + " PARTITION ON TABLE APIARY_FRONTENDS COLUMN frontend PARAMETER 0 AS DELETE FROM APIARY_FRONTENDS "
        + "WHERE frontend = ? AND lease_expires_ms < SINCE_EPOCH(MILLISECOND, NOW);");
    PROCEDURES.put(RECORD_DENIAL, "CREATE PROCEDURE PARTITION ON TABLE APIARY_INVOCATIONS COLUMN invocation_id "
        + "PARAMETER 0 FROM CLASS " + org.apiary.runtime.procedure.RecordDenial.class.getName() + ";");
    for (String table : List.of(RECORDED_INTEGER, RECORDED_VARCHAR, RECORDED_VARBINARY)) {
      PROCEDURES.put(recordFailureProcedure(table), "CREATE PROCEDURE " + recordFailureProcedure(table)
          + " PARTITION ON TABLE " + table + " COLUMN pkey PARAMETER 0 AS INSERT INTO " + table
          + " (pkey, invocation_id, function_name, outputs, request_hash, recorded_at) VALUES (?, ?, ?, ?, ?, NOW);");
      PROCEDURES.put(getRecordedProcedure(table), "CREATE PROCEDURE " + getRecordedProcedure(table)
          + " PARTITION ON TABLE " + table + " COLUMN pkey PARAMETER 0 AS SELECT outputs FROM " + table
          + " WHERE pkey = ? AND invocation_id = ? AND function_name = ?;");
      PROCEDURES.put(findOneTransactionOutcomeProcedure(table), "CREATE PROCEDURE "
          + findOneTransactionOutcomeProcedure(table) + " AS SELECT function_name, outputs FROM " + table
          + " WHERE invocation_id = ? AND request_hash IS NOT NULL;");
    }
  }

  private static void recordedTable(String name, String keyType) {
    TABLES.put(name, "CREATE TABLE " + name + " (\n"
        + "  pkey " + keyType + " NOT NULL,\n"
        + "  invocation_id VARCHAR(64) NOT NULL,\n"
        + "  function_name VARCHAR(64) NOT NULL,\n"
        + "  outputs VARBINARY(1048576) NOT NULL,\n"
        + "  recorded_at TIMESTAMP NOT NULL,\n"
        + "  request_hash BIGINT,\n"
        // The ID first, so a lookup by ID alone (the outcome of a one-transaction invocation) uses this index.
        + "  PRIMARY KEY (invocation_id, pkey, function_name)\n"
        + ");\n"
        + "PARTITION TABLE " + name + " ON COLUMN pkey;\n"
        + "CREATE INDEX " + name + "_BY_TIME ON " + name + " (recorded_at);");
  }

  /**
   * Finds an invocation's records without its partition key (result lookups of one-transaction invocations) in a
   * table created by version 3, whose primary key starts with the partition key.
   */
  private static String byInvocationIndex(String table) {
    return "CREATE INDEX " + table + "_BY_INVOCATION ON " + table + " (invocation_id);";
  }

  /** What version 3 lacks: the request hash of one-transaction invocations, and the index to find them by ID. */
  private static String migrationFrom3() {
    StringBuilder ddl = new StringBuilder();
    for (String table : List.of(RECORDED_INTEGER, RECORDED_VARCHAR, RECORDED_VARBINARY)) {
      ddl.append("ALTER TABLE ").append(table).append(" ADD COLUMN request_hash BIGINT;\n")
          .append(byInvocationIndex(table)).append('\n')
          .append("DROP PROCEDURE ").append(recordFailureProcedure(table)).append(";\n");
    }
    return ddl.toString();
  }

  private SystemSchema() {}

  /**
   * The procedure that records a function execution's failure in {@code table} (where its outputs would go), so a
   * re-execution replays the failure; fails with a constraint violation if the execution recorded something first.
   */
  public static String recordFailureProcedure(String table) {
    return "ApiaryRecordFailure_" + table.substring("APIARY_RECORDED_".length());
  }

  /** The single-partition procedure that reads one record of {@code table}: (partition key, invocation, function). */
  public static String getRecordedProcedure(String table) {
    return "ApiaryGetRecorded_" + table.substring("APIARY_RECORDED_".length());
  }

  /**
   * The multi-partition procedure that finds the outcome of a one-transaction invocation in {@code table} by its ID
   * alone (such records carry a request hash): function name and recorded outputs.
   */
  public static String findOneTransactionOutcomeProcedure(String table) {
    return "ApiaryFindOutcome_" + table.substring("APIARY_RECORDED_".length());
  }

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

  /**
   * The query a recorded function runs first: its outputs from an earlier execution, if there was one, and the
   * request hash that execution was recorded under.
   */
  public static String findRecordedSql(String table) {
    return "SELECT outputs, request_hash FROM " + table + " WHERE pkey = ? AND invocation_id = ? AND function_name = ?;";
  }

  /** The insert a recorded function runs last, in its own transaction. */
  public static String recordSql(String table) {
    return "INSERT INTO " + table + " (pkey, invocation_id, function_name, outputs, recorded_at, request_hash) "
        + "VALUES (?, ?, ?, ?, ?, ?);";
  }

  /** Creates the system tables and procedures the database does not have yet. */
  public static synchronized void ensure(ApiaryDatabase db) {
    Set<String> tables = tables(db);
    if (tables.contains(VERSION_TABLE)) {
      VoltTable v = db.callAdmin("reading the system schema version", "@AdHoc",
          "SELECT MAX(version) FROM " + VERSION_TABLE).getResults()[0];
      long found = v.advanceRow() ? v.getLong(0) : VERSION;
      if (!v.wasNull() && found == 3) {
        db.loadSchema(migrationFrom3()); // the record-failure procedures are created again below, with the hash
        db.callAdmin("recording the system schema version", "@AdHoc",
            "UPSERT INTO " + VERSION_TABLE + " VALUES (" + VERSION + ")");
      } else if (!v.wasNull() && found < VERSION) {
        throw new org.apiary.DatabaseException("Apiary's system tables in this database are version " + found
            + "; this release needs version " + VERSION + " (versioned graphs, outcome compare-and-set) and cannot "
            + "migrate them: use a new database, or drop the APIARY_* tables and procedures and register again");
      }
    }
    StringBuilder missing = new StringBuilder();
    if (tables.contains(CREDENTIALS) && !columns(db, CREDENTIALS).contains("ROLES")) {
      // Access control (issue 14) added the credentials' roles; a key stored before it has none.
      missing.append("ALTER TABLE ").append(CREDENTIALS).append(" ADD COLUMN roles VARCHAR(1024);\n");
    }
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

  /** Names of the columns of one table, upper-case. */
  static Set<String> columns(ApiaryDatabase db, String table) {
    VoltTable t = db.callAdmin("listing the columns of " + table, "@SystemCatalog", "COLUMNS").getResults()[0];
    Set<String> names = new HashSet<>();
    while (t.advanceRow()) {
      if (t.getString("TABLE_NAME").equalsIgnoreCase(table)) {
        names.add(t.getString("COLUMN_NAME").toUpperCase(Locale.ROOT));
      }
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
