package org.apiary.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.apiary.AccessDeniedException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.InvocationRequest;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.holes.HolesApp;
import org.apiary.internal.wire.WireRequest;
import org.apiary.runtime.SystemSchema;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.voltdb.VoltTable;

/**
 * Issue 14, authentication: a frontend that requires credentials runs nothing for a request without a valid API
 * key, records the key's identity as the caller whatever the client says, and never stores the key.
 */
@DatabaseTest
class AuthenticationTest {
  private static boolean registered;
  private static final FrontendConfig SECURED = FrontendConfig.defaults()
      .withLease(Duration.ofSeconds(2), Duration.ofMillis(400)).withCredentialsRequired(true);
  private ApiaryDatabase db;

  @BeforeEach
  void setUp(TestDatabase database) {
    db = database.database();
    synchronized (AuthenticationTest.class) {
      if (!registered) {
        Registrar.register(db, HolesApp.APP);
        registered = true;
      }
    }
    for (String t : new String[] {"h_counters", "h_flags", "h_writes"}) {
      db.callAdmin("clearing " + t, "@AdHoc", "DELETE FROM " + t);
    }
  }

  private static ApiaryClient client(FrontendServer frontend, String credential, String caller) {
    ClientConfig config = ClientConfig.of(frontend.endpoint()).withAttemptTimeout(Duration.ofSeconds(5));
    if (credential != null) {
      config = config.withCredential(credential);
    }
    if (caller != null) {
      config = config.withCaller(caller);
    }
    return ApiaryClient.connect(config);
  }

  private long counter(long k) {
    VoltTable t = db.callAdmin("reading a counter", "@AdHoc", "SELECT v FROM h_counters WHERE k = ?", k)
        .getResults()[0];
    return t.advanceRow() ? t.getLong(0) : 0L;
  }

  @Test
  void aRequestWithoutAValidKeyIsRefusedAndRunsNothing() {
    Credentials.Issued alice = Credentials.create(db, "alice");
    String wrongSecret = alice.apiKey().substring(0, alice.apiKey().length() - 1)
        + (alice.apiKey().endsWith("A") ? "B" : "A");
    try (FrontendServer frontend = FrontendServer.start(db, SECURED)) {
      for (String credential : new String[] {null, "not-a-key", wrongSecret,
          "apiary_0000000000000000_" + "x".repeat(43)}) {
        try (ApiaryClient client = client(frontend, credential, null)) {
          AccessDeniedException e = assertThrows(AccessDeniedException.class,
              () -> client.invoke("h_flaky", 41L, 1L), String.valueOf(credential));
          assertFalse(e.getMessage().contains(alice.apiKey().substring(24)), "the refusal echoes the secret");
          assertThrows(AccessDeniedException.class, () -> client.result("anything"));
        }
      }
      assertEquals(0, counter(41), "a refused request ran");
    }
  }

  @Test
  void theCallerIsTheKeysIdentityAndTheKeyIsNeverStored() {
    Credentials.Issued alice = Credentials.create(db, "alice");
    try (FrontendServer frontend = FrontendServer.start(db, SECURED);
         ApiaryClient client = client(frontend, alice.apiKey(), "mallory")) {
      InvocationRequest request = InvocationRequest.of("h_flaky", 42L, 1L);
      assertEquals(List.of(1L), client.invoke(request).values(Long.class));
      assertEquals(1, counter(42));
      VoltTable t = db.callAdmin("reading the log", "@AdHoc", "SELECT request FROM " + SystemSchema.INVOCATIONS
          + " WHERE invocation_id = ?", Credentials.invocationId("alice", request.id())).getResults()[0];
      assertTrue(t.advanceRow(), "the two-function graph was not logged under its caller's identity");
      byte[] logged = t.getVarbinary(0);
      String secret = alice.apiKey().substring("apiary_".length() + 17);
      assertFalse(new String(logged, StandardCharsets.UTF_8).contains(secret), "the log holds the secret");
      WireRequest stored = WireRequest.fromBytes(logged);
      assertEquals("alice", stored.caller(), "the client-chosen caller was recorded");
      assertNull(stored.credential());
      VoltTable keys = db.callAdmin("reading credentials", "@AdHoc", "SELECT * FROM " + SystemSchema.CREDENTIALS)
          .getResults()[0];
      assertFalse(keys.toString().contains(secret), "the credentials table holds the secret");
      assertFalse(ClientConfig.of("tcp://h:1").withCredential(alice.apiKey()).toString().contains(secret));
    }
  }

