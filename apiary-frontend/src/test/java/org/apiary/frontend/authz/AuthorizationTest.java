package org.apiary.frontend.authz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apiary.AccessDeniedException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.InvocationRequest;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.Credentials;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.FrontendServer;
import org.apiary.provenance.ProvenanceQueries;
import org.apiary.provenance.ProvenanceTable;
import org.apiary.runtime.provenance.ServerProvenance;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.voltdb.VoltTable;

/**
 * Issue 14, item 2: graphs declare the roles that may call them and the purposes they may be called for; a call that
 * lacks either is refused before anything runs, and the refusal reaches provenance (DeniedCalls) through the server's
 * spooler, where the audit queries find it with the purposes of allowed calls.
 */
@DatabaseTest
class AuthorizationTest {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final FrontendConfig SECURED = FrontendConfig.defaults()
      .withLease(Duration.ofSeconds(2), Duration.ofMillis(400)).withCredentialsRequired(true);

  private ApiaryDatabase db;
  private FrontendServer frontend;

  @BeforeEach
  void setUp(TestDatabase database) {
    db = database.database();
    // The items table's write capture starts the database's provenance export, and with it the spooler.
    org.apiary.frontend.provenance.ItemsApp.registerOnce(db);
    AuthzApp.registerOnce(db);
  }

  @AfterEach
  void tearDown() {
    if (frontend != null) {
      frontend.close();
    }
  }

  /** A client with this key; the frontend starts with the first client, after the test's keys exist. */
  private ApiaryClient client(Credentials.Issued key, String purpose) {
    if (frontend == null) {
      frontend = FrontendServer.start(db, SECURED);
    }
    ClientConfig config = ClientConfig.of(frontend.endpoint()).withAttemptTimeout(Duration.ofSeconds(5))
        .withCredential(key.apiKey());
    return ApiaryClient.connect(purpose == null ? config : config.withPurpose(purpose));
  }

  private long hits(long id) {
    VoltTable t = db.callAdmin("reading a record", "@AdHoc", "SELECT hits FROM az_records WHERE id = ?", id)
        .getResults()[0];
    return t.advanceRow() ? t.getLong(0) : 0L;
  }

  /**
   * Where credentials are required, an invocation's result is its caller's (and admins'): another key's
   * {@code result(id)} is answered as for an unknown ID (issue 45, finding 5; see ResultOwnershipTest), and an admin
   * names the invocation as the caller's identity and its ID, for an invocation kept as one recorded transaction and
   * for a logged one alike.
   */
  @Test
  void onlyTheCallerOrAnAdminFetchesAResultByItsId() {
    Credentials.Issued owner = Credentials.create(db, "az-owner-9", Set.of("nurse"));
    Credentials.Issued other = Credentials.create(db, "az-other-9", Set.of("nurse"));
    Credentials.Issued admin = Credentials.create(db, "az-admin-9", Set.of(Credentials.ADMIN_ROLE));
    InvocationRequest oneTransaction = InvocationRequest.of("az_touch", 119L, "x");
    InvocationRequest logged = InvocationRequest.of("az_touch_read", 119L, "x");
    try (ApiaryClient mine = client(owner, "treatment"); ApiaryClient theirs = client(other, "treatment");
         ApiaryClient asAdmin = client(admin, null)) {
      assertEquals(List.of(1L), mine.invoke(oneTransaction).values(Long.class));
      assertEquals(List.of(2L), mine.invoke(logged).values(Long.class));
      for (InvocationRequest r : List.of(oneTransaction, logged)) {
        long expected = r == oneTransaction ? 1L : 2L;
        assertEquals(List.of(expected), mine.result(r.id()).orElseThrow().values(Long.class), r.graph());
        org.apiary.InvalidRequestException unknown = assertThrows(org.apiary.InvalidRequestException.class,
            () -> theirs.result(r.id()), "another key fetched the result of " + r.graph());
        assertTrue(unknown.getMessage().contains("no invocation with ID " + r.id() + " is known"),
            unknown.getMessage());
        assertEquals(List.of(expected), asAdmin.result(Credentials.invocationId("az-owner-9", r.id())).orElseThrow()
            .values(Long.class), r.graph());
      }
    }
  }

