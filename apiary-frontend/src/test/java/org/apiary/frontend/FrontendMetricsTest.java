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
  /**
   * The provenance meters sum every server's backlog report and give the newest report's age; a report that cannot
   * be read leaves the previous reading in place; with no report the age is NaN, not a number that looks fresh.
   */
  @Test
  void provenanceMetersSumTheServersReports() {
    java.time.Instant now = java.time.Instant.now();
    List<org.apiary.runtime.provenance.BacklogReport> reports = new ArrayList<>();
    FrontendMetrics metrics = FrontendMetrics.create();
    metrics.bindProvenanceBacklog(() -> List.copyOf(reports));
    assertTrue(metrics.scrape().contains("\napiary_provenance_report_age_seconds NaN"), metrics.scrape());
    assertTrue(metrics.scrape().contains("\napiary_provenance_lag_seconds NaN"), metrics.scrape());
    reports.add(new org.apiary.runtime.provenance.BacklogReport("/a", 1, 5, 7, 100, 2, null, null, false,
        now.minusSeconds(8).toString(), 4096L, 12.5, false));
    reports.add(new org.apiary.runtime.provenance.BacklogReport("/b", 2, 1, 0, 50, 0, null, null, false,
        now.minusSeconds(1).toString(), 0L, 0.25, true));
    // a server from before spill bytes and ages were reported
    reports.add(new org.apiary.runtime.provenance.BacklogReport("/c", 3, 0, 0, 0, 0, null, null, false,
        now.minusSeconds(1).toString(), null, null, null));
    FrontendMetrics fresh = FrontendMetrics.create();
    fresh.bindProvenanceBacklog(() -> List.copyOf(reports));
    String text = fresh.scrape();
    assertTrue(text.contains("\napiary_provenance_backlog_rows 13.0"), text);
    assertTrue(text.contains("\napiary_provenance_spill_rows 7.0"), text);
    assertTrue(text.contains("\napiary_provenance_spill_bytes 4096.0"), "summed over the servers: " + text);
    assertTrue(text.contains("\napiary_provenance_lag_seconds 12.5"), "the oldest over the servers: " + text);
    assertTrue(text.contains("\napiary_provenance_rows_loaded_total 150.0"), text);
    assertTrue(text.contains("\napiary_provenance_rows_dropped_total 2.0"), text);
    java.util.regex.Matcher age = java.util.regex.Pattern.compile("\napiary_provenance_report_age_seconds (\\S+)")
        .matcher(text);
    assertTrue(age.find(), text);
    double seconds = Double.parseDouble(age.group(1));
    assertTrue(seconds >= 1 && seconds < 8, "the newest report's age, not the oldest's: " + seconds);
  }

  /** Every error code a reply can carry has its own outcome label, named after it; none falls into another's. */
  @Test
  void everyWireErrorCodeHasTheOutcomeNamedAfterIt() throws Exception {
    List<String> codes = new ArrayList<>();
    for (Field f : WireReply.class.getFields()) {
      if (Modifier.isStatic(f.getModifiers()) && f.getType() == String.class) {
        String code = (String) f.get(null);
        // QUEUED qualifies a RUNNING answer (issue 42): not an outcome either.
        if (!code.equals(WireReply.OK) && !code.equals(WireReply.ERROR) && !code.equals(WireReply.RUNNING)
            && !code.equals(WireReply.QUEUED)) {
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
    for (org.apiary.internal.ExecutionRefusedException.Reason refusal
        : org.apiary.internal.ExecutionRefusedException.Reason.values()) {
      assertEquals(FrontendMetrics.Execution.REFUSED, FrontendMetrics.FunctionMeters.classify(
          new java.util.concurrent.CompletionException(new org.apiary.internal.ExecutionRefusedException("f", refusal,
              "no"))), refusal.name());
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
