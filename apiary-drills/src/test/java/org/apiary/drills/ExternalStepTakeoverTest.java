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
import org.apiary.frontend.PaymentStub;
import org.apiary.frontend.Registrar;
import org.apiary.frontend.TestGraphs;
import org.apiary.frontend.testapp.ExternalApp;
import org.apiary.internal.Json;
import org.apiary.testing.DatabaseTest;
import org.apiary.testing.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 42's "an external step re-called after a takeover": a frontend process halts (exit 137, as under SIGKILL)
 * right after its external step returned, before the next function ran; a live frontend takes the invocation over
 * and finishes it. The payment stub, which counts its calls, must have been called once: the step's recorded
 * outputs are replayed, not the step.
 */
@DatabaseTest
class ExternalStepTakeoverTest {
  private static final List<String> FAST_LEASE = List.of("--lease-ms", "2000", "--heartbeat-ms", "400");
  private static boolean registered;
  private ApiaryDatabase db;

  @BeforeEach
  void setUp(TestDatabase database) {
    db = database.database();
    synchronized (ExternalStepTakeoverTest.class) {
      if (!registered) {
        TestGraphs.registerOnce(db);
        Registrar.register(db, ExternalApp.APP);
        registered = true;
      }
    }
    TestGraphs.clear(db);
  }

  @Test
  void aStepThatReturnedBeforeItsFrontendDiedIsNotCalledAgainByTheFrontendThatTakesOver()
      throws InterruptedException {
    List<String> crashing = new java.util.ArrayList<>(FAST_LEASE);
    crashing.addAll(List.of("--crash-after", "charge"));
    FrontendProcess[] pair = FrontendProcess.startTwo(db.clientAddresses(), crashing, FAST_LEASE,
        Duration.ofSeconds(60));
    try (FrontendProcess doomed = pair[0];
         FrontendProcess survivor = pair[1];
         PaymentStub stub = PaymentStub.start()) {
      InvocationRequest request = InvocationRequest.of("chargeThenBump", null, stub.url(), 41L, 9L);
      try (ApiaryClient onlyDoomed = ApiaryClient.connect(ClientConfig.of(doomed.endpoint())
          .withAttemptTimeout(Duration.ofSeconds(5)).withMaxAttempts(1))) {
        assertThrows(OutcomeUnknownException.class, () -> onlyDoomed.invoke(request));
        assertEquals(137, doomed.awaitExit(Duration.ofSeconds(30)), doomed.output());
      }
      try (ApiaryClient anyone = ApiaryClient.connect(ClientConfig.of(survivor.endpoint()))) {
        GraphResult r = anyone.awaitResult(request.id(), Duration.ofSeconds(60));
        assertEquals("[\"receipt-1\",[9,9]]", Json.tree(r.values(JsonNode.class)).toString());
        // Resending the request anywhere changes nothing either.
        assertEquals(r.values(JsonNode.class), anyone.invoke(request).values(JsonNode.class));
      }
      // The doomed frontend called it (it halted only after the step returned); nobody may have called it since.
      assertEquals(1, stub.calls(), "the external step was called " + stub.calls() + " times, with keys "
          + stub.keys() + ":\n" + survivor.output());
      assertEquals(9L, TestGraphs.counter(db, 41L));
    }
  }
}
