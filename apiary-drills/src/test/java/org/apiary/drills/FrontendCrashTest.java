package org.apiary.drills;

import com.fasterxml.jackson.databind.JsonNode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.List;
import org.apiary.OutcomeUnknownException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.GraphResult;
import org.apiary.client.InvocationRequest;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.TestGraphs;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A frontend process dies in the middle of a graph (right after its writing function committed, as if killed
 * there); the invocation is finished by another frontend, (a) when the client retries, (b) with no client at all.
 * Either way the write happens exactly once and the answer is the one the first execution's write produced.
 */
@DatabaseTest
class FrontendCrashTest {
  private static final List<String> FAST_LEASE = List.of("--lease-ms", "2000", "--heartbeat-ms", "400");
  private ApiaryDatabase db;

  @BeforeEach
  void setUp(TestDatabase database) {
    db = database.database();
    TestGraphs.registerOnce(db);
    TestGraphs.clear(db);
  }

  /** A frontend that dies right after {@code bump} commits, and a survivor, started at once. */
  private FrontendProcess[] doomedAndSurvivor() throws InterruptedException {
    List<String> crashing = new java.util.ArrayList<>(FAST_LEASE);
    crashing.addAll(List.of("--crash-after", "bump"));
    return FrontendProcess.startTwo(db.clientAddresses(), crashing, FAST_LEASE, Duration.ofSeconds(60));
  }

  private static List<Long> longs(GraphResult r) {
    return ((List<?>) r.values(List.class).get(0)).stream().map(v -> ((Number) v).longValue()).toList();
  }

  @Test
  void aClientRetryToAnotherFrontendFinishesTheGraphWithoutRepeatingTheWrite() throws InterruptedException {
    FrontendProcess[] pair = doomedAndSurvivor();
    try (FrontendProcess doomed = pair[0];
         FrontendProcess survivor = pair[1];
         ApiaryClient client = ApiaryClient.connect(ClientConfig.of(doomed.endpoint(), survivor.endpoint())
             .withAttemptTimeout(Duration.ofSeconds(3)))) {
      GraphResult r = client.invoke("bumpAndReport", 21L, 5L);
      assertEquals(137, doomed.awaitExit(Duration.ofSeconds(30)), "the first frontend should have died mid-graph:\n"
          + doomed.output());
      assertEquals(List.of(5L, 5L), longs(r));
      assertEquals(5L, TestGraphs.counter(db, 21L));
      // Asking again, anywhere, gives the same answer and changes nothing.
      assertEquals(r.values(JsonNode.class), client.invoke(InvocationRequest.of("bumpAndReport", 21L, 5L)
          .withId(r.invocationId())).values(JsonNode.class));
      assertEquals(5L, TestGraphs.counter(db, 21L));
    }
  }

  @Test
  void aLiveFrontendRecoversTheDeadOnesInvocationWithoutTheClient() throws InterruptedException {
    FrontendProcess[] pair = doomedAndSurvivor();
    try (FrontendProcess doomed = pair[0]; FrontendProcess survivor = pair[1]) {
      InvocationRequest request = InvocationRequest.of("bumpAndReport", 22L, 7L);
      try (ApiaryClient onlyDoomed = ApiaryClient.connect(ClientConfig.of(doomed.endpoint())
          .withAttemptTimeout(Duration.ofSeconds(5)).withMaxAttempts(1))) {
        assertThrows(OutcomeUnknownException.class, () -> onlyDoomed.invoke(request));
        // The client stays open until the frontend died: on a loaded machine the request may still be on its way
        // when the attempt times out, and closing the client would drop it (the frontend then never crashes).
        assertEquals(137, doomed.awaitExit(Duration.ofSeconds(30)), doomed.output());
      }
      try (ApiaryClient anyone = ApiaryClient.connect(ClientConfig.of(survivor.endpoint()))) {
        GraphResult r = anyone.awaitResult(request.id(), Duration.ofSeconds(60));
        assertEquals(List.of(7L, 7L), longs(r));
      }
      assertEquals(7L, TestGraphs.counter(db, 22L));
    }
  }
}