  @Test
  void aCallerWithoutTheRoleIsRefusedAndNothingRuns() {
    Credentials.Issued clerk = Credentials.create(db, "az-clerk", Set.of("clerk"));
    Credentials.Issued nobody = Credentials.create(db, "az-nobody");
    try (ApiaryClient asClerk = client(clerk, "treatment"); ApiaryClient asNobody = client(nobody, "treatment")) {
      AccessDeniedException e = assertThrows(AccessDeniedException.class, () -> asClerk.invoke("az_touch", 101L, "x"));
      assertTrue(e.getMessage().contains("nurse") && e.getMessage().contains("az_touch")
          && e.getMessage().contains("az-clerk"), e.getMessage());
      AccessDeniedException none = assertThrows(AccessDeniedException.class,
          () -> asNobody.invoke("az_touch", 101L, "x"));
      assertTrue(none.getMessage().contains("no roles"), none.getMessage());
    }
    assertEquals(0, hits(101), "a refused call ran");
  }

  @Test
  void aPurposeTheGraphDoesNotAllowIsRefusedAndNothingRuns() {
    Credentials.Issued nurse = Credentials.create(db, "az-nurse-1", Set.of("nurse"));
    try (ApiaryClient marketing = client(nurse, "marketing"); ApiaryClient silent = client(nurse, null)) {
      AccessDeniedException e = assertThrows(AccessDeniedException.class,
          () -> marketing.invoke("az_touch", 102L, "x"));
      assertTrue(e.getMessage().contains("marketing") && e.getMessage().contains("treatment"), e.getMessage());
      AccessDeniedException none = assertThrows(AccessDeniedException.class, () -> silent.invoke("az_touch", 102L, "x"));
      assertTrue(none.getMessage().contains("states no purpose"), none.getMessage());
    }
    assertEquals(0, hits(102), "a refused call ran");
  }

  @Test
  void anAdminKeyMayCallAnythingAndAnAllowedCallRuns() {
    Credentials.Issued admin = Credentials.create(db, "az-admin", Set.of(Credentials.ADMIN_ROLE));
    Credentials.Issued nurse = Credentials.create(db, "az-nurse-2", Set.of("nurse", "clerk"));
    try (ApiaryClient asAdmin = client(admin, null); ApiaryClient asNurse = client(nurse, "treatment")) {
      assertEquals(List.of(1L), asAdmin.invoke("az_touch", 103L, "x").values(Long.class));
      assertEquals(List.of(2L), asNurse.invoke("az_touch", 103L, "x").values(Long.class));
    }
    assertEquals(2, hits(103));
    assertTrue(Credentials.list(db).stream().anyMatch(s -> s.identity().equals("az-nurse-2")
        && s.roles().equals(Set.of("nurse", "clerk"))));
  }

  /**
   * A database from before roles (schema version 5, issue 14's item 1) gains the column by migration 6, and its keys
   * have no roles: they may call open graphs and graphs that name no roles, but not az_touch.
   */
  @Test
  void aCredentialsTableFromBeforeRolesGainsTheColumnAndItsKeysHaveNone() {
    Credentials.Issued early = Credentials.create(db, "az-early", Set.of("nurse"));
    // Version 14's denial check and key store use the column: they go too, and come back with migration 14.
    db.callAdmin("dropping the roles column", "@AdHoc", "DROP PROCEDURE "
        + org.apiary.runtime.SystemSchema.CHECK_AND_RECORD_DENIAL + ";\nDROP PROCEDURE "
        + org.apiary.runtime.SystemSchema.STORE_CREDENTIAL + ";\nALTER TABLE "
        + org.apiary.runtime.SystemSchema.CREDENTIALS + " DROP COLUMN roles;");
    db.callAdmin("going back to version 5", "@AdHoc", "DELETE FROM APIARY_SCHEMA_VERSION WHERE version > 5");
    org.apiary.runtime.SystemSchema.ensure(db);
    assertTrue(Credentials.list(db).stream().anyMatch(c -> c.identity().equals("az-early") && c.roles().isEmpty()));
    try (ApiaryClient asEarly = client(early, "treatment")) {
      AccessDeniedException e = assertThrows(AccessDeniedException.class, () -> asEarly.invoke("az_touch", 108L, "x"));
      assertTrue(e.getMessage().contains("no roles"), e.getMessage());
    }
    assertEquals(0, hits(108), "a refused call ran");
  }