  @Test
  void aRevokedKeyIsRefusedWithinSeconds() throws Exception {
    Credentials.Issued bob = Credentials.create(db, "bob");
    try (FrontendServer frontend = FrontendServer.start(db, SECURED);
         ApiaryClient client = client(frontend, bob.apiKey(), null)) {
      assertEquals(List.of(1L), client.invoke("h_flaky", 43L, 1L).values(Long.class));
      assertTrue(Credentials.revoke(db, bob.keyId()));
      assertTrue(Credentials.list(db).stream().anyMatch(s -> s.keyId().equals(bob.keyId()) && s.revoked()));
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      boolean refused = false;
      while (!refused && System.nanoTime() < deadline) {
        try {
          client.invoke("h_flaky", 44L, 1L);
          Thread.sleep(100);
        } catch (AccessDeniedException e) {
          refused = true;
        }
      }
      assertTrue(refused, "a revoked key still works after 10 s");
    }
  }

  /**
   * A key created to expire in 6 s (time for a frontend to start on a busy machine) works until then; afterwards a
   * call with it is refused with the answer a key that never existed gets (so the answer does not tell that it
   * existed) and runs nothing. The refusal does not wait for the frontend to read the keys again: a view of the keys
   * read once, before the expiry, refuses it too.
   */
  @Test
  void anExpiredKeyIsRefusedAndRunsNothing() throws Exception {
    Credentials.Issued dave = Credentials.create(db, "dave", Set.of(), Duration.ofSeconds(6));
    CredentialCheck readOnce = new CredentialCheck(db); // never reloaded
    assertTrue(readOnce.verify(dave.apiKey()).accepted(), "a key was refused before its expiry");
    assertTrue(Credentials.list(db).stream().anyMatch(s -> s.keyId().equals(dave.keyId()) && s.expiresAt() != null
        && !s.expired()), "the key is not listed with an expiry");
    String neverIssued = "apiary_0000000000000000_" + "x".repeat(43);
    try (FrontendServer frontend = FrontendServer.start(db, SECURED);
         ApiaryClient client = client(frontend, dave.apiKey(), null);
         ApiaryClient stranger = client(frontend, neverIssued, null)) {
      assertEquals(List.of(1L), client.invoke("h_flaky", 46L, 1L).values(Long.class));
      long ran = 1;
      AccessDeniedException refused = null;
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (refused == null && System.nanoTime() < deadline) {
        try {
          client.invoke("h_flaky", 46L, 1L);
          ran++;
          Thread.sleep(100);
        } catch (AccessDeniedException e) {
          refused = e;
        }
      }
      assertNotNull(refused, "a key created to expire in 6 s still works after 30 s");
      assertEquals(ran, counter(46), "the refused call ran");

      AccessDeniedException again = assertThrows(AccessDeniedException.class, () -> client.invoke("h_flaky", 47L, 1L));
      assertEquals(0, counter(47), "a call with an expired key ran");
      AccessDeniedException unknown = assertThrows(AccessDeniedException.class,
          () -> stranger.invoke("h_flaky", 47L, 1L));
      assertEquals(answer(unknown).replace("0000000000000000", dave.keyId()), answer(again),
          "an expired key is refused differently from one that never existed");
      assertEquals(answer(again), answer(refused));

      CredentialCheck.Verdict stale = readOnce.verify(dave.apiKey());
      assertFalse(stale.accepted(), "an expired key is accepted until the keys are read again");
      assertEquals(readOnce.verify(dave.apiKey().replace(dave.keyId(), "0000000000000000")).refusal()
          .replace("0000000000000000", dave.keyId()), stale.refusal());
      assertTrue(Credentials.list(db).stream().anyMatch(s -> s.keyId().equals(dave.keyId()) && s.expired()),
          "the key is not listed as expired");
    }
  }

  /** A refusal's message without the invocation ID it names. */
  private static String answer(AccessDeniedException e) {
    return e.getMessage().substring(e.getMessage().indexOf(" was refused: "));
  }

