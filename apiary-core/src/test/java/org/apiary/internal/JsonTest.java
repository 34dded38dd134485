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

  enum Mood { GLAD, SAD }

  record Reading(float ratio, double exact, java.math.BigDecimal price, java.math.BigInteger big, byte[] blob,
                 char initial, Mood mood, List<Point> points, Map<String, Object> extra, int[] counts) {}

  @Test
  void aReturnedValueWrittenOnceEncodesAsItsTreeDoes() {
    Map<String, Object> extra = new java.util.LinkedHashMap<>();
    extra.put("nested", List.of(Map.of("k", 1), List.of()));
    extra.put("none", null);
    extra.put("text", "caf\u00e9 \"quoted\" \\ \n \u2603 \u0001");
    Reading reading = new Reading(0.1f, 1e300, new java.math.BigDecimal("12.50"),
        new java.math.BigInteger("123456789012345678901234567890"), new byte[] {1, 2, -3}, 'x', Mood.SAD,
        List.of(new Point(1, "a"), new Point(-2, null)), extra, new int[] {3, 4});
    List<Object> values = new java.util.ArrayList<>(List.of(reading, List.of(reading, reading), extra,
        new java.util.LinkedHashSet<>(List.of("b", "a")), new long[0], Map.of(), List.of(), new Point(7, "p"),
        7L, "s", 2.5, true, Mood.GLAD, 'c', new java.math.BigDecimal("1.0")));
    values.add(null);
    values.add(Json.tree(List.of(1, 2)));
    for (Object value : values) {
      byte[] asTree = FunctionOutputs.encode(List.of(new Output("e", null, Json.tree(value))));
      byte[] once = FunctionOutputs.encode(List.of(new Output("e", null, Json.output(value))));
      // Every reader sees the same values; the bytes differ only where a tree normalizes (12.50 becomes 12.5).
      assertEquals(FunctionOutputs.decode(asTree), FunctionOutputs.decode(once), String.valueOf(value));
      if (!(value instanceof Reading) && !(value instanceof List<?> l && l.contains(reading))) {
        assertEquals(new String(asTree, java.nio.charset.StandardCharsets.UTF_8),
            new String(once, java.nio.charset.StandardCharsets.UTF_8), String.valueOf(value));
      }
      for (ValueKind kind : ValueKind.values()) {
        assertEquals(kind.accepts(Json.tree(value)), kind.accepts(Json.output(value)), kind + " " + value);
      }
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Json.output(new Object()));
    assertTrue(e.getMessage().startsWith("value of type java.lang.Object cannot be serialized to JSON"),
        e.getMessage());
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