  /** A function's policy holds in every graph of the application that contains it, even an open one. */
  @Test
  void aFunctionsPolicyHoldsInAnOpenGraphThatUsesIt() {
    Credentials.Issued clerk = Credentials.create(db, "az-clerk-4", Set.of("clerk"));
    Credentials.Issued nurse = Credentials.create(db, "az-nurse-5", Set.of("nurse"));
    try (ApiaryClient asClerk = client(clerk, "billing"); ApiaryClient asNurse = client(nurse, "billing")) {
      AccessDeniedException e = assertThrows(AccessDeniedException.class,
          () -> asClerk.invoke("az_summary", 109L, "x"));
      assertTrue(e.getMessage().contains("function 'az_readRecord' of graph 'az_summary' may be called by the roles "
          + "[nurse]"), e.getMessage());
      assertEquals(List.of(-1L), asNurse.invoke("az_summary", 109L, "x").values(Long.class));
    }
    org.apiary.RegistrationException conflict = assertThrows(org.apiary.RegistrationException.class,
        () -> org.apiary.Application.of(AuthzApp.SCHEMA, AuthzApp.READ, org.apiary.Graph.named("az_other")
            .addLocalFunction("az_readRecord", AuthzApp.ReadRecord.class)
            .addEdge(org.apiary.Graph.SOURCE, "az_readRecord", "source", String.class)
            .withFunctionAccess("az_readRecord", org.apiary.AccessPolicy.roles("doctor"))).functions());
    assertTrue(conflict.getMessage().contains("declare one"), conflict.getMessage());
  }

  /** An open graph's stored definition has no policy, so graphs registered before policies keep their versions. */
  @Test
  void anOpenGraphIsStoredAsBeforePolicies() {
    org.apiary.frontend.RegisteredGraph open = new org.apiary.frontend.RegisteredGraph("g",
        org.apiary.RecordingMode.SELECTIVE, List.of(), List.of(), org.apiary.AccessPolicy.OPEN);
    String json = new String(org.apiary.internal.Json.bytes(open), java.nio.charset.StandardCharsets.UTF_8);
    assertFalse(json.contains("access"), json);
    org.apiary.frontend.RegisteredGraph read = org.apiary.internal.Json.read(json.getBytes(
        java.nio.charset.StandardCharsets.UTF_8), org.apiary.frontend.RegisteredGraph.class, "graph");
    assertEquals(org.apiary.AccessPolicy.OPEN, read.policy());
    org.apiary.frontend.RegisteredGraph stored = org.apiary.internal.Json.read(org.apiary.internal.Json.bytes(
        new org.apiary.frontend.RegisteredGraph("g", org.apiary.RecordingMode.SELECTIVE, List.of(), List.of(),
            AuthzApp.TOUCH.access())), org.apiary.frontend.RegisteredGraph.class, "graph");
    assertEquals(AuthzApp.TOUCH.access(), stored.policy());
  }

