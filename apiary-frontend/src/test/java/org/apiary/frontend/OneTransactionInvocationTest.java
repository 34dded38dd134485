package org.apiary.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apiary.FunctionFailedException;
import org.apiary.InvalidRequestException;
import org.apiary.OutcomeUnknownException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.GraphResult;
import org.apiary.client.InvocationRequest;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.onetx.OneTxApp;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.voltdb.VoltTable;

/**
 * Graphs of one recorded function: the function's record is kept with the invocation's outcome, and (since issue 42)
 * each invocation also has an invocation-log entry, which makes its ID name one invocation across partition keys.
 * Each test compares what the client was told, what is recorded and what the data shows.
 */
@DatabaseTest
class OneTransactionInvocationTest {
  private static boolean registered;
  private static final FrontendConfig CONFIG = FrontendConfig.defaults().withLease(Duration.ofSeconds(60),
      Duration.ofSeconds(30));
  private ApiaryDatabase db;

  @BeforeEach
  void setUp(TestDatabase database) {
    db = database.database();
    synchronized (OneTransactionInvocationTest.class) {
      if (!registered) {
        Registrar.register(db, OneTxApp.APP);
        registered = true;
      }
    }
    for (String t : new String[] {"o_counters", "o_flags"}) {
      db.callAdmin("clearing " + t, "@AdHoc", "DELETE FROM " + t);
    }
  }

  private static ApiaryClient client(FrontendServer frontend) {
    return ApiaryClient.connect(ClientConfig.of(frontend.endpoint()).withAttemptTimeout(Duration.ofSeconds(5)));
  }

  private long scalar(String sql, Object... params) {
    Object[] all = new Object[params.length + 1];
    all[0] = sql;
    System.arraycopy(params, 0, all, 1, params.length);
    VoltTable t = db.callAdmin("reading test data", "@AdHoc", all).getResults()[0];
    return t.advanceRow() ? t.getLong(0) : 0L;
  }

  private long counter(long k) {
    return scalar("SELECT v FROM o_counters WHERE k = ?", k);
  }

  private long logEntries(String invocation) {
    return scalar("SELECT COUNT(*) FROM APIARY_INVOCATIONS WHERE invocation_id = ?", invocation);
  }

  @Test
  void aOneFunctionWriterRunsAsOneRecordedTransactionAndResultFindsItsOutcome() {
    try (FrontendServer frontend = FrontendServer.start(db, CONFIG); ApiaryClient client = client(frontend)) {
      GraphResult last = null;
      for (int i = 0; i < 20; i++) {
        last = client.invoke(InvocationRequest.of("o_add", 5L, 1L));
        assertEquals(1, logEntries(last.invocationId()), "a one-function graph is logged too (issue 42)");
      }
      assertEquals(20, counter(5));
      assertEquals(List.of(20L), last.values(Long.class));
      assertEquals(1, scalar("SELECT COUNT(*) FROM APIARY_RECORDED_INTEGER WHERE invocation_id = ?",
          last.invocationId()), "the function's record is the outcome");
      assertEquals(List.of(20L), client.result(last.invocationId()).orElseThrow().values(Long.class));
    }
  }

  @Test
  void aResendOfTheSameRequestReplaysTheRecordAndADifferentOneIsRefused() {
    try (FrontendServer a = FrontendServer.start(db, CONFIG); FrontendServer b = FrontendServer.start(db, CONFIG);
         ApiaryClient viaA = client(a); ApiaryClient viaB = client(b)) {
      InvocationRequest request = InvocationRequest.of("o_add", 6L, 3L);
      assertEquals(List.of(3L), viaA.invoke(request).values(Long.class));
      assertEquals(List.of(3L), viaB.invoke(request).values(Long.class), "a resend elsewhere replays the record");
      InvocationRequest different = InvocationRequest.of("o_add", 6L, 4L).withId(request.id());
      InvalidRequestException refused = assertThrows(InvalidRequestException.class, () -> viaB.invoke(different));
      assertTrue(refused.getMessage().contains("different request"), refused.getMessage());
      assertEquals(3, counter(6), "the data shows one run");
    }
  }

  /**
   * The function's transaction committed, then the frontend failed before replying (a hook throws): the client is
   * told the committed outcome, never "failed", and a lost answer is retried by replaying the record.
   */
  @Test
  void anErrorAfterTheCommitTellsTheClientTheRecordedOutcome() {
    AtomicBoolean thrown = new AtomicBoolean();
    AtomicBoolean lost = new AtomicBoolean();
    FrontendHooks hooks = new FrontendHooks() {
      @Override
      public void afterFunction(String graph, String invocation, String function) {
        if (thrown.compareAndSet(false, true)) {
          throw new IllegalStateException("fault injection: the frontend failed after o_add committed");
        }
        if (lost.compareAndSet(false, true)) {
          throw new OutcomeUnknownException("fault injection: the answer of o_add was lost", null);
        }
      }
    };
    try (FrontendServer frontend = FrontendServer.start(db, CONFIG, hooks); ApiaryClient client = client(frontend)) {
      assertEquals(List.of(2L), client.invoke(InvocationRequest.of("o_add", 7L, 2L)).values(Long.class));
      assertEquals(List.of(4L), client.invoke(InvocationRequest.of("o_add", 7L, 2L)).values(Long.class));
      assertTrue(thrown.get() && lost.get());
      assertEquals(4, counter(7), "each invocation's write applied once");
    }
  }

  @Test
  void aFailureIsRecordedSoAResendReplaysItEvenAfterTheCauseWentAway() {
    db.callAdmin("flagging key 8", "@AdHoc", "INSERT INTO o_flags VALUES (8)");
    try (FrontendServer frontend = FrontendServer.start(db, CONFIG); ApiaryClient client = client(frontend)) {
      InvocationRequest request = InvocationRequest.of("o_add", 8L, 1L);
      FunctionFailedException first = assertThrows(FunctionFailedException.class, () -> client.invoke(request));
      db.callAdmin("unflagging key 8", "@AdHoc", "DELETE FROM o_flags");
      FunctionFailedException again = assertThrows(FunctionFailedException.class, () -> client.invoke(request));
      assertEquals(first.getMessage(), again.getMessage());
      assertThrows(FunctionFailedException.class, () -> client.result(request.id()));
      assertEquals(0, counter(8));
    }
  }

  @Test
  void aGraphThatWritesNothingIsLoggedAndItsOutcomeKept() {
    try (FrontendServer frontend = FrontendServer.start(db, CONFIG); ApiaryClient client = client(frontend)) {
      client.invoke(InvocationRequest.of("o_add", 9L, 5L));
      GraphResult peek = client.invoke(InvocationRequest.of("o_peek", 9L, 0L));
      assertEquals(List.of(5L), peek.values(Long.class));
      assertEquals(1, logEntries(peek.invocationId()));
      assertEquals(List.of(5L), client.result(peek.invocationId()).orElseThrow().values(Long.class));
    }
  }
}
