package org.apiary.drills;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apiary.drills.ExactlyOnceDrill.Effect;
import org.apiary.drills.ExactlyOnceDrill.Invocation;
import org.apiary.drills.ExactlyOnceDrill.Kind;
import org.apiary.drills.ExactlyOnceDrill.Outcome;
import org.apiary.drills.ExactlyOnceDrill.Verdict;
import org.junit.jupiter.api.Test;

/** The exactly-once drill's model on hand-made histories, without a database: what it accepts and what it flags. */
class ExactlyOnceDrillModelTest {
  private static final long KNOWN_FOR_MS = 2700;
  private static final String ID = "s1-c0-7";
  private static final String PAYLOAD = ID + "|a";

  private static Outcome ok(String value) {
    return new Outcome(Kind.OK, null, value);
  }

  private static Outcome notFound() {
    return new Outcome(Kind.NOT_FOUND, null, "no invocation with ID " + ID + " is known");
  }

  private static Effect row(String step, long token, long upstream) {
    return new Effect(ID, step, PAYLOAD, token, upstream, 3);
  }

  private static Map<String, List<String>> judge(Invocation inv, List<Effect> rows) {
    return Verdict.of(inv, rows, KNOWN_FOR_MS);
  }

  @Test
  void aSingleWriterReturnsItsOwnChainWithoutSeen() {
    Invocation inv = new Invocation(ID, "drill_single", 3);
    inv.answer(100, "a", "client(both)", ok(PAYLOAD + ";write=11"));
    inv.observe(101, 102, "after", ok(PAYLOAD + ";write=11"));
    assertEquals(Map.of(), judge(inv, List.of(row("write", 11, 0))));

    Invocation withSeen = new Invocation(ID, "drill_single", 3);
    withSeen.answer(100, "a", "client(both)", ok(PAYLOAD + ";write=11|seen=1"));
    withSeen.observe(101, 102, "after", ok(PAYLOAD + ";write=11|seen=1"));
    assertEquals(Set.of("disagreed"), judge(withSeen, List.of(row("write", 11, 0))).keySet());
  }

  @Test
  void theMultiFunctionGraphsStillEndInSeen() {
    Invocation inv = new Invocation(ID, "drill_one", 3);
    inv.answer(100, "a", "client(both)", ok(PAYLOAD + ";write=11|seen=1"));
    inv.observe(101, 102, "after", ok(PAYLOAD + ";write=11|seen=1"));
    assertEquals(Map.of(), judge(inv, List.of(row("write", 11, 0))));
  }

  @Test
  void anInvocationThatNeverCommittedAgrees() {
    Invocation inv = new Invocation(ID, "drill_single_flaky", 3);
    inv.answer(100, "a", "client(both)", new Outcome(Kind.UNKNOWN, null, "OutcomeUnknownException: timed out"));
    for (int i = 0; i < 3; i++) {
      inv.observe(200 + i, 201 + i, "final check", notFound());
    }
    assertEquals(Map.of(), judge(inv, List.of()));
  }

  @Test
  void anUnknownIdWithARowIsStuck() {
    Invocation inv = new Invocation(ID, "drill_single", 3);
    inv.observe(200, 201, "final check", notFound());
    assertEquals(Set.of("stuck"), judge(inv, List.of(row("write", 11, 0))).keySet());
  }

  @Test
  void anOkNoLookupConfirmsIsStuckAndItsMissingRowLost() {
    Invocation inv = new Invocation(ID, "drill_single", 3);
    inv.answer(100, "a", "client(both)", ok(PAYLOAD + ";write=11"));
    inv.observe(50_000, 50_001, "final check", notFound());
    Map<String, List<String>> problems = judge(inv, List.of());
    assertEquals(Set.of("stuck", "lost"), problems.keySet(), problems.toString());
  }

  @Test
  void anOkIsHeldToItsRowEvenWithoutAStoredOutcome() {
    Invocation inv = new Invocation(ID, "drill_single", 3);
    inv.answer(100, "a", "client(both)", ok(PAYLOAD + ";write=11"));
    inv.observe(50_000, 50_001, "final check", notFound());
    Map<String, List<String>> problems = judge(inv, List.of(row("write", 11, 0), row("write", 12, 0)));
    assertTrue(problems.containsKey("duplicates"), problems.toString());
  }

  @Test
  void unknownSoonAfterAnOkDisagreesButNotAfterRetention() {
    Invocation soon = new Invocation(ID, "drill_single", 3);
    soon.answer(100, "a", "client(both)", ok(PAYLOAD + ";write=11"));
    soon.observe(101, 102, "after", notFound());
    soon.observe(400, 401, "resolver", ok(PAYLOAD + ";write=11"));
    assertEquals(Set.of("disagreed"), judge(soon, List.of(row("write", 11, 0))).keySet());

    Invocation late = new Invocation(ID, "drill_single", 3);
    late.answer(100, "a", "client(both)", ok(PAYLOAD + ";write=11"));
    late.observe(101, 102, "after", ok(PAYLOAD + ";write=11"));
    late.observe(100 + KNOWN_FOR_MS, 101 + KNOWN_FOR_MS, "final check", notFound());
    assertEquals(Map.of(), judge(late, List.of(row("write", 11, 0))));
  }

  @Test
  void aLookupRefusedForAnotherReasonIsNotAnUnknownId() {
    Outcome refused = Outcome.of(new org.apiary.InvalidRequestException("invocation ID " + ID + " was already used "
        + "for a different request"), true);
    assertEquals(Kind.REFUSED, refused.kind());
    assertEquals(Kind.NOT_FOUND, Outcome.of(new org.apiary.InvalidRequestException(
        "invocation '" + ID + "' was refused: no invocation with ID " + ID + " is known"), true).kind());
  }

  @Test
  void aFailedFlakySingleWriterLeavesNoRow() {
    Outcome failed = new Outcome(Kind.FAILED, "flaky_first", "IllegalStateException: key 3 is marked failing");
    Invocation inv = new Invocation(ID, "drill_single_flaky", 3);
    inv.answer(100, "a", "client(both)", failed);
    inv.observe(101, 102, "after", failed);
    assertEquals(Map.of(), judge(inv, List.of()));
    assertEquals(Set.of("disagreed"), judge(inv, List.of(row("flaky_first", 11, 0))).keySet());
  }
}