  /** A frontend without credentials still enforces policies: its callers have no roles, and purposes count. */
  @Test
  void aFrontendWithoutCredentialsRefusesGraphsThatNameRoles() {
    try (FrontendServer open = FrontendServer.start(db, FrontendConfig.defaults()
        .withLease(Duration.ofSeconds(2), Duration.ofMillis(400)));
         ApiaryClient anonymous = ApiaryClient.connect(ClientConfig.of(open.endpoint())
             .withAttemptTimeout(Duration.ofSeconds(5)).withPurpose("treatment"))) {
      AccessDeniedException e = assertThrows(AccessDeniedException.class, () -> anonymous.invoke("az_touch", 107L, "x"));
      assertTrue(e.getMessage().contains("an anonymous caller has no roles"), e.getMessage());
    }
    assertEquals(0, hits(107), "a refused call ran");
  }

  /** Roles come from the key alone: a request that claims roles on the wire gets none of them. */
  @Test
  void rolesAClientClaimsOnTheWireAreIgnored() {
    Credentials.Issued clerk = Credentials.create(db, "az-clerk-3", Set.of("clerk"));
    client(clerk, "treatment").close(); // starts the frontend after the key exists
    byte[] frame = new org.apiary.internal.wire.WireRequest(org.apiary.internal.wire.WireRequest.INVOKE,
        "az-claims-admin", "az_touch", org.apiary.internal.Json.tree(106L),
        List.of(org.apiary.internal.Json.tree("x")), "az-clerk-3", clerk.apiKey(), "treatment", "admin,nurse", null)
        .toBytes();
    try (org.zeromq.ZContext ctx = new org.zeromq.ZContext()) {
      org.zeromq.ZMQ.Socket s = ctx.createSocket(org.zeromq.SocketType.DEALER);
      s.setHandshakeIvl(org.apiary.internal.wire.SocketLoop.HANDSHAKE_MILLIS); // see SocketLoop.HANDSHAKE_MILLIS
      s.setReceiveTimeOut(10_000);
      s.setSendTimeOut(10_000);
      s.setImmediate(true);
      s.connect(frontend.endpoint());
      assertTrue(s.send(frame, 0), "could not send within 10 s");
      byte[] answer = s.recv();
      assertTrue(answer != null, "no reply within 10 s");
      org.apiary.internal.wire.WireReply reply = org.apiary.internal.wire.WireReply.fromBytes(answer);
      assertEquals(org.apiary.internal.wire.WireReply.FORBIDDEN, reply.error(), reply.message());
      assertTrue(reply.message().contains("[clerk]"), reply.message());
    }
    assertEquals(0, hits(106), "a refused call ran");
  }

