package org.apiary.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apiary.DatabaseException;
import org.apiary.compiler.CompiledApplication;
import org.apiary.compiler.CompiledFunction;
import org.apiary.compiler.FunctionCompiler;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.ClusterConfig;
import org.apiary.database.DatabaseConfig;
import org.apiary.database.DatabaseUsers;
import org.apiary.database.LocalCluster;
import org.apiary.testapp.TestApp;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.voltdb.VoltTable;

/**
 * Databases holding Apiary's system tables as earlier releases wrote them are migrated to the current version in
 * place, keeping their rows; a database newer than this code is refused; two processes ensuring the schema at once
 * both succeed. Runs one VoltDB server process of its own (the shared test database already has the current
 * version) and empties it before each test. The old schemas are written out here, as those releases created them.
 */
class SystemSchemaMigrationTest {
  private static LocalCluster cluster;
  /** The administrator's connection. */
  private static ApiaryDatabase db;
  private static DatabaseUsers users;

  @BeforeAll
  static void start() {
    users = DatabaseUsers.generate();
    cluster = LocalCluster.start(ClusterConfig.of(1, 2, 0).withUsers(users)
        .withStartTimeout(Duration.ofSeconds(120)));
    db = ApiaryDatabase.open(cluster.config());
  }

  @AfterAll
  static void stop() {
    if (db != null) {
      db.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  /** Drops every procedure and table, so each test starts from an empty database. */
  @BeforeEach
  void empty() {
    StringBuilder ddl = new StringBuilder();
    for (String p : SystemSchema.procedures(db)) {
      if (p.contains(".")) {
        continue; // a table's default procedure (T.insert), dropped with its table
      }
      ddl.append("DROP PROCEDURE ").append(p).append(";\n");
    }
    for (String t : SystemSchema.tables(db)) {
      ddl.append("DROP TABLE ").append(t).append(";\n");
    }
    if (ddl.length() > 0) {
      db.loadSchema(ddl.toString());
    }
  }

  private static final String[][] RECORDED = {{"INTEGER", "BIGINT"}, {"VARCHAR", "VARCHAR(1024)"},
      {"VARBINARY", "VARBINARY(1024)"}};

  private static final String COMMON_TABLES = """
      CREATE TABLE APIARY_SCHEMA_VERSION (version INTEGER NOT NULL, PRIMARY KEY (version));
      CREATE TABLE APIARY_FUNCTIONS (name VARCHAR(64) NOT NULL, kind VARCHAR(8) NOT NULL, key_type VARCHAR(16),
        partition_table VARCHAR(128), partition_column VARCHAR(128), has_writes TINYINT NOT NULL,
        function_class VARCHAR(1024) NOT NULL, procedure_class VARCHAR(1024) NOT NULL, deployed_at TIMESTAMP NOT NULL,
        PRIMARY KEY (name));
      CREATE TABLE APIARY_GRAPHS (name VARCHAR(64) NOT NULL, version INTEGER NOT NULL,
        definition VARBINARY(1048576) NOT NULL, registered_at TIMESTAMP NOT NULL, PRIMARY KEY (name, version));
      CREATE TABLE APIARY_INVOCATIONS (invocation_id VARCHAR(64) NOT NULL, graph VARCHAR(64) NOT NULL,
        graph_version INTEGER NOT NULL, request VARBINARY(524288) NOT NULL, frontend VARCHAR(64) NOT NULL,
        status VARCHAR(8) NOT NULL, attempts INTEGER NOT NULL, result VARBINARY(1048576), started_at TIMESTAMP NOT NULL,
        finished_at TIMESTAMP, PRIMARY KEY (invocation_id));
      PARTITION TABLE APIARY_INVOCATIONS ON COLUMN invocation_id;
      CREATE INDEX APIARY_INVOCATIONS_BY_FRONTEND ON APIARY_INVOCATIONS (frontend, status);
      CREATE INDEX APIARY_INVOCATIONS_BY_FINISH ON APIARY_INVOCATIONS (finished_at);
      CREATE TABLE APIARY_FRONTENDS (frontend VARCHAR(64) NOT NULL, endpoint VARCHAR(256) NOT NULL,
        lease_expires_ms BIGINT NOT NULL, PRIMARY KEY (frontend));
      PARTITION TABLE APIARY_FRONTENDS ON COLUMN frontend;
      CREATE PROCEDURE ApiaryGetInvocation PARTITION ON TABLE APIARY_INVOCATIONS COLUMN invocation_id PARAMETER 0 AS
        SELECT invocation_id, graph, graph_version, request, frontend, status, attempts, result FROM APIARY_INVOCATIONS
        WHERE invocation_id = ?;
      CREATE PROCEDURE ApiaryClaimInvocation PARTITION ON TABLE APIARY_INVOCATIONS COLUMN invocation_id PARAMETER 2 AS
        UPDATE APIARY_INVOCATIONS SET frontend = ?, graph_version = ?, attempts = attempts + 1
        WHERE invocation_id = ? AND status = 'RUNNING';
      CREATE PROCEDURE ApiaryRenewLease PARTITION ON TABLE APIARY_FRONTENDS COLUMN frontend PARAMETER 0 AS
        UPSERT INTO APIARY_FRONTENDS (frontend, endpoint, lease_expires_ms)
        VALUES (?, ?, SINCE_EPOCH(MILLISECOND, NOW) + ?);
      CREATE PROCEDURE ApiaryExpireLease PARTITION ON TABLE APIARY_FRONTENDS COLUMN frontend PARAMETER 0 AS
        DELETE FROM APIARY_FRONTENDS WHERE frontend = ? AND lease_expires_ms < SINCE_EPOCH(MILLISECOND, NOW);
      """;

  /**
   * Version 3 (commit 13fe415): recorded-output tables keyed by partition key first, without a request hash; the
   * per-invocation begin and finish procedures that version 4 replaced by InvocationLogBatch.
   */
  private static String version3() {
    StringBuilder ddl = new StringBuilder(COMMON_TABLES);
    ddl.append("""
        CREATE PROCEDURE ApiaryBeginInvocation PARTITION ON TABLE APIARY_INVOCATIONS COLUMN invocation_id PARAMETER 0
          AS INSERT INTO APIARY_INVOCATIONS (invocation_id, graph, graph_version, request, frontend, status, attempts,
          started_at) VALUES (?, ?, ?, ?, ?, 'RUNNING', 1, NOW);
        CREATE PROCEDURE ApiaryFinishInvocation PARTITION ON TABLE APIARY_INVOCATIONS COLUMN invocation_id PARAMETER 2
          AS UPDATE APIARY_INVOCATIONS SET status = ?, result = ?, finished_at = NOW WHERE invocation_id = ?
          AND status = 'RUNNING';
        """);
    for (String[] t : RECORDED) {
      String name = "APIARY_RECORDED_" + t[0];
      ddl.append("CREATE TABLE ").append(name).append(" (pkey ").append(t[1]).append(" NOT NULL, invocation_id "
              + "VARCHAR(64) NOT NULL, function_name VARCHAR(64) NOT NULL, outputs VARBINARY(1048576) NOT NULL, "
              + "recorded_at TIMESTAMP NOT NULL, PRIMARY KEY (pkey, invocation_id, function_name));\n")
          .append("PARTITION TABLE ").append(name).append(" ON COLUMN pkey;\n")
          .append("CREATE INDEX ").append(name).append("_BY_TIME ON ").append(name).append(" (recorded_at);\n")
          .append("CREATE PROCEDURE ApiaryRecordFailure_").append(t[0]).append(" PARTITION ON TABLE ").append(name)
          .append(" COLUMN pkey PARAMETER 0 AS INSERT INTO ").append(name)
          .append(" (pkey, invocation_id, function_name, outputs, recorded_at) VALUES (?, ?, ?, ?, NOW);\n");
    }
    return ddl.toString();
  }

  /**
   * Version 4 as its releases wrote it: first (commit 11d3dac) with recorded outputs keyed by partition key first
   * and an index by invocation ID, later (5e78b7f) keyed by invocation ID first; later still (8280e8c) with
   * APIARY_CREDENTIALS, created as a missing table without a new version.
   */
  private static String version4(boolean keyedByIdFirst, boolean credentials) {
    StringBuilder ddl = new StringBuilder(COMMON_TABLES);
    ddl.append("CREATE PROCEDURE PARTITION ON TABLE APIARY_INVOCATIONS COLUMN invocation_id PARAMETER 0 FROM CLASS "
        + "org.apiary.runtime.procedure.InvocationLogBatch;\n");
    for (String[] t : RECORDED) {
      String name = "APIARY_RECORDED_" + t[0];
      ddl.append("CREATE TABLE ").append(name).append(" (pkey ").append(t[1]).append(" NOT NULL, invocation_id "
              + "VARCHAR(64) NOT NULL, function_name VARCHAR(64) NOT NULL, outputs VARBINARY(1048576) NOT NULL, "
              + "recorded_at TIMESTAMP NOT NULL, request_hash BIGINT, PRIMARY KEY ")
          .append(keyedByIdFirst ? "(invocation_id, pkey, function_name));\n" : "(pkey, invocation_id, function_name));\n")
          .append("PARTITION TABLE ").append(name).append(" ON COLUMN pkey;\n")
          .append("CREATE INDEX ").append(name).append("_BY_TIME ON ").append(name).append(" (recorded_at);\n");
      if (!keyedByIdFirst) {
        ddl.append("CREATE INDEX ").append(name).append("_BY_INVOCATION ON ").append(name).append(" (invocation_id);\n");
      }
      ddl.append("CREATE PROCEDURE ApiaryRecordFailure_").append(t[0]).append(" PARTITION ON TABLE ").append(name)
          .append(" COLUMN pkey PARAMETER 0 AS INSERT INTO ").append(name)
          .append(" (pkey, invocation_id, function_name, outputs, request_hash, recorded_at) VALUES (?, ?, ?, ?, ?, NOW);\n")
          .append("CREATE PROCEDURE ApiaryGetRecorded_").append(t[0]).append(" PARTITION ON TABLE ").append(name)
          .append(" COLUMN pkey PARAMETER 0 AS SELECT outputs FROM ").append(name)
          .append(" WHERE pkey = ? AND invocation_id = ? AND function_name = ?;\n")
          .append("CREATE PROCEDURE ApiaryFindOutcome_").append(t[0]).append(" AS SELECT function_name, outputs FROM ")
          .append(name).append(" WHERE invocation_id = ? AND request_hash IS NOT NULL;\n");
    }
    if (credentials) {
      ddl.append("CREATE TABLE APIARY_CREDENTIALS (key_id VARCHAR(32) NOT NULL, secret_sha256 VARBINARY(32) NOT NULL, "
          + "identity VARCHAR(128) NOT NULL, created_at TIMESTAMP NOT NULL, revoked_at TIMESTAMP, PRIMARY KEY (key_id));\n");
    }
    return ddl.toString();
  }

  /** Rows in the tables every version has, to check that a migration keeps them. */
  private static void someRows() {
    adHoc("INSERT INTO APIARY_FUNCTIONS VALUES ('f', 'local', 'BIGINT', 'T', 'K', 1, 'a.F', 'a.FProc', NOW)");
    adHoc("INSERT INTO APIARY_GRAPHS VALUES ('g', 1, x'7B7D', NOW)");
    adHoc("INSERT INTO APIARY_INVOCATIONS (invocation_id, graph, graph_version, request, frontend, status, attempts, "
        + "started_at) VALUES ('inv-1', 'g', 1, x'5B5D', 'fe', 'RUNNING', 1, NOW)");
    adHoc("INSERT INTO APIARY_RECORDED_INTEGER (pkey, invocation_id, function_name, outputs, recorded_at) "
        + "VALUES (4, 'old', 'f', x'5B5D', NOW)");
  }

  private static void assertRowsKept() {
    assertEquals(1, scalar("SELECT COUNT(*) FROM APIARY_FUNCTIONS WHERE name = 'f'"), "functions kept");
    assertEquals(1, scalar("SELECT COUNT(*) FROM APIARY_GRAPHS WHERE name = 'g' AND version = 1"), "graphs kept");
    assertEquals(1, scalar("SELECT COUNT(*) FROM APIARY_INVOCATIONS WHERE invocation_id = 'inv-1' "
        + "AND status = 'RUNNING'"), "the invocation log kept");
    assertEquals(1, scalar("SELECT COUNT(*) FROM APIARY_RECORDED_INTEGER WHERE invocation_id = 'old' "
        + "AND request_hash IS NULL"), "the recorded output kept");
  }

  /** What the latest version offers works: recording a failure with a hash, finding it by ID, credentials. */
  private static void assertLatestWorks() {
    assertEquals(SystemSchema.VERSION, scalar("SELECT MAX(version) FROM APIARY_SCHEMA_VERSION"));
    db.callAdmin("recording a failure with a request hash", SystemSchema.recordFailureProcedure(
        SystemSchema.RECORDED_INTEGER), 5L, "new", "f", new byte[] {'!'}, 42L);
    VoltTable found = db.callAdmin("finding an outcome by ID", SystemSchema.findOneTransactionOutcomeProcedure(
        SystemSchema.RECORDED_INTEGER), "new").getResults()[0];
    assertTrue(found.advanceRow(), "the new procedure finds a record by invocation ID");
    assertEquals("f", found.getString(0));
    adHoc("INSERT INTO APIARY_CREDENTIALS (key_id, secret_sha256, identity, created_at, revoked_at, roles, "
        + "expires_at) VALUES ('k2', x'00', 'bob', NOW, NULL, 'auditor', NOW)");
    assertFalse(SystemSchema.procedures(db).contains("RecordDenial"), "migration 14 drops migration 6's procedure");
    assertTrue(SystemSchema.procedures(db).containsAll(SystemSchema.FRONTEND_PROCEDURES),
        "a frontend's procedures are there");
    assertTrue(SystemSchema.tables(db).contains(SystemSchema.RETENTION_MINIMUM));
    assertFalse(SystemSchema.procedures(db).contains("ApiaryBeginInvocation"), "version 3's procedures are gone");
    assertTrue(SystemSchema.procedures(db).contains(SystemSchema.LOG_BATCH));
    VoltTable indexes = db.callAdmin("listing indexes", "@SystemCatalog", "INDEXINFO").getResults()[0];
    while (indexes.advanceRow()) {
      String index = indexes.getString("INDEX_NAME");
      assertFalse(index != null && index.toUpperCase(java.util.Locale.ROOT).endsWith("_BY_TIME"),
          "version 10 drops the recorded outputs' time index, found " + index);
    }
    assertFalse(SystemSchema.procedures(db).contains("ExpireRecordedInteger"), "version 8's sweep by time is gone");
    // Version 15: an invocation ID scoped by its caller's identity fits the log and every recorded-outputs table.
    String scoped = "c".repeat(128) + "/" + "i".repeat(64);
    assertEquals(SystemSchema.INVOCATION_ID_CHARS, scoped.length());
    adHoc("INSERT INTO APIARY_INVOCATIONS (invocation_id, graph, graph_version, request, frontend, status, attempts, "
        + "started_at) VALUES ('" + scoped + "', 'g', 1, x'5B5D', 'fe', 'DONE', 1, NOW)");
    assertEquals(1, scalar("SELECT COUNT(*) FROM APIARY_INVOCATIONS WHERE invocation_id = '" + scoped + "'"));
    adHoc("DELETE FROM APIARY_INVOCATIONS WHERE invocation_id = '" + scoped + "'");
    for (Object[] r : new Object[][] {{SystemSchema.RECORDED_INTEGER, 6L}, {SystemSchema.RECORDED_VARCHAR, "k"},
        {SystemSchema.RECORDED_VARBINARY, new byte[] {1}}}) {
      db.callAdmin("recording under a scoped ID", SystemSchema.recordFailureProcedure((String) r[0]), r[1], scoped,
          "f", new byte[] {'!'}, 43L);
      assertEquals(1, scalar("SELECT COUNT(*) FROM " + r[0] + " WHERE invocation_id = '" + scoped + "'"));
      adHoc("DELETE FROM " + r[0] + " WHERE invocation_id = '" + scoped + "'");
    }
    // Retention's sweep works on this table's layout (version 3's key starts with the partition key), up to the
    // fence (the administrator's procedure moves it anywhere).
    db.callAdmin("advancing the fence", SystemSchema.ADVANCE_RETENTION,
        new org.voltdb.types.TimestampType(System.currentTimeMillis() * 1000L + 3_600_000_000L));
    VoltTable step = db.callAdmin("sweeping", SystemSchema.sweepProcedure(SystemSchema.RECORDED_INTEGER), 5L,
        new org.voltdb.types.TimestampType(System.currentTimeMillis() * 1000L + 3_600_000_000L), "", 1L)
        .getResults()[0];
    assertTrue(step.advanceRow());
    long deleted = step.getLong(0);
    String after = step.getString(1);
    while (after != null) {
      step = db.callAdmin("sweeping", SystemSchema.sweepProcedure(SystemSchema.RECORDED_INTEGER), 5L,
          new org.voltdb.types.TimestampType(System.currentTimeMillis() * 1000L + 3_600_000_000L), after, 1L)
          .getResults()[0];
      step.advanceRow();
      deleted += step.getLong(0);
      after = step.getString(1);
    }
    assertEquals(0, scalar("SELECT COUNT(*) FROM APIARY_RECORDED_INTEGER WHERE invocation_id = 'new'"),
        "the sweep deleted the record (" + deleted + " deleted)");
  }

  @Test
  void version3IsMigratedInPlaceKeepingItsRecords() {
    db.loadSchema(version3());
    adHoc("INSERT INTO APIARY_SCHEMA_VERSION VALUES (3)");
    someRows();

    SystemSchema.ensure(db);

    assertRowsKept();
    assertLatestWorks();
    SystemSchema.ensure(db); // again: nothing left to do
    assertEquals(SystemSchema.VERSION, scalar("SELECT MAX(version) FROM APIARY_SCHEMA_VERSION"));
  }

  @Test
  void version4OfEveryReleaseIsMigrated() {
    for (boolean idFirst : new boolean[] {false, true}) {
      for (boolean credentials : new boolean[] {false, true}) {
        empty();
        db.loadSchema(version4(idFirst, credentials));
        adHoc("INSERT INTO APIARY_SCHEMA_VERSION VALUES (4)");
        someRows();
        if (credentials) {
          adHoc("INSERT INTO APIARY_CREDENTIALS (key_id, secret_sha256, identity, created_at, revoked_at) "
              + "VALUES ('k1', x'00', 'alice', NOW, NULL)");
        }

        SystemSchema.ensure(db);

        assertRowsKept();
        if (credentials) {
          assertEquals(1, scalar("SELECT COUNT(*) FROM APIARY_CREDENTIALS WHERE identity = 'alice' "
              + "AND roles IS NULL AND expires_at IS NULL"), "the credential created without a version is kept, "
              + "without roles and never expiring");
        }
        assertLatestWorks();
      }
    }
  }

  /**
   * Version 10 (the last before expiry): its keys, with roles, gain migration 11's expires_at column, NULL, so they
   * never expire.
   */
  @Test
  void version10CredentialsGainAnExpiryColumnAndNeverExpire() {
    SystemSchema.ensure(db, 10);
    assertFalse(SystemSchema.Catalog.read(db).hasColumn(SystemSchema.CREDENTIALS, "EXPIRES_AT"));
    adHoc("INSERT INTO APIARY_CREDENTIALS (key_id, secret_sha256, identity, created_at, revoked_at, roles) "
        + "VALUES ('k10', x'00', 'carol', NOW, NULL, 'nurse')");

    SystemSchema.ensure(db);

    assertEquals(1, scalar("SELECT COUNT(*) FROM APIARY_CREDENTIALS WHERE key_id = 'k10' AND roles = 'nurse' "
        + "AND expires_at IS NULL"), "the version-10 key is kept, never expiring");
    assertLatestWorks();
  }

  /**
   * Version 13 (issue 45, finding 6): the frontends' role had ALLPROC. Migrated, it may call the procedures a frontend
   * needs and the functions deployed before (their procedures, created without ALLOW then, are created again with it),
   * and no longer the administrator's, the unchecked denial recorder (dropped) or the fence's any-cutoff procedure.
   */
  @Test
  void version13GivesTheFrontendsRoleOnlyWhatAFrontendNeeds() {
    SystemSchema.ensure(db, 13);
    assertEquals(13, scalar("SELECT MAX(version) FROM APIARY_SCHEMA_VERSION"));
    // A function deployed by a version-13 release: its classes, its procedure without ALLOW, its row.
    db.loadSchema(TestApp.SCHEMA);
    CompiledApplication app = FunctionCompiler.compile(TestApp.SCHEMA, TestApp.FUNCTIONS, f -> TestApp.RECORDABLE);
    db.callAdmin("loading classes", "@UpdateClasses", app.jar(), null);
    CompiledFunction increment = app.function("increment").orElseThrow();
    db.loadSchema(increment.createProcedureDdl().replace(" ALLOW " + DatabaseUsers.FRONTEND_ROLE, "") + ";");
    db.callAdmin("recording the function", "StoreFunction", increment.name(), increment.kind().name(),
        increment.keyType().name(), increment.partitionTable(), increment.partitionColumn(), (byte) 1,
        increment.functionClass(), increment.procedureClass());
    try (ApiaryDatabase frontend = ApiaryDatabase.open(DatabaseConfig.external(
        cluster.clientAddresses().toArray(String[]::new)).withLogin(users.frontend()))) {
      assertFalse(refused(frontend, "StoreGraph"), "version 13's role calls every procedure");

      SystemSchema.ensure(db);

      assertEquals(SystemSchema.VERSION, scalar("SELECT MAX(version) FROM APIARY_SCHEMA_VERSION"));
      assertFalse(refused(frontend, increment.name()), "a function deployed before may no longer be called");
      for (String p : SystemSchema.FRONTEND_PROCEDURES) {
        assertFalse(refused(frontend, p), "a frontend may not call " + p);
      }
      for (String p : List.of("StoreGraph", "StoreFunction", SystemSchema.ADVANCE_RETENTION,
          SystemSchema.SET_MINIMUM_RETENTION, "ApiaryRecordFailure_INTEGER", "ApiaryRecordFailureBy_VARCHAR",
          "ApiaryGetInvocation")) {
        assertTrue(refused(frontend, p), "a frontend may call " + p);
      }
      assertFalse(SystemSchema.procedures(db).contains("RecordDenial"), "the unchecked denial recorder is gone");
      assertEquals(1, scalar("SELECT COUNT(*) FROM APIARY_FUNCTIONS WHERE name = 'increment'"));
    }
    assertLatestWorks();
  }

  /** Whether the frontend's user is refused {@code procedure} for want of permission (called without parameters). */
  private static boolean refused(ApiaryDatabase as, String procedure) {
    try {
      as.callAdmin("probing " + procedure, procedure);
      return false;
    } catch (DatabaseException e) {
      return e.getMessage().toLowerCase(java.util.Locale.ROOT).contains("permission");
    }
  }

  /**
   * A new database gets every migration in one catalog update (most of a second each in VoltDB, whatever it holds),
   * and that leaves exactly the catalog that applying them one at a time, as a database that lived through every
   * release got them, leaves: the same tables, columns with their types, sizes and nullability, indexes, procedures
   * with their partitioning and parameters.
   */
  @Test
  void allMigrationsAtOnceLeaveWhatOneAtATimeLeaves() {
    for (int v = 4; v <= SystemSchema.VERSION; v++) {
      SystemSchema.ensure(db, v);
    }
    Map<String, List<String>> oneAtATime = catalogDescription();
    empty();
    long updatesBefore = SystemSchema.CATALOG_UPDATES.get();

    SystemSchema.ensure(db);

    assertEquals(1, SystemSchema.CATALOG_UPDATES.get() - updatesBefore, "catalog updates for a new database");
    assertEquals(oneAtATime, catalogDescription());
    assertEquals(SystemSchema.VERSION, scalar("SELECT MAX(version) FROM APIARY_SCHEMA_VERSION"));
    assertEquals(SystemSchema.VERSION - 3, scalar("SELECT COUNT(*) FROM APIARY_SCHEMA_VERSION"),
        "every version from 4 on is recorded");
    assertLatestWorks();
  }

  /** Every row of the catalog's tables, columns, indexes, procedures and their parameters, as text, sorted. */
  private static Map<String, List<String>> catalogDescription() {
    Map<String, List<String>> description = new java.util.TreeMap<>();
    for (String selector : List.of("TABLES", "COLUMNS", "INDEXINFO", "PROCEDURES", "PROCEDURECOLUMNS",
        "PRIMARYKEYS")) {
      VoltTable t = db.callAdmin("describing the catalog", "@SystemCatalog", selector).getResults()[0];
      List<String> rows = new ArrayList<>();
      while (t.advanceRow()) {
        StringBuilder row = new StringBuilder();
        for (int c = 0; c < t.getColumnCount(); c++) {
          row.append(t.getColumnName(c)).append('=').append(t.get(c, t.getColumnType(c))).append(' ');
        }
        rows.add(row.toString());
      }
      java.util.Collections.sort(rows);
      description.put(selector, rows);
    }
    return description;
  }

  @Test
  void anEmptyDatabaseGetsTheLatestVersionAndEnsureIsIdempotent() {
    SystemSchema.ensure(db);
    assertLatestWorks();
    SystemSchema.ensure(db);
    assertEquals(SystemSchema.VERSION, scalar("SELECT MAX(version) FROM APIARY_SCHEMA_VERSION"));
  }

  @Test
  void aNewerVersionIsRefusedNamingBothVersions() {
    SystemSchema.ensure(db);
    int newer = SystemSchema.VERSION + 1;
    adHoc("INSERT INTO APIARY_SCHEMA_VERSION VALUES (" + newer + ")");

    DatabaseException e = assertThrows(DatabaseException.class, () -> SystemSchema.ensure(db));

    assertTrue(e.getMessage().contains("version " + newer), e.getMessage());
    assertTrue(e.getMessage().contains("version " + SystemSchema.VERSION), e.getMessage());
    assertTrue(e.getMessage().contains("newer"), e.getMessage());
  }

  @Test
  void versionsBeforeThreeAreRefusedSayingWhatToDo() {
    adHoc("CREATE TABLE APIARY_SCHEMA_VERSION (version INTEGER NOT NULL, PRIMARY KEY (version))");
    adHoc("INSERT INTO APIARY_SCHEMA_VERSION VALUES (2)");

    DatabaseException e = assertThrows(DatabaseException.class, () -> SystemSchema.ensure(db));

    assertTrue(e.getMessage().contains("version 2"), e.getMessage());
    assertTrue(e.getMessage().contains("drop"), e.getMessage());
  }

  /** What the migrations rely on: one @AdHoc call with several DDL statements is applied entirely or not at all. */
  @Test
  void aFailingDdlBatchChangesNothing() {
    assertThrows(RuntimeException.class, () -> db.loadSchema(
        "CREATE TABLE PROBE_A (x INTEGER NOT NULL);\nCREATE TABLE PROBE_A (y INTEGER NOT NULL);"));
    assertFalse(SystemSchema.tables(db).contains("PROBE_A"), "the first statement of the failed batch was undone");
  }

  /** Two processes starting at once, each with its own connection: both succeed and agree on the version. */
  @Test
  void concurrentEnsureCallsBothSucceed() throws Exception {
    for (String from : List.of("empty", "version 4")) {
      empty();
      if (from.equals("version 4")) {
        db.loadSchema(version4(true, false));
        adHoc("INSERT INTO APIARY_SCHEMA_VERSION VALUES (4)");
      }
      int callers = 3;
      List<ApiaryDatabase> connections = new ArrayList<>();
      ExecutorService pool = Executors.newFixedThreadPool(callers);
      try {
        CyclicBarrier together = new CyclicBarrier(callers);
        List<Future<?>> calls = new ArrayList<>();
        for (int i = 0; i < callers; i++) {
          ApiaryDatabase c = ApiaryDatabase.open(cluster.config());
          connections.add(c);
          calls.add(pool.submit(() -> {
            together.await(30, TimeUnit.SECONDS);
            SystemSchema.ensure(c);
            return null;
          }));
        }
        for (Future<?> call : calls) {
          call.get(120, TimeUnit.SECONDS); // throws if that ensure failed
        }
        // No late process ran migration 9 (whose role step cannot tell it was applied) again over version 14's role.
        try (ApiaryDatabase frontend = ApiaryDatabase.open(DatabaseConfig.external(
            cluster.clientAddresses().toArray(String[]::new)).withLogin(users.frontend()))) {
          assertTrue(refused(frontend, "StoreGraph"), "the frontends' role has ALLPROC again");
        }
      } finally {
        pool.shutdownNow();
        for (ApiaryDatabase c : connections) {
          c.close();
        }
      }
      assertLatestWorks();
    }
  }

  private static void adHoc(String sql) {
    db.callAdmin("test setup", "@AdHoc", sql);
  }

  private static long scalar(String sql) {
    VoltTable t = db.callAdmin("reading", "@AdHoc", sql).getResults()[0];
    t.advanceRow();
    return t.getLong(0);
  }
}
