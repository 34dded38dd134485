package org.apiary.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apiary.AccessPolicy;
import org.apiary.ApiaryFunction;
import org.apiary.Application;
import org.apiary.DatabaseException;
import org.apiary.Graph;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.InvocationRequest;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.ClusterConfig;
import org.apiary.database.DatabaseConfig;
import org.apiary.database.DatabaseUsers;
import org.apiary.database.LocalCluster;
import org.apiary.frontend.holes.HBump;
import org.apiary.frontend.holes.HolesApp;
import org.apiary.runtime.SystemSchema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.voltdb.SystemProcedureCatalog;
import org.voltdb.VoltTable;
import org.voltdb.types.TimestampType;

/**
 * Issue 45, finding 6: the frontends' VoltDB user ({@value DatabaseUsers#FRONTEND_USER}) may call only the procedures
 * a frontend needs, and none of those can move retention ahead of the database's clock, delete records retention
 * has not fenced, or write an audit row that no check produced. Every procedure in the catalog (Apiary's, a user
 * function's, the tables' default ones) and every VoltDB system procedure is tried as that user. One database server
 * process with VoltDB's security on, shared by the tests here.
 */
@Tag("database")
class FrontendPrivilegesTest {
  /** Apiary's procedures a frontend calls (besides the user functions'); every other one is refused to it. */
  static final Set<String> FRONTEND_PROCEDURES = Set.of(
      "InvocationLogBatch", "ApiaryReadInvocation", "ClaimInvocation", "RenewLease", "ExpireLease",
      "ReassignInvocations", "AdvanceRetentionByClock", "FencedSweepInteger", "FencedSweepVarchar",
      "FencedSweepVarbinary", "FencedExpireInvocations", "RecordFailureInteger", "RecordFailureVarchar",
      "RecordFailureVarbinary", "ApiaryGetRecorded_INTEGER", "ApiaryGetRecorded_VARCHAR",
      "ApiaryGetRecorded_VARBINARY", "ApiaryFindOutcomeOf_INTEGER", "ApiaryFindOutcomeOf_VARCHAR",
      "ApiaryFindOutcomeOf_VARBINARY", "CheckAndRecordDenial", "CancelInvocation",
      "ApiaryInvocationStatus", "EnqueueItem", "ClaimQueueItems", "FinishQueueItem", "ReleaseQueueItems",
      "ApiaryFindQueueItem", "ExpireQueueItems", "EnqueueItemAt", "ClaimDueQueueItems", "TickSchedule",
      // version 20 (priorities, partitioned queues, takeover and cancel of queue items)
      "EnqueueRankedItem", "ClaimRankedQueueItems", "AdoptQueueItems", "CancelQueueItem",
      "ApiaryFindQueueItemOutcome",
      // version 22 (whether a frontend still holds a queue item it claimed; an enqueue refused past its deadline)
      "ConfirmQueueClaim", "EnqueueItemBefore");

  /**
   * VoltDB's system procedures that VoltDB lets every user call, whatever the user's roles (their catalog entry is
   * read-only; see VoltDB's {@code InvocationSysprocPermissionPolicy}): Apiary cannot refuse them. Listed so that a
   * VoltDB upgrade that adds one fails this test until someone has looked at it.
   */
  static final Set<String> VOLTDB_OPEN_TO_EVERY_USER = Set.of(
      "@AdHoc_RO_MP", "@AdHoc_RO_SP", "@Explain", "@ExplainCatalog", "@ExplainJSON", "@ExplainProc", "@ExplainView",
      "@GetHashinatorConfig", "@GetPartitionKeys", "@MigratePartitionLeader", "@Ping", "@QueryStats", "@Statistics",
      "@Subscribe", "@SystemCatalog", "@SystemInformation", "@Trace");

  /** The ad hoc entry points: SQLREAD lets the role call them, and each statement is then checked (tried below). */
  private static final Set<String> AD_HOC = Set.of("@AdHoc", "@AdHocLarge", "@AdHocSpForTest");

  private static final long TEN_YEARS_MS = 10L * 365 * 24 * 3600 * 1000;

