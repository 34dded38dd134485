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
import org.apiary.client.InvocationHandle;
import org.apiary.client.InvocationRequest;
import org.apiary.client.InvocationStatus;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.onetx.OneTxApp;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.voltdb.VoltTable;

/**
 * Issue 42, item 1: {@code start} returns a handle once the invocation is logged; any client attaches by ID, asks
 * its status and waits for it with a deadline.
 */
@DatabaseTest
class StartHandleTest {
  private static boolean registered;
  private static final FrontendConfig CONFIG = FrontendConfig.defaults().withLease(Duration.ofSeconds(60),
      Duration.ofSeconds(30));
  private ApiaryDatabase db;

  @BeforeEach
  void setUp(TestDatabase database) {
    db = database.database();
    synchronized (StartHandleTest.class) {
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

  private long counter(long k) {
    VoltTable t = db.callAdmin("reading test data", "@AdHoc", "SELECT v FROM o_counters WHERE k = ?", k)
        .getResults()[0];
    return t.advanceRow() ? t.getLong(0) : 0L;
  }

  @Test
  void startReturnsOnceLoggedAndAnyClientAttachesWaitsAndSeesItEnd() {
    AtomicBoolean hold = new AtomicBoolean(true);
    FrontendHooks hooks = new FrontendHooks() {
      @Override
      public void afterFunction(String graph, String invocation, String function) {
        if (hold.get()) { // keeps the invocation running: each attempt is retried after a back-off
          throw new OutcomeUnknownException("test: the answer of " + function + " is held", null);
        }
      }
    };
    try (FrontendServer a = FrontendServer.start(db, CONFIG, hooks); FrontendServer b = FrontendServer.start(db, CONFIG);
         ApiaryClient viaA = client(a); ApiaryClient viaB = client(b)) {
      InvocationRequest request = InvocationRequest.of("o_add", 41L, 3L);
      InvocationHandle handle = viaA.start(request);
      assertEquals(request.id(), handle.id());
      assertEquals(InvocationStatus.RUNNING, handle.status());
      InvocationHandle attached = viaB.handle(handle.id());
      assertEquals(InvocationStatus.RUNNING, attached.status(), "another frontend reads it from the log");
      assertThrows(OutcomeUnknownException.class, () -> attached.await(Duration.ofMillis(200)));
      hold.set(false);
      assertEquals(List.of(3L), attached.await(Duration.ofSeconds(20)).values(Long.class));
      assertEquals(InvocationStatus.DONE, handle.status());
      assertEquals(InvocationStatus.DONE, attached.status());
      viaB.start(request); // a repeated start attaches to the ended invocation; nothing runs again
      assertEquals(3, counter(41));
      InvalidRequestException refused = assertThrows(InvalidRequestException.class,
          () -> viaB.start(InvocationRequest.of("o_add", 42L, 3L).withId(request.id())));
      assertTrue(refused.getMessage().contains("41"), refused.getMessage());
      assertEquals(0, counter(42));
    }
  }

  @Test
  void aFailedInvocationShowsFailedAndWaitingThrowsItsFailure() {
    db.callAdmin("flagging", "@AdHoc", "INSERT INTO o_flags VALUES (43)");
    try (FrontendServer a = FrontendServer.start(db, CONFIG); ApiaryClient client = client(a)) {
      InvocationHandle handle = client.start("o_add", 43L, 1L);
      assertThrows(FunctionFailedException.class, () -> handle.await(Duration.ofSeconds(20)));
      assertEquals(InvocationStatus.FAILED, handle.status());
      assertThrows(IllegalArgumentException.class, () -> handle.await(Duration.ofSeconds(-1)));
    }
  }

  @Test
  void aFrontendWithoutTheLogRefusesToStart() {
    try (FrontendServer unlogged = FrontendServer.start(db, CONFIG.withInvocationLog(false));
         ApiaryClient client = client(unlogged)) {
      InvalidRequestException refused = assertThrows(InvalidRequestException.class,
          () -> client.start("o_add", 44L, 1L));
      assertTrue(refused.getMessage().contains("invocation log"), refused.getMessage());
    }
  }
}
