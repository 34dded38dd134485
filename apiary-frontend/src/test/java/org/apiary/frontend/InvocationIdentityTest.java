package org.apiary.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.apiary.InvalidRequestException;
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
 * Issue 42, item 1: an invocation ID names one invocation across partition keys for every graph kind (a reuse with
 * another key is refused, naming the first), and {@code result(id)} answers for a graph that writes nothing.
 */
@DatabaseTest
class InvocationIdentityTest {
  private static boolean registered;
  private static final FrontendConfig CONFIG = FrontendConfig.defaults().withLease(Duration.ofSeconds(60),
      Duration.ofSeconds(30));
  private ApiaryDatabase db;

  @BeforeEach
  void setUp(TestDatabase database) {
    db = database.database();
    synchronized (InvocationIdentityTest.class) {
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
  void anIdReusedWithAnotherKeyIsRefusedNamingTheFirstForAOneFunctionWriter() {
    try (FrontendServer frontend = FrontendServer.start(db, CONFIG); ApiaryClient client = client(frontend)) {
      String id = "reuse-writer-" + System.nanoTime();
      assertEquals(List.of(4L), client.invoke(InvocationRequest.of("o_add", 31L, 4L).withId(id)).values(Long.class));
      InvalidRequestException refused = assertThrows(InvalidRequestException.class,
          () -> client.invoke(InvocationRequest.of("o_add", 32L, 4L).withId(id)));
      assertTrue(refused.getMessage().contains("o_add") && refused.getMessage().contains("31"),
          "names the first request's graph and key: " + refused.getMessage());
      assertEquals(0, counter(32), "the reuse under another key ran nothing");
      assertEquals(4, counter(31));
    }
  }

  @Test
  void anIdReusedWithAnotherKeyIsRefusedForAReadOnlyGraph() {
    try (FrontendServer frontend = FrontendServer.start(db, CONFIG); ApiaryClient client = client(frontend)) {
      String id = "reuse-reader-" + System.nanoTime();
      client.invoke(InvocationRequest.of("o_peek", 33L, 0L).withId(id));
      InvalidRequestException refused = assertThrows(InvalidRequestException.class,
          () -> client.invoke(InvocationRequest.of("o_peek", 34L, 0L).withId(id)));
      assertTrue(refused.getMessage().contains("o_peek") && refused.getMessage().contains("33"),
          refused.getMessage());
      InvalidRequestException otherGraph = assertThrows(InvalidRequestException.class,
          () -> client.invoke(InvocationRequest.of("o_add", 33L, 1L).withId(id)));
      assertTrue(otherGraph.getMessage().contains("o_peek"), otherGraph.getMessage());
      assertEquals(0, counter(33), "the reuse with another graph ran nothing");
    }
  }

  @Test
  void resultOfAnEndedReadOnlyGraphAnswers() {
    try (FrontendServer frontend = FrontendServer.start(db, CONFIG); ApiaryClient client = client(frontend)) {
      client.invoke(InvocationRequest.of("o_add", 35L, 5L));
      GraphResult peek = client.invoke(InvocationRequest.of("o_peek", 35L, 0L));
      assertEquals(List.of(5L), peek.values(Long.class));
      client.invoke(InvocationRequest.of("o_add", 35L, 1L)); // the data changes; the stored outcome does not
      assertEquals(List.of(5L), client.result(peek.invocationId()).orElseThrow().values(Long.class));
    }
    // From another frontend, after the first one stopped.
    try (FrontendServer frontend = FrontendServer.start(db, CONFIG); ApiaryClient client = client(frontend)) {
      VoltTable t = db.callAdmin("reading", "@AdHoc", "SELECT invocation_id FROM APIARY_INVOCATIONS WHERE graph = "
          + "'o_peek' ORDER BY started_at DESC LIMIT 1").getResults()[0];
      assertTrue(t.advanceRow(), "a read-only invocation is in the log");
      assertTrue(client.result(t.getString(0)).isPresent());
    }
  }
}