  /** h_bump guarded by a role: a clerk's key is refused, a nurse's allowed, an anonymous call refused. */
  static final Graph GUARDED = Graph.named("h_guarded")
      .addLocalFunction("h_bump", HBump.class)
      .addEdge(Graph.SOURCE, "h_bump", ApiaryFunction.SOURCE, Long.class)
      .addEdge("h_bump", Graph.SINK, "bumped")
      .withAccess(AccessPolicy.roles("nurse"));

  private static DatabaseUsers users;
  private static LocalCluster cluster;
  private static ApiaryDatabase admin;
  private static ApiaryDatabase asFrontend;

  @BeforeAll
  static void start() {
    users = DatabaseUsers.generate();
    cluster = LocalCluster.start(ClusterConfig.of(1, 2, 0).withUsers(users).withStartTimeout(Duration.ofSeconds(120)));
    admin = ApiaryDatabase.open(cluster.config());
    Registrar.register(admin, Application.of(HolesApp.SCHEMA, HolesApp.ONE_BUMP, HolesApp.TWO_WRITERS, GUARDED));
    asFrontend = ApiaryDatabase.open(DatabaseConfig.external(cluster.clientAddresses().toArray(String[]::new))
        .withLogin(users.frontend()));
  }

  @AfterAll
  static void stop() {
    if (asFrontend != null) {
      asFrontend.close();
    }
    if (admin != null) {
      admin.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  // ---------------------------------------------------------------- what may be called at all

  @Test
  void everyProcedureInTheCatalogIsRefusedToTheFrontendUnlessAFrontendNeedsIt() {
    Set<String> functions = new TreeSet<>();
    VoltTable f = admin.callAdmin("listing functions", "@AdHoc", "SELECT name FROM " + SystemSchema.FUNCTIONS)
        .getResults()[0];
    while (f.advanceRow()) {
      functions.add(f.getString(0));
    }
    assertEquals(Set.of("h_bump", "h_tally"), functions);

    Set<String> procedures = new TreeSet<>(SystemSchema.procedures(admin));
    assertTrue(procedures.size() > FRONTEND_PROCEDURES.size() + functions.size(), "the catalog lists " + procedures);
    TreeMap<String, String> wronglyAllowed = new TreeMap<>();
    TreeMap<String, String> wronglyRefused = new TreeMap<>();
    for (String p : procedures) {
      // Called without parameters: an allowed procedure fails on its parameter count and runs nothing.
      String outcome = outcome(p);
      boolean needed = FRONTEND_PROCEDURES.contains(p) || functions.contains(p)
          || p.endsWith(".select"); // a table's default read procedure: reads, which the role's SQLREAD grants
      if (needed && refusedForPermission(outcome)) {
        wronglyRefused.put(p, outcome);
      } else if (!needed && !refusedForPermission(outcome)) {
        wronglyAllowed.put(p, outcome);
      }
    }
    assertEquals(new TreeMap<>(), wronglyAllowed, "procedures the frontend's user may call but no frontend needs");
    assertEquals(new TreeMap<>(), wronglyRefused, "procedures a frontend needs but its user may not call");
    for (String needed : FRONTEND_PROCEDURES) {
      assertTrue(procedures.contains(needed), needed + " is not in the catalog");
    }
    assertEquals(FRONTEND_PROCEDURES, SystemSchema.FRONTEND_PROCEDURES, "the documented list differs");
  }

  @Test
  void everyVoltDbSystemProcedureThatChangesAnythingIsRefused() {
    TreeMap<String, String> wronglyAllowed = new TreeMap<>();
    Set<String> openToAll = new TreeSet<>();
    for (var e : new TreeMap<>(SystemProcedureCatalog.listing).entrySet()) {
      String outcome = outcome(e.getKey());
      if (refusedForPermission(outcome)) {
        continue;
      }
      if (e.getValue().readOnly && VOLTDB_OPEN_TO_EVERY_USER.contains(e.getKey())) {
        openToAll.add(e.getKey());
      } else if (!AD_HOC.contains(e.getKey())) { // ad hoc SQL is tried statement by statement below
        wronglyAllowed.put(e.getKey(), outcome);
      }
    }
    assertEquals(new TreeMap<>(), wronglyAllowed, "system procedures the frontend's user may call");
    assertEquals(VOLTDB_OPEN_TO_EVERY_USER, openToAll, "VoltDB's system procedures open to every user changed");

    // The ones an attacker tries first, with plausible parameters.
    for (Object[] call : List.of(
        new Object[] {"@AdHoc", "INSERT INTO h_counters (k, v) VALUES (99, 1)"},
        new Object[] {"@AdHocLarge", "INSERT INTO h_counters (k, v) VALUES (99, 1)"},
        new Object[] {"@AdHocSpForTest", "INSERT INTO h_counters (k, v) VALUES (99, 1)", 99L},
        new Object[] {"@AdHoc", "DELETE FROM " + SystemSchema.INVOCATIONS},
        new Object[] {"@AdHoc", "UPSERT INTO " + SystemSchema.RETENTION + " VALUES (0, NOW)"},
        new Object[] {"@AdHoc", "UPDATE " + SystemSchema.CREDENTIALS + " SET revoked_at = NULL"},
        new Object[] {"@AdHoc", "CREATE TABLE sneaky (k BIGINT NOT NULL)"},
        new Object[] {"@AdHoc", "CREATE PROCEDURE sneaky AS DELETE FROM h_counters"},
        new Object[] {"@AdHoc", "DROP ROLE " + DatabaseUsers.FRONTEND_ROLE + " IF EXISTS; CREATE ROLE "
            + DatabaseUsers.FRONTEND_ROLE + " WITH ALLPROC, SQLREAD"},
        new Object[] {"@AdHoc", "CREATE ROLE sneaky WITH ADMIN"},
        new Object[] {SystemSchema.CREDENTIALS + ".insert", "k", new byte[32], "mallory", null, null, "admin", null},
        new Object[] {SystemSchema.RETENTION + ".upsert", (byte) 0, new TimestampType(Long.MAX_VALUE / 2)},
        new Object[] {"@UpdateClasses", new byte[] {1, 2, 3}, null},
        new Object[] {"@UpdateApplicationCatalog", null, "<deployment/>"},
        new Object[] {"@SnapshotSave", "/tmp", "sneaky", (byte) 1},
        new Object[] {"@SnapshotRestore", "/tmp", "sneaky"},
        new Object[] {"@SnapshotDelete", new String[] {"/tmp"}, new String[] {"sneaky"}},
        new Object[] {"@UpdateLogging", "<configuration/>"},
        new Object[] {"@Pause"}, new Object[] {"@Resume"}, new Object[] {"@Quiesce"}, new Object[] {"@Promote"},
        new Object[] {"@StopNode", 0}, new Object[] {"@PrepareShutdown"}, new Object[] {"@Shutdown"})) {
      String name = (String) call[0];
      Object[] params = java.util.Arrays.copyOfRange(call, 1, call.length);
      String outcome = outcome(name, params);
      assertTrue(refusedForPermission(outcome), name + " " + java.util.Arrays.deepToString(params) + ": " + outcome);
    }
    assertEquals(0L, scalar("SELECT COUNT(*) FROM h_counters WHERE k = 99"));

    // What the open ones reveal: the deployment names the users, never their passwords.
    VoltTable deployment = asFrontend.callAdmin("reading the deployment", "@SystemInformation", "DEPLOYMENT")
        .getResults()[0];
    String all = deployment.toFormattedString();
    assertTrue(all.contains(DatabaseUsers.ADMIN_USER), all);
    assertFalse(all.contains(users.adminPassword()) || all.contains(users.frontendPassword()), "a password shows");
  }

  // ---------------------------------------------------------------- what the allowed writers can do

  /**
   * The old fence procedure (any cutoff, even ten years ahead: every logged graph then failed for good) is refused;
   * the frontend's advances by the database's clock, at least one second behind it, never past a running
   * invocation's start and never back; the sweeps delete nothing the fence does not cover.
   */
  @Test
  void retentionCannotBeMovedAheadOfTheDatabaseClockNorDeleteRecentRecords() {
    String hostile = outcome(SystemSchema.ADVANCE_RETENTION,
        new TimestampType((System.currentTimeMillis() + TEN_YEARS_MS) * 1000L));
    assertTrue(refusedForPermission(hostile), "a fence ten years ahead: " + hostile);

    try (FrontendServer frontend = FrontendServer.start(asFrontend, FrontendConfig.defaults()
        .withLease(Duration.ofSeconds(2), Duration.ofMillis(400)));
         ApiaryClient client = ApiaryClient.connect(ClientConfig.of(frontend.endpoint())
             .withAttemptTimeout(Duration.ofSeconds(10)))) {
      client.invoke(InvocationRequest.of("h_oneBump", 71L, 1L));
      InvocationRequest logged = InvocationRequest.of("h_twoWriters", 72L, 1L);
      client.invoke(logged);
      long before = System.currentTimeMillis();
      for (long retention : new long[] {-TEN_YEARS_MS, Long.MIN_VALUE, 0L, 1L}) {
        long fenceMicros = asFrontend.callAdmin("advancing", "AdvanceRetentionByClock", retention)
            .getResults()[0].asScalarLong();
        assertTrue(fenceMicros / 1000L <= System.currentTimeMillis() - 1000L, "retention " + retention
            + " put the fence at " + fenceMicros + " us");
      }
      long fence = scalar("SELECT SINCE_EPOCH(MILLISECOND, cutoff) FROM " + SystemSchema.RETENTION);
      assertTrue(fence <= before, "the fence is at " + fence + " ms, after the call began at " + before);

      // The administrator's minimum holds against a frontend's shorter retention; the frontend may not change it.
      assertTrue(refusedForPermission(outcome(SystemSchema.SET_MINIMUM_RETENTION, 0L)));
      admin.callAdmin("fence back", "@AdHoc", "DELETE FROM " + SystemSchema.RETENTION);
      InvocationLog.setMinimumRetention(admin, Duration.ofHours(1));
      try {
        long atMinimum = asFrontend.callAdmin("advancing", "AdvanceRetentionByClock", 1L).getResults()[0]
            .asScalarLong() / 1000L;
        assertTrue(atMinimum <= System.currentTimeMillis() - 3_600_000L, "the fence passed the minimum: " + atMinimum);
        assertTrue(atMinimum >= before - 3_700_000L, "the fence lags the minimum by more than a minute and a "
            + "second: " + atMinimum);
      } finally {
        InvocationLog.setMinimumRetention(admin, Duration.ZERO);
      }

      // Sweeps and expiry asked to delete everything up to ten years ahead delete nothing recent.
      TimestampType ahead = new TimestampType((System.currentTimeMillis() + TEN_YEARS_MS) * 1000L);
      for (String table : SystemSchema.recordedTables()) {
        for (Object key : partitionKeys(SystemSchema.partitionKeyType(table))) {
          asFrontend.callAdmin("sweeping", SystemSchema.sweepProcedure(table), key, ahead, "", 100_000L);
        }
      }
      for (Object key : partitionKeys("STRING")) {
        asFrontend.callAdmin("expiring", SystemSchema.expireProcedure(SystemSchema.INVOCATIONS), key, ahead,
            100_000L);
      }
      assertEquals(1L, scalar("SELECT COUNT(*) FROM " + SystemSchema.RECORDED_INTEGER + " WHERE pkey = 71"),
          "a sweep deleted a record newer than the fence");
      assertEquals(1L, scalar("SELECT COUNT(*) FROM " + SystemSchema.INVOCATIONS + " WHERE invocation_id = '"
          + logged.id() + "'"), "expiry deleted an invocation that ended after the fence");

      // Graphs still run, logged or not, and the frontend's own retention pass works under its user.
      assertEquals(List.of(2L), client.invoke(InvocationRequest.of("h_oneBump", 71L, 1L)).values(Long.class));
      client.invoke(InvocationRequest.of("h_twoWriters", 72L, 1L));
      frontend.deleteExpiredRecords();
    }
  }

  /**
   * The old denial procedure (it recorded whatever it was given) is refused; the frontend's records a denial only
   * where the database itself finds the presented key valid and the graph's policy refusing it.
   */
  @Test
  void aDenialIsRecordedOnlyWhereTheDatabaseFindsTheKeyValidAndThePolicyRefusing() {
    String forged = outcome("RecordDenial", "inv-forged", "denial-forged", "alice", "nurse", "h_guarded",
        "marketing", "alice asked for every record");
    assertTrue(refusedForPermission(forged) || forged.contains("RecordDenial was not found"),
        "a forged denial row: " + forged);

    Credentials.Issued clerk = Credentials.create(admin, "pv-clerk", Set.of("clerk"));
    Credentials.Issued nurse = Credentials.create(admin, "pv-nurse", Set.of("nurse"));
    Credentials.Issued revoked = Credentials.create(admin, "pv-revoked", Set.of("clerk"));
    Credentials.revoke(admin, revoked.keyId());
    Credentials.Parsed clerkKey = Credentials.parse(clerk.apiKey()).orElseThrow();
    Credentials.Parsed nurseKey = Credentials.parse(nurse.apiKey()).orElseThrow();
    Credentials.Parsed revokedKey = Credentials.parse(revoked.apiKey()).orElseThrow();
    long version = scalar("SELECT MAX(version) FROM " + SystemSchema.GRAPHS + " WHERE name = 'h_guarded'");

    // A real refusal: the clerk's key, which the policy (nurses only) refuses; anonymous, refused for want of roles.
    asFrontend.callAdmin("recording", "CheckAndRecordDenial", "inv-1", "d-1", clerkKey.keyId(), clerkKey.secret(),
        "h_guarded", version, null);
    asFrontend.callAdmin("recording", "CheckAndRecordDenial", "inv-2", "d-2", null, null, "h_guarded", version,
        "treatment");

    String wrongSecret = outcome("CheckAndRecordDenial", "inv-3", "d-3", clerkKey.keyId(),
        nurseKey.secret(), "h_guarded", version, null);
    assertTrue(wrongSecret.contains("no valid API key"), wrongSecret);
    String hashForSecret = outcome("CheckAndRecordDenial", "inv-4", "d-4", clerkKey.keyId(),
        java.util.HexFormat.of().formatHex(Credentials.sha256(clerkKey.secret())), "h_guarded", version, null);
    assertTrue(hashForSecret.contains("no valid API key"), hashForSecret);
    String revokedOne = outcome("CheckAndRecordDenial", "inv-5", "d-5", revokedKey.keyId(), revokedKey.secret(),
        "h_guarded", version, null);
    assertTrue(revokedOne.contains("no valid API key"), revokedOne);
    String allowed = outcome("CheckAndRecordDenial", "inv-6", "d-6", nurseKey.keyId(), nurseKey.secret(),
        "h_guarded", version, null);
    assertTrue(allowed.contains("allows"), allowed);
    String openGraph = outcome("CheckAndRecordDenial", "inv-7", "d-7", null, null, "h_oneBump", 1L, "marketing");
    assertTrue(openGraph.contains("allows"), openGraph);
    String noSuchGraph = outcome("CheckAndRecordDenial", "inv-8", "d-8", clerkKey.keyId(), clerkKey.secret(),
        "h_guarded", version + 1, null);
    assertTrue(noSuchGraph.contains("no graph"), noSuchGraph);
  }

  // ---------------------------------------------------------------- helpers

  /** "ok" if {@code procedure} ran for the frontend's user, else VoltDB's answer. */
  private static String outcome(String procedure, Object... params) {
    try {
      asFrontend.callAdmin("probing " + procedure, procedure, params);
      return "ok";
    } catch (DatabaseException e) {
      return e.getMessage();
    }
  }

  private static boolean refusedForPermission(String outcome) {
    return outcome.toLowerCase(Locale.ROOT).contains("permission");
  }

  private static long scalar(String sql) {
    VoltTable t = admin.callAdmin("reading", "@AdHoc", sql).getResults()[0];
    assertTrue(t.advanceRow(), sql);
    return t.getLong(0);
  }

  private static List<Object> partitionKeys(String type) {
    VoltTable keys = asFrontend.callAdmin("partition keys", "@GetPartitionKeys", type).getResults()[0];
    List<Object> result = new ArrayList<>();
    while (keys.advanceRow()) {
      result.add(keys.get(1, keys.getColumnType(1)));
    }
    assertFalse(result.isEmpty());
    return result;
  }
}