  @Test
  void aFrontendThatDoesNotRequireCredentialsStillNeverStoresOne() {
    Credentials.Issued carol = Credentials.create(db, "carol");
    try (FrontendServer frontend = FrontendServer.start(db, FrontendConfig.defaults());
         ApiaryClient client = client(frontend, carol.apiKey(), "carol-says")) {
      InvocationRequest request = InvocationRequest.of("h_flaky", 45L, 1L);
      client.invoke(request);
      VoltTable t = db.callAdmin("reading the log", "@AdHoc", "SELECT request FROM " + SystemSchema.INVOCATIONS
          + " WHERE invocation_id = ?", request.id()).getResults()[0];
      assertTrue(t.advanceRow());
      WireRequest stored = WireRequest.fromBytes(t.getVarbinary(0));
      assertNull(stored.credential());
      assertEquals("carol-says", stored.caller());
    }
  }

  /** Sends raw request frames to a frontend, as a client that does not use ApiaryClient would. */
  private static final class RawClient implements AutoCloseable {
    private final org.zeromq.ZContext context = new org.zeromq.ZContext();
    private final org.zeromq.ZMQ.Socket socket = context.createSocket(org.zeromq.SocketType.DEALER);

    RawClient(FrontendServer frontend) {
      socket.setHandshakeIvl(org.apiary.internal.wire.SocketLoop.HANDSHAKE_MILLIS);
      socket.setReceiveTimeOut(10_000);
      socket.setSendTimeOut(10_000);
      socket.connect(frontend.endpoint());
    }

    org.apiary.internal.wire.WireReply send(byte[] frame) {
      assertTrue(socket.send(frame, 0), "could not send within 10 s");
      byte[] answer = socket.recv();
      assertNotNull(answer, "no reply within 10 s");
      return org.apiary.internal.wire.WireReply.fromBytes(answer);
    }

    @Override
    public void close() {
      context.close();
    }
  }

  /** Issue 45, finding 7: an expiry at the ends of the range overflowed the check, and the call ran. */
  @Test
  void anExpiryOutOfRangeIsRefusedNamingTheFieldAndRunsNothing() {
    Credentials.Issued erin = Credentials.create(db, "erin");
    try (FrontendServer frontend = FrontendServer.start(db, SECURED); RawClient raw = new RawClient(frontend)) {
      for (long expires : new long[] {Long.MIN_VALUE, Long.MAX_VALUE, -1L, Long.MAX_VALUE - 5_000}) {
        byte[] frame = WireRequest.withExpiry(WireRequest.invoke("expiry-" + expires, "h_flaky",
            org.apiary.internal.Json.tree(48L), List.of(org.apiary.internal.Json.tree(1L)), null)
            .withCredential(erin.apiKey()).toBytes(), expires);
        org.apiary.internal.wire.WireReply reply = raw.send(frame);
        assertEquals(org.apiary.internal.wire.WireReply.INVALID_REQUEST, reply.error(), expires + ": "
            + reply.status() + " " + reply.message());
        assertTrue(reply.message().contains("'" + WireRequest.EXPIRES_FIELD + "'"), reply.message());
      }
    }
    assertEquals(0, counter(48), "a request with an out-of-range expiry ran");
  }

  /** Issue 45, finding 7: an unknown graph's name was answered with the names of every registered graph. */
  @Test
  void anUnknownGraphIsAnsweredWithoutListingTheRegisteredOnes() {
    Credentials.Issued frank = Credentials.create(db, "frank");
    Credentials.Issued admin = Credentials.create(db, "grace", Set.of(Credentials.ADMIN_ROLE));
    try (FrontendServer frontend = FrontendServer.start(db, SECURED);
         ApiaryClient client = client(frontend, frank.apiKey(), null);
         ApiaryClient asAdmin = client(frontend, admin.apiKey(), null)) {
      Exception e = assertThrows(Exception.class, () -> client.invoke("h_no_such_graph", 1L));
      assertTrue(e.getMessage().contains("unknown graph 'h_no_such_graph'"), e.getMessage());
      assertFalse(e.getMessage().contains("h_flaky"), "a caller learned the registered graphs: " + e.getMessage());
      Exception forAdmin = assertThrows(Exception.class, () -> asAdmin.invoke("h_no_such_graph", 1L));
      assertTrue(forAdmin.getMessage().contains("h_flaky"), "an admin is told what exists: " + forAdmin.getMessage());
    }
  }
}
