package org.apiary.drills;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apiary.drills.ProvenanceCheck.Event;
import org.apiary.drills.ProvenanceCheck.Execution;
import org.apiary.drills.ProvenanceWorkload.Invocation;
import org.apiary.drills.ProvenanceWorkload.Outcome;
import org.apiary.drills.ProvenanceWorkload.Step;
import org.apiary.drills.ProvenanceWorkload.Write;
import org.apiary.drills.provenance.Plan;
import org.apiary.drills.provenance.ProvDrillApp;
import org.apiary.drills.provenance.ProvDrillApp.Shape;
import org.junit.jupiter.api.Test;

/**
 * The provenance checker's commit order when a read-only function ran twice: a call lost to a network fault is
 * attempted again, and the lost attempt may still run later, after the record's next write (seen in the network
 * drill, seed 41: {@code misordered=2}, both reads of one such execution). That execution's reads are where it ran,
 * not where the client's model put them; each is still checked for presence and attribution, and a read out of order
 * in an execution that ran once is still a failure.
 */
class ProvenanceCheckOrderTest {
  private static final ProvenanceCheck.Faults NETWORK = new ProvenanceCheck.Faults(-1, -1, 0, -1, 10_000);

  @Test
  void aReadOnlyFunctionRunAgainLaterIsNotMisorderedButAReadOutOfOrderIs() {
    Invocation first = writer("w1", 1, "insert", 1);
    Invocation reader = new Invocation("r", Shape.READ_ONLY, 7L, List.of(step(ProvDrillApp.READ)), "c");
    reader.steps.get(0).reads.add(List.of(7L, 1L));
    reader.steps.get(0).slots.put(List.of(7L, 1L), 1);
    done(reader, 100, 200);
    Invocation second = writer("w2", 3, "update", 2);
    List<Invocation> all = List.of(first, reader, second);

    List<Execution> rows = new ArrayList<>(List.of(row("w1", 10, ProvDrillApp.WRITE, Shape.WRITE_ONLY),
        row("r", 20, ProvDrillApp.READ, Shape.READ_ONLY), row("w2", 30, ProvDrillApp.WRITE, Shape.WRITE_ONLY)));
    List<Event> events = new ArrayList<>(List.of(write(10, "insert", 1), read(20), write(30, "update", 2)));
    assertEquals(0, check(all, rows, events), "one execution of each, in commit order");

    // The lost attempt ran after the second write.
    rows.add(row("r", 40, ProvDrillApp.READ, Shape.READ_ONLY));
    events.add(read(40));
    assertEquals(0, check(all, rows, events), "a read-only function run again later reads where it ran");

    // Once only, but its read placed after the second write: out of order.
    List<Execution> once = List.of(rows.get(0), row("r", 40, ProvDrillApp.READ, Shape.READ_ONLY), rows.get(2));
    ByteArrayOutputStream seen = new ByteArrayOutputStream();
    int status = new ProvenanceCheck(new PrintStream(seen, true, StandardCharsets.UTF_8), NETWORK, List.of())
        .check(all, new ProvenanceCheck.Sink(once, List.of(write(10, "insert", 1), read(40), write(30, "update", 2))));
    assertEquals(1, status, seen.toString(StandardCharsets.UTF_8));
    assertTrue(seen.toString(StandardCharsets.UTF_8).contains("misordered=1"), seen.toString(StandardCharsets.UTF_8));
  }

  private static int check(List<Invocation> all, List<Execution> rows, List<Event> events) {
    ByteArrayOutputStream seen = new ByteArrayOutputStream();
    int status = new ProvenanceCheck(new PrintStream(seen, true, StandardCharsets.UTF_8), NETWORK, List.of())
        .check(all, new ProvenanceCheck.Sink(rows, events));
    if (status != 0) {
      System.out.println(seen.toString(StandardCharsets.UTF_8));
    }
    return status;
  }

  private static Invocation writer(String id, long at, String type, long v) {
    Step s = step(ProvDrillApp.WRITE);
    s.writes.add(new Write(type, 7, 1, "t", v));
    Invocation inv = new Invocation(id, Shape.WRITE_ONLY, 7L, List.of(s), "c");
    done(inv, at * 100, at * 100 + 50);
    return inv;
  }

  private static Step step(String function) {
    return new Step(function, new Plan.Segment("t", 7L, List.of()));
  }

  private static void done(Invocation inv, long sent, long answered) {
    inv.outcome = Outcome.OK;
    inv.modelled = true;
    inv.sentMs = sent;
    inv.answeredMs = answered;
  }

  private static Execution row(String invocation, long tx, String function, Shape shape) {
    return new Execution(String.valueOf(tx), tx, 0, 1, function, shape.graph(), invocation, "7", "c");
  }

  private static Event write(long tx, String type, long v) {
    return new Event(String.valueOf(tx), tx, 0, 1, type, 0, 7, 1, "t", v);
  }

  private static Event read(long tx) {
    return new Event(String.valueOf(tx), tx, 0, 1, "read", 0, 7, 1, null, null);
  }
}
