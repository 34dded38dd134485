package org.apiary.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import org.apiary.FunctionFailedException;
import org.apiary.OutcomeUnknownException;
import org.apiary.internal.Invocation;
import org.apiary.internal.wire.WireReply;
import org.junit.jupiter.api.Test;

/** The fixed label values of the frontend's meters, without a database. */
class FrontendMetricsTest {
  /** Every error code a reply can carry has its own outcome label, named after it; none falls into another's. */
  @Test
  void everyWireErrorCodeHasTheOutcomeNamedAfterIt() throws Exception {
    List<String> codes = new ArrayList<>();
    for (Field f : WireReply.class.getFields()) {
      if (Modifier.isStatic(f.getModifiers()) && f.getType() == String.class) {
        String code = (String) f.get(null);
        if (!code.equals(WireReply.OK) && !code.equals(WireReply.ERROR) && !code.equals(WireReply.RUNNING)) {
          codes.add(code);
        }
      }
    }
    assertEquals(FrontendMetrics.GRAPH_OUTCOMES.size() - 1, codes.size(), "outcomes " + FrontendMetrics.GRAPH_OUTCOMES
        + " for codes " + codes);
    for (String code : codes) {
      int i = FrontendMetrics.GraphMeters.errorIndex(code);
      assertEquals(code.replace('-', '_'), FrontendMetrics.GRAPH_OUTCOMES.get(i), code);
    }
    assertEquals("ok", FrontendMetrics.GRAPH_OUTCOMES.get(0));
  }

  @Test
  void functionErrorsAreToldApartByWhetherAnythingRan() {
    assertEquals(FrontendMetrics.Execution.FAILED, FrontendMetrics.FunctionMeters.classify(
        new FunctionFailedException("f", "java.lang.IllegalStateException", "boom")));
    for (String refusal : List.of(Invocation.STALE_GRAPH, Invocation.CONFLICTING_REQUEST, Invocation.EXPIRED,
        Invocation.PAST_RETENTION)) {
      assertEquals(FrontendMetrics.Execution.REFUSED, FrontendMetrics.FunctionMeters.classify(
          new java.util.concurrent.CompletionException(new FunctionFailedException("f", refusal, "no"))), refusal);
    }
    assertEquals(FrontendMetrics.Execution.ERROR, FrontendMetrics.FunctionMeters.classify(
        new OutcomeUnknownException("lost", null)));
  }

  @Test
  void offRecordsNothingAndScrapesNothing() {
    FrontendMetrics off = FrontendMetrics.OFF;
    off.graph("g").ended(WireReply.ok("id", List.of()), 5);
    off.function("f").succeeded(true, 5);
    assertTrue(off.function("f").off());
    assertEquals("", off.scrape());
  }
}
