package org.apiary.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.apiary.FunctionFailedException;
import org.apiary.internal.Output;
import org.junit.jupiter.api.Test;

class JsonTest {
  record Point(long x, String label) {}

  @Test
  void recordsAndListsRoundTripThroughAnInvocation() {
    Invocation inv = Invocation.ofArguments(new Point(3, "a"), List.of(1L, 2L));
    Invocation back = Invocation.fromBytes(inv.toBytes());
    List<com.fasterxml.jackson.databind.JsonNode> args = back.inputs().get("source");
    assertEquals(new Point(3, "a"), Json.convert(args.get(0), Point.class, "arg 0"));
    assertEquals(List.of(1, 2), Json.convert(args.get(1), List.class, "arg 1"));
  }

  @Test
  void wrongTypeNamesWhatAndTheExpectedType() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Json.convert(Json.tree("lots"), Long.class, "input on edge 'source'"));
    assertTrue(e.getMessage().startsWith("input on edge 'source' must be an integer (Long)"), e.getMessage());
    IllegalArgumentException n = assertThrows(IllegalArgumentException.class,
        () -> Json.convert(Json.tree(null), long.class, "x"));
    assertTrue(n.getMessage().contains("is null"), n.getMessage());
  }

  @Test
  void malformedInvocationIsRejectedClearly() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Invocation.fromBytes("{not json".getBytes()));
    assertTrue(e.getMessage().startsWith("malformed function invocation"), e.getMessage());
  }

  @Test
  void outputsRoundTrip() {
    List<Output> outs = List.of(new Output("sink", null, Json.tree(Map.of("a", 1))), new Output("next", Json.tree(7), Json.tree("v")));
    assertEquals(outs, FunctionOutputs.decode(FunctionOutputs.encode(outs)));
  }

  @Test
  void functionErrorsSurviveVoltDbStatusTextAroundThem() {
    String status = "VOLTDB ERROR: USER ABORT\n" + FunctionErrors.encode("inc", new IllegalStateException("no \"way\"\nreally"))
        + "\n    at apiary.generated.inc.run(inc.java)";
    FunctionFailedException e = FunctionErrors.decode(status).orElseThrow();
    assertEquals("inc", e.functionName());
    assertEquals("java.lang.IllegalStateException", e.errorType());
    assertEquals("no \"way\"\nreally", e.errorMessage());
    assertTrue(FunctionErrors.decode("some other failure").isEmpty());
  }

  @Test
  void partitionKeyTypesCheckJavaValues() {
    assertEquals(5L, PartitionKeyType.BIGINT.check(5L, "key"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PartitionKeyType.BIGINT.check(5, "key"));
    assertTrue(e.getMessage().contains("has type Integer"), e.getMessage());
    assertEquals(PartitionKeyType.VARCHAR, PartitionKeyType.forColumnType("STRING").orElseThrow());
  }
}
