package org.apiary.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apiary.ApiaryException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.GraphResult;
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
 * Issue 45, finding 5: a result was anyone's who could resend. Where credentials are required, an invocation ID names
 * an invocation of the key's identity only: another identity's resend of the same ID runs as that identity's own
 * invocation, exactly as an unknown ID would, and its {@code result(id)} is answered as for an unknown ID; nothing of
 * the first caller's invocation reaches it, and the first caller's attempts run as the first caller whoever resends.
 * For a graph kept as one recorded transaction ({@code h_oneBump}) and a logged one ({@code h_twoWriters}) alike.
 */
@DatabaseTest
class ResultOwnershipTest {
  private static final FrontendConfig SECURED = FrontendConfig.defaults()
      .withLease(Duration.ofSeconds(2), Duration.ofMillis(400)).withCredentialsRequired(true);
  private static final FrontendConfig OPEN = FrontendConfig.defaults()
      .withLease(Duration.ofSeconds(2), Duration.ofMillis(400));
  /** The two ways an invocation that writes is kept: one recorded transaction, and logged. */
  private static final List<String> GRAPHS = List.of("h_oneBump", "h_twoWriters");
  private static final long WAIT_SECONDS = 30;
  private static boolean registered;
  private static long nextKey = 4500;

  private ApiaryDatabase db;

  @BeforeEach
  void setUp(TestDatabase database) {
    db = database.database();
    synchronized (ResultOwnershipTest.class) {
      if (!registered) {
        Registrar.register(db, HolesApp.APP);
        registered = true;
      }
    }
  }

  private static synchronized long freshKey() {
    return nextKey++;
  }

  private static ApiaryClient client(FrontendServer frontend, Credentials.Issued key) {
    return ApiaryClient.connect(ClientConfig.of(frontend.endpoint()).withAttemptTimeout(Duration.ofSeconds(5))
        .withCredential(key.apiKey()));
  }

  private static ApiaryClient anonymous(FrontendServer frontend, String claimedCaller) {
    return ApiaryClient.connect(ClientConfig.of(frontend.endpoint()).withAttemptTimeout(Duration.ofSeconds(5))
        .withCaller(claimedCaller));
  }

  private long counter(long k) {
    VoltTable t = db.callAdmin("reading a counter", "@AdHoc", "SELECT v FROM h_counters WHERE k = ?", k)
        .getResults()[0];
    return t.advanceRow() ? t.getLong(0) : 0L;
  }

  private static long value(GraphResult r) {
    return r.value(Long.class);
  }

  /** What a call threw: its class and its message with {@code id} replaced by {@code ID}. */
  private static String refusal(Runnable call, String id) {
    try {
      call.run();
    } catch (ApiaryException e) {
      return e.getClass().getSimpleName() + ": " + e.getMessage().replace(id, "ID");
    }
    return "no refusal";
  }

  /** {@code result(id)} as its client tells it, or its refusal with the ID replaced by {@code ID}. */
  private static String resultOf(ApiaryClient client, String id) {
    String[] told = new String[1];
    String refused = refusal(() -> told[0] = client.result(id).map(r -> "result " + r.toJson()).orElse("running"),
        id);
    return told[0] != null ? told[0] : refused;
  }