  /**
   * Issue 45, finding 7: 29,500 refused calls with one key wrote 29,500 audit rows (and two log lines each). Past a
   * per-key and per-address allowance, refusals are counted, not recorded one by one; another key's refusal is
   * recorded again once the address's allowance refilled.
   */
  @Test
  void aFloodOfRefusalsWritesABoundedNumberOfAuditRows() throws Exception {
    Instant from = Instant.now().minusSeconds(1);
    Credentials.Issued flood = Credentials.create(db, "az-flood", Set.of("clerk"));
    Credentials.Issued other = Credentials.create(db, "az-flood-other", Set.of("clerk"));
    int calls = 300;
    long started = System.nanoTime();
    try (ApiaryClient flooding = client(flood, "treatment")) {
      for (int i = 0; i < calls; i++) {
        assertThrows(AccessDeniedException.class, () -> flooding.invoke("az_touch", 106L, "x"));
      }
    }
    long floodSeconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started) + 1;
    // The flood spent this address's allowance too (every client here is on loopback): wait for one token.
    Thread.sleep(1000 / FrontendServer.REFUSALS_PER_SECOND + 500);
    InvocationRequest last = InvocationRequest.of("az_touch", 106L, "x");
    try (ApiaryClient another = client(other, "treatment")) {
      assertThrows(AccessDeniedException.class, () -> another.invoke(last));
    }
    // The denials are recorded in order on one thread: once the other key's is there, the flood's are too.
    List<ProvenanceQueries.DeniedCall> denied = await(q -> q.deniedCalls(from, Instant.now().plusSeconds(60)),
        d -> d.stream().anyMatch(c -> c.invocationId().equals(last.id())));
    long rows = denied.stream().filter(c -> "az-flood".equals(c.caller())).count();
    assertTrue(rows >= 1, "no refusal of the flood was recorded");
    assertTrue(rows <= FrontendServer.REFUSALS_BURST + floodSeconds * FrontendServer.REFUSALS_PER_SECOND,
        rows + " audit rows for " + calls + " refusals in " + floodSeconds + " s");
    assertEquals(0, hits(106), "a refused call ran");
  }

  @Test
  void aRefusalIsRecordedInProvenanceAndTheAuditQueryListsIt() throws Exception {
    Instant from = Instant.now().minusSeconds(1);
    Credentials.Issued clerk = Credentials.create(db, "az-clerk-2", Set.of("clerk"));
    Credentials.Issued nurse = Credentials.create(db, "az-nurse-3", Set.of("nurse"));
    InvocationRequest byClerk = InvocationRequest.of("az_touch", 104L, "x");
    InvocationRequest forMarketing = InvocationRequest.of("az_read", 104L, "x");
    try (ApiaryClient asClerk = client(clerk, "treatment"); ApiaryClient marketing = client(nurse, "marketing")) {
      assertThrows(AccessDeniedException.class, () -> asClerk.invoke(byClerk));
      assertThrows(AccessDeniedException.class, () -> marketing.invoke(forMarketing));
    }
    List<ProvenanceQueries.DeniedCall> denied = await(q -> q.deniedCalls(from, Instant.now().plusSeconds(60)),
        d -> d.stream().filter(c -> c.invocationId().equals(byClerk.id())
            || c.invocationId().equals(forMarketing.id())).count() == 2);
    ProvenanceQueries.DeniedCall role = denied.stream().filter(c -> c.invocationId().equals(byClerk.id()))
        .findFirst().orElseThrow();
    assertEquals("az-clerk-2", role.caller());
    assertEquals("az_touch", role.graph());
    assertEquals("treatment", role.purpose());
    assertTrue(role.reason().contains("nurse"), role.reason());
    assertEquals("clerk", role.callerRoles());
    ProvenanceQueries.DeniedCall purpose = denied.stream().filter(c -> c.invocationId().equals(forMarketing.id()))
        .findFirst().orElseThrow();
    assertEquals("az-nurse-3", purpose.caller());
    assertEquals("marketing", purpose.purpose());
    assertFalse(purpose.deniedAt().isBefore(from));
    List<ProvenanceQueries.DeniedCall> before = query(q -> q.deniedCalls(from.minusSeconds(3600), from));
    assertTrue(before.stream().noneMatch(c -> c.invocationId().equals(byClerk.id())), "outside the period: " + before);
  }

  @Test
  void anAllowedCallRecordsItsPurposeAndTheAuditQueriesSayWhoReadWhatForWhich() throws Exception {
    Credentials.Issued nurse = Credentials.create(db, "az-nurse-4", Set.of("nurse"));
    Credentials.Issued admin = Credentials.create(db, "az-admin-2", Set.of(Credentials.ADMIN_ROLE));
    InvocationRequest create = InvocationRequest.of("az_touch", 105L, "x"); // reads no row: the record is new
    InvocationRequest treat = InvocationRequest.of("az_touch", 105L, "x");
    InvocationRequest bill = InvocationRequest.of("az_read", 105L, "x").withPurpose("billing"); // this call's own
    InvocationRequest snoop = InvocationRequest.of("az_read", 105L, "x");
    try (ApiaryClient treatment = client(nurse, "treatment"); ApiaryClient asAdmin = client(admin, "curiosity")) {
      assertEquals(List.of(1L), treatment.invoke(create).values(Long.class));
      assertEquals(List.of(2L), treatment.invoke(treat).values(Long.class));
      assertEquals(List.of(2L), treatment.invoke(bill).values(Long.class));
      assertEquals(List.of(2L), asAdmin.invoke(snoop).values(Long.class));
    }
    List<ProvenanceQueries.RecordRead> reads = await(q -> q.readsOfRecord(events(q), Map.of("id", 105L)),
        r -> r.size() >= 3);
    // Where keys are required an invocation's ID is its caller's identity and the client's ID (issue 45, finding 5).
    String treated = Credentials.invocationId("az-nurse-4", treat.id());
    String billed = Credentials.invocationId("az-nurse-4", bill.id());
    String snooped = Credentials.invocationId("az-admin-2", snoop.id());
    assertEquals(List.of(treated + "|az_touch|az_touchRecord|az-nurse-4|treatment",
        billed + "|az_read|az_readRecord|az-nurse-4|billing",
        snooped + "|az_read|az_readRecord|az-admin-2|curiosity"),
        reads.stream().map(r -> r.executionId() + "|" + r.graph() + "|" + r.function() + "|" + r.caller() + "|"
            + r.purpose()).toList(), "in the record's order");
    assertEquals(Map.of("id", 105L), reads.get(0).key());
    // The nurse role's identities may read these records for treatment only: billing and the admin's read are out.
    List<ProvenanceQueries.RecordRead> outside = query(q -> q.readsOutsidePurposes(events(q),
        List.of("az-nurse-4", "az-admin-2"), List.of("treatment")));
    assertEquals(List.of(billed, snooped), outside.stream().filter(r -> r.key().get("id").equals(105L))
        .map(ProvenanceQueries.RecordRead::executionId).toList());
    List<ProvenanceQueries.RecordRead> nurseOnly = query(q -> q.readsOutsidePurposes(events(q),
        List.of("az-nurse-4"), List.of("treatment", "billing")));
    assertTrue(nurseOnly.isEmpty(), "the nurse read only for allowed purposes: " + nurseOnly);
    // By role, as the keys had it when they called: the nurse role's billing read, and what admins read.
    assertEquals(List.of(billed), query(q -> q.readsByRoleOutsidePurposes(events(q), "nurse",
        List.of("treatment"))).stream().filter(r -> r.key().get("id").equals(105L))
        .map(ProvenanceQueries.RecordRead::executionId).toList());
    assertEquals(List.of(snooped), query(q -> q.readsByRoleOutsidePurposes(events(q), Credentials.ADMIN_ROLE,
        List.of("treatment", "billing"))).stream().filter(r -> r.key().get("id").equals(105L))
        .map(ProvenanceQueries.RecordRead::executionId).toList());
    assertEquals("nurse", reads.get(1).callerRoles());
  }

  private static ProvenanceTable events(ProvenanceQueries q) throws java.sql.SQLException {
    return q.describeEventsTable("az_records", List.of("id"));
  }

  @FunctionalInterface
  private interface Query<T> {
    T run(ProvenanceQueries q) throws Exception;
  }

  private <T> T query(Query<T> query) throws Exception {
    try (Connection c = DriverManager.getConnection(db.config().provenance().sinkUrl())) {
      return query.run(new ProvenanceQueries(c));
    }
  }

  /** Runs the query until its answer passes the check (bounded by {@link #WAIT}); returns the last answer. */
  private <T> T await(Query<T> query, Predicate<T> done) throws Exception {
    long deadline = System.nanoTime() + WAIT.toNanos();
    T answer = null;
    while (System.nanoTime() < deadline) {
      ServerProvenance.active().ifPresent(p -> p.flush(Duration.ofSeconds(10)));
      try {
        answer = query(query);
        if (done.test(answer)) {
          return answer;
        }
      } catch (java.sql.SQLException e) {
        answer = null; // the tables may not exist before the first load: ask again
      }
      Thread.sleep(200);
    }
    throw new AssertionError("not there after " + WAIT + ": " + answer);
  }
}