  /** Another key's resend of an ID, with the same request or another, runs as that key's own invocation. */
  @Test
  void anotherKeysResendOfAnIdRunsAsItsOwnInvocationAndGetsNothingOfTheFirst() {
    Credentials.Issued alice = Credentials.create(db, "ro-alice-1");
    Credentials.Issued bob = Credentials.create(db, "ro-bob-1");
    try (FrontendServer frontend = FrontendServer.start(db, SECURED);
         ApiaryClient asAlice = client(frontend, alice); ApiaryClient asBob = client(frontend, bob)) {
      for (String graph : GRAPHS) {
        long k = freshKey();
        InvocationRequest request = InvocationRequest.of(graph, k, 1L);
        assertEquals(1L, value(asAlice.invoke(request)), graph);

        // The same ID, graph, key and arguments under another key: a new invocation of its own, not Alice's result.
        assertEquals(2L, value(asBob.invoke(request)), graph + ": another key's resend got the first caller's result "
            + "instead of running as its own invocation");
        assertEquals(2L, counter(k), graph);
        assertEquals(1L, value(asAlice.invoke(request)), graph + ": the first caller's outcome changed");
        assertEquals(2L, value(asBob.invoke(request)), graph + ": the second key's own invocation ran again");
        assertEquals(2L, counter(k), graph + ": a resend ran again");

        // Another of Alice's IDs with other arguments: answered as an unknown ID is (it runs), not "already used".
        InvocationRequest hers = InvocationRequest.of(graph, k, 10L);
        assertEquals(12L, value(asAlice.invoke(hers)), graph);
        InvocationRequest guess = InvocationRequest.of(graph, k, 100L).withId(hers.id());
        GraphResult guessed;
        try {
          guessed = asBob.invoke(guess);
        } catch (ApiaryException e) {
          throw new AssertionError(graph + ": another key's request under a used ID was answered unlike one under an "
              + "unknown ID: " + e, e);
        }
        assertEquals(112L, value(guessed), graph);
        GraphResult unknownId = asBob.invoke(InvocationRequest.of(graph, k, 100L));
        assertEquals(212L, value(unknownId), graph);
        assertEquals(1L, value(asAlice.invoke(request)), graph);
        assertEquals(12L, value(asAlice.invoke(hers)), graph);
        assertEquals(List.of(1L), asAlice.result(request.id()).orElseThrow().values(Long.class), graph);
      }
    }
  }

  /** Another key's {@code result(id)} is answered as for an unknown ID; an admin names the invocation to read it. */
  @Test
  void anotherKeysResultOfAnIdIsAnsweredAsForAnUnknownIdAndAnAdminStillReadsIt() {
    Credentials.Issued alice = Credentials.create(db, "ro-alice-2");
    Credentials.Issued bob = Credentials.create(db, "ro-bob-2");
    Credentials.Issued admin = Credentials.create(db, "ro-admin-2", Set.of(Credentials.ADMIN_ROLE));
    try (FrontendServer frontend = FrontendServer.start(db, SECURED);
         ApiaryClient asAlice = client(frontend, alice); ApiaryClient asBob = client(frontend, bob);
         ApiaryClient asAdmin = client(frontend, admin)) {
      for (String graph : GRAPHS) {
        InvocationRequest request = InvocationRequest.of(graph, freshKey(), 3L);
        assertEquals(3L, value(asAlice.invoke(request)), graph);
        String unknown = org.apiary.internal.InvocationIds.next();
        String answer = resultOf(asBob, unknown);
        assertTrue(answer.startsWith("InvalidRequestException") && answer.contains("no invocation with ID ID is known"),
            answer);
        assertEquals(answer, resultOf(asBob, request.id()), graph + ": another key's result(id) is answered unlike "
            + "an unknown ID's");
        assertEquals(answer, resultOf(asBob, alice.identity() + "/" + request.id()), graph);
        assertEquals("result [3]", resultOf(asAlice, request.id()), graph);
        // An admin may read every caller's results, naming the invocation as the caller's identity and its ID.
        assertEquals("result [3]", resultOf(asAdmin, Credentials.invocationId(alice.identity(), request.id())),
            graph);
        assertEquals(answer, resultOf(asAdmin, unknown), graph);
      }
    }
  }

  /** Holds one frontend's attempt at one caller's invocation after a function returned, until released. */
  private static final class Pause implements FrontendHooks {
    final CountDownLatch reached = new CountDownLatch(1);
    final CountDownLatch released = new CountDownLatch(1);
    final AtomicBoolean taken = new AtomicBoolean();
    final Set<String> invocations;
    final String function;

    /** Holds {@code id} by {@code identity}, whether the frontend stores it as the ID or under the identity. */
    Pause(String identity, String id, String function) {
      this.invocations = Set.of(id, identity + "/" + id);
      this.function = function;
    }

    @Override
    public void afterFunction(String graph, String id, String executed) {
      if (executed.equals(function) && invocations.contains(id) && taken.compareAndSet(false, true)) {
        reached.countDown();
        try {
          if (!released.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the test never released the paused invocation " + id);
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }

    void awaitReached() throws InterruptedException {
      assertTrue(reached.await(WAIT_SECONDS, TimeUnit.SECONDS), "the invocation never reached the pause");
    }
  }

  private static GraphResult within(CompletableFuture<GraphResult> call, String what) throws Exception {
    try {
      return call.get(15, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError(what + ": no answer within 15 s (it waits for the paused invocation of another "
          + "caller)", e);
    } catch (ExecutionException e) {
      throw new AssertionError(what + ": " + e.getCause(), e.getCause());
    }
  }

  /** A frontend whose lease outlives a test's pause, so no other frontend takes its invocations over meanwhile. */
  private static FrontendConfig longLease(FrontendConfig config) {
    return config.withLease(Duration.ofSeconds(60), Duration.ofMillis(400));
  }

  /** A connection of its own for a frontend a {@link Pause} holds: the hook holds its client's callback thread. */
  private ApiaryDatabase ownConnection() {
    return ApiaryDatabase.open(org.apiary.database.DatabaseConfig.external(
        db.clientAddresses().toArray(String[]::new)));
  }

  /**
   * While Alice's invocation runs (held after its first function), Mallory resends it to another frontend
   * and Bob to the same one, and Bob asks for its result: each resend runs an invocation of its own and gets nothing
   * of Alice's, Bob's result(id) is answered as for an unknown ID, and Alice's attempts run, and record, as Alice.
   */
  @Test
  void anotherKeysResendWhileTheInvocationRunsNeitherReattachesNorRunsItsAttempt() throws Exception {
    Credentials.Issued alice = Credentials.create(db, "ro-alice-3");
    Credentials.Issued bob = Credentials.create(db, "ro-bob-3");
    Credentials.Issued mallory = Credentials.create(db, "ro-mallory-3");
    List<String> failures = new ArrayList<>();
    for (String graph : GRAPHS) {
      long k = freshKey();
      InvocationRequest request = InvocationRequest.of(graph, k, 1L);
      Pause pause = new Pause(alice.identity(), request.id(), "h_bump");
      try (ApiaryDatabase heldDb = ownConnection();
           FrontendServer held = FrontendServer.start(heldDb, longLease(SECURED), pause);
           FrontendServer other = FrontendServer.start(db, longLease(SECURED));
           ApiaryClient asAlice = client(held, alice); ApiaryClient asBob = client(held, bob);
           ApiaryClient asBobElsewhere = client(other, bob); ApiaryClient asMallory = client(other, mallory)) {
        CompletableFuture<GraphResult> hers = asAlice.invokeAsync(request);
        CompletableFuture<GraphResult> bobs;
        try {
          pause.awaitReached();
          String unknown = resultOf(asBobElsewhere, "never-used-" + k).replace("never-used-" + k, "ID");
          String told = resultOf(asBobElsewhere, request.id());
          if (!told.equals(unknown)) {
            failures.add(graph + ": another key's result(id) of a running invocation is answered unlike an unknown "
                + "ID's: '" + told + "' instead of '" + unknown + "'");
          }
          // On another frontend, a resend of the running invocation took up its next attempt.
          Long malloryGot = outcome(asMallory.invokeAsync(request), graph + ", another frontend", failures);
          if (malloryGot != null && malloryGot != 2L) {
            failures.add(graph + ": another key's resend on another frontend got " + malloryGot + ", not a run of its "
                + "own (2)");
          }
          bobs = asBob.invokeAsync(request); // answered once the held frontend's database thread is free
        } finally {
          pause.released.countDown();
        }
        assertEquals(1L, outcome(hers, graph + ", the first caller", failures), graph);
        Long bobGot = outcome(bobs, graph + ", the same frontend", failures);
        if (bobGot != null && bobGot != 3L) {
          failures.add(graph + ": another key's resend on the frontend running the invocation got " + bobGot
              + ", not a run of its own (3)");
        }
      }
      List<String> callers = callersOf(alice.identity(), request.id());
      if (!callers.equals(List.of(alice.identity()))) {
        failures.add(graph + ": the first caller's invocation ran (and recorded) under " + callers);
      }
    }
    assertEquals(List.of(), failures);
  }

  /** The value a call returned, or {@code null} with a failure noted if it failed or took longer than 15 s. */
  private static Long outcome(CompletableFuture<GraphResult> call, String what, List<String> failures)
      throws InterruptedException {
    try {
      return value(call.get(15, TimeUnit.SECONDS));
    } catch (TimeoutException e) {
      failures.add(what + ": no answer within 15 s");
    } catch (ExecutionException e) {
      failures.add(what + ": " + e.getCause());
    }
    return null;
  }

  /**
   * The callers recorded for the invocation {@code identity} started with {@code id} (whether stored as the ID or
   * under the identity): its recorded outputs' callers and, if logged, the caller of its logged request; distinct.
   */
  private List<String> callersOf(String identity, String id) {
    List<String> callers = new ArrayList<>();
    for (String stored : List.of(id, identity + "/" + id)) {
      VoltTable recorded = db.callAdmin("reading records", "@AdHoc", "SELECT caller FROM "
          + SystemSchema.RECORDED_INTEGER + " WHERE invocation_id = ?", stored).getResults()[0];
      while (recorded.advanceRow()) {
        String caller = recorded.getString(0);
        callers.add(recorded.wasNull() ? "(none)" : caller);
      }
      VoltTable logged = db.callAdmin("reading the log", "@AdHoc", "SELECT request FROM " + SystemSchema.INVOCATIONS
          + " WHERE invocation_id = ?", stored).getResults()[0];
      while (logged.advanceRow()) {
        callers.add(String.valueOf(WireRequest.fromBytes(logged.getVarbinary(0)).caller()));
      }
    }
    assertTrue(!callers.isEmpty(), "nothing is recorded of invocation " + id);
    return callers.stream().distinct().toList();
  }

  /**
   * Without credentials an ID names one invocation whoever sends it (behaviour unchanged: a resend with
   * another claimed caller gets its result, and so does anyone's result(id)); a resend on another frontend while it
   * runs waits for the frontend running it (whose lease holds) and gets its outcome; the invocation runs once, under
   * the caller that started it, not the resender's claim.
   */
  @Test
  void withoutCredentialsAResendWhileItRunsWaitsForTheFrontendRunningItAndIsAnsweredItsOutcome() throws Exception {
    long k = freshKey();
    InvocationRequest request = InvocationRequest.of("h_twoWriters", k, 1L);
    Pause pause = new Pause("ro-alice-4", request.id(), "h_bump");
    try (ApiaryDatabase heldDb = ownConnection();
         FrontendServer held = FrontendServer.start(heldDb, longLease(OPEN), pause);
         FrontendServer other = FrontendServer.start(db, longLease(OPEN));
         ApiaryClient asAlice = anonymous(held, "ro-alice-4");
         ApiaryClient claimingMallory = anonymous(other, "ro-mallory-4")) {
      CompletableFuture<GraphResult> hers = asAlice.invokeAsync(request);
      CompletableFuture<GraphResult> resent;
      try {
        pause.awaitReached();
        resent = claimingMallory.invokeAsync(request);
        // The frontend running it holds its lease: the other one waits for its outcome and runs nothing itself.
        assertThrows(TimeoutException.class, () -> resent.get(1_500, TimeUnit.MILLISECONDS),
            "a resend on another frontend ran the invocation beside its live frontend");
      } finally {
        pause.released.countDown();
      }
      assertEquals(1L, value(within(resent, "a resend on another frontend")));
      assertEquals(1L, value(within(hers, "the first caller")));
      assertEquals(Optional.of(List.of(1L)), claimingMallory.result(request.id()).map(r -> r.values(Long.class)));
      assertEquals(1L, counter(k), "a resend without credentials ran the invocation again");
    }
    assertEquals(List.of("ro-alice-4"), callersOf("ro-alice-4", request.id()),
        "an attempt taken up by a resend ran under the resender's claimed caller");
    InvocationRequest oneTransaction = InvocationRequest.of("h_oneBump", k, 5L);
    try (FrontendServer open = FrontendServer.start(db, OPEN); ApiaryClient a = anonymous(open, "ro-alice-4");
         ApiaryClient b = anonymous(open, "ro-bob-4")) {
      assertEquals(6L, value(a.invoke(oneTransaction)));
      assertEquals(6L, value(b.invoke(oneTransaction)));
      assertEquals(Optional.of(List.of(6L)), b.result(oneTransaction.id()).map(r -> r.values(Long.class)));
      assertTrue(refusal(() -> b.invoke(InvocationRequest.of("h_oneBump", k, 7L).withId(oneTransaction.id())),
          oneTransaction.id()).contains("already used for a different request"));
    }
  }

  /**
   * The longest identity and the longest ID fit where the invocation is stored (its log entry, its records, the
   * ID an admin names it by), and an invocation started without credentials is still read by its bare ID by an
   * admin but by no other key.
   */
  @Test
  void theLongestIdentityAndIdAreStoredAndAnAdminReadsInvocationsStartedWithoutCredentials() {
    Credentials.Issued longest = Credentials.create(db, "r".repeat(WireRequest.MAX_CALLER_LENGTH));
    Credentials.Issued admin = Credentials.create(db, "ro-admin-5", Set.of(Credentials.ADMIN_ROLE));
    Credentials.Issued bob = Credentials.create(db, "ro-bob-5");
    try (FrontendServer frontend = FrontendServer.start(db, SECURED);
         ApiaryClient asLongest = client(frontend, longest); ApiaryClient asAdmin = client(frontend, admin);
         ApiaryClient asBob = client(frontend, bob)) {
      for (String graph : GRAPHS) {
        String id = (graph.equals("h_oneBump") ? "i" : "j").repeat(WireRequest.MAX_ID_LENGTH);
        InvocationRequest request = InvocationRequest.of(graph, freshKey(), 4L).withId(id);
        assertEquals(4L, value(asLongest.invoke(request)), graph);
        assertEquals(4L, value(asLongest.invoke(request)), graph);
        assertEquals("result [4]", resultOf(asLongest, id), graph);
        assertEquals("result [4]", resultOf(asAdmin, Credentials.invocationId(longest.identity(), id)), graph);
      }
      InvocationRequest anonymousCall = InvocationRequest.of("h_twoWriters", freshKey(), 8L);
      try (FrontendServer open = FrontendServer.start(db, OPEN); ApiaryClient anyone = anonymous(open, null)) {
        assertEquals(8L, value(anyone.invoke(anonymousCall)));
      }
      assertEquals("result [8]", resultOf(asAdmin, anonymousCall.id()));
      String unknown = resultOf(asBob, "never-used");
      assertEquals(unknown.replace("never-used", "ID"), resultOf(asBob, anonymousCall.id()));
    }
  }

  @Test
  void anInvocationAKeyStartedIsStoredUnderItsIdentityAndTheRequestHashHoldsTheIdentity() {
    assertEquals("alice/x-1", Credentials.invocationId("alice", "x-1"));
    assertEquals("alice/a/b", Credentials.invocationId("alice", "a/b"));
    assertThrows(IllegalArgumentException.class, () -> Credentials.invocationId("a/b", "x"));
    assertThrows(IllegalArgumentException.class, () -> Credentials.invocationId("alice", ""));
    var key = org.apiary.internal.Json.tree(5L);
    var args = List.of(org.apiary.internal.Json.tree(1L));
    assertEquals(OneTransactionOutcomes.requestHash("g", key, args),
        OneTransactionOutcomes.requestHash("g", key, args, null), "a frontend without credentials hashes as before");
    assertNotEquals(OneTransactionOutcomes.requestHash("g", key, args, "alice"),
        OneTransactionOutcomes.requestHash("g", key, args, "bob"));
    assertNotEquals(OneTransactionOutcomes.requestHash("g", key, args),
        OneTransactionOutcomes.requestHash("g", key, args, "alice"));
  }
}
