package org.apiary.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apiary.internal.Output;
import org.apiary.internal.wire.WireReply;
import org.apiary.internal.wire.WireRequest;
import org.junit.jupiter.api.Test;

/**
 * The hand-written streaming encodings of {@link Invocation} and {@link FunctionOutputs} write exactly the bytes
 * Jackson's data binding writes, and read what it writes (records stored by earlier versions) into what it reads,
 * for values of every JSON shape. The oracle is data binding itself, which these encodings replaced on the hot path.
 */
class StreamingEncodingTest {
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private static JsonNode value(Random r, int depth) {
    return switch (r.nextInt(depth > 2 ? 11 : 13)) {
      case 10 -> NODES.numberNode((short) r.nextInt(1000));
      case 9 -> NODES.numberNode(r.nextFloat());
      case 8 -> NODES.binaryNode(new byte[] {1, 2, (byte) r.nextInt()});
      case 0 -> NODES.numberNode(r.nextLong());
      case 1 -> NODES.numberNode(r.nextInt(100));
      case 2 -> NODES.numberNode(new BigInteger(80, r));
      case 3 -> NODES.numberNode(r.nextDouble() * 1e6);
      case 4 -> NODES.textNode("t\u00e9xt \"" + r.nextInt() + "\\\n\u2603");
      case 5 -> NODES.booleanNode(r.nextBoolean());
      case 6 -> NODES.nullNode();
      case 7 -> NODES.numberNode(new BigDecimal("12.50"));
      case 11 -> {
        ArrayNode a = NODES.arrayNode();
        for (int i = r.nextInt(4); i > 0; i--) {
          a.add(value(r, depth + 1));
        }
        yield a;
      }
      default -> {
        ObjectNode o = NODES.objectNode();
        for (int i = r.nextInt(4); i > 0; i--) {
          o.set("f" + i, value(r, depth + 1));
        }
        yield o;
      }
    };
  }

  private static Invocation invocation(Random r) {
    Map<String, List<JsonNode>> inputs = new LinkedHashMap<>();
    for (int e = r.nextInt(3); e >= 0; e--) {
      List<JsonNode> values = new ArrayList<>();
      for (int i = r.nextInt(3); i > 0; i--) {
        values.add(value(r, 0));
      }
      inputs.put("edge" + e, values);
    }
    Map<String, Invocation.OutputEdge> edges = null;
    if (r.nextBoolean()) {
      edges = new LinkedHashMap<>();
      for (int e = r.nextInt(3); e >= 0; e--) {
        edges.put("out" + e, new Invocation.OutputEdge(ValueKind.values()[r.nextInt(ValueKind.values().length)],
            r.nextBoolean() ? null : PartitionKeyType.values()[r.nextInt(PartitionKeyType.values().length)]));
      }
    }
    boolean graph = r.nextBoolean();
    return new Invocation(inputs, graph ? "id-" + r.nextInt() : null, graph && r.nextBoolean(),
        graph ? "g" : null, r.nextBoolean() ? "caller \u00e9" : null, r.nextBoolean(), r.nextBoolean(), edges,
        r.nextBoolean() ? r.nextLong() : null, r.nextBoolean() ? "treatment" : null, r.nextBoolean() ? "nurse" : null,
        r.nextBoolean() ? r.nextLong() : null, r.nextBoolean() ? r.nextLong() : null,
        graph && r.nextBoolean() ? r.nextInt(Integer.MAX_VALUE) : null);
  }

  @Test
  void anExpiryAddedToAnEncodedRequestReadsBackAndLeavesTheRequestItselfAsItsPrefix() {
    WireRequest request = WireRequest.invoke("id-1", "g", JsonNodeFactory.instance.numberNode(7L), List.of(), "c");
    byte[] plain = request.toBytes();
    byte[] stamped = WireRequest.withExpiry(plain, 1_790_000_000_123L);
    WireRequest read = WireRequest.fromBytes(stamped);
    assertEquals(Long.valueOf(1_790_000_000_123L), read.expires());
    assertEquals(List.of(request.id(), request.graph(), request.caller()), List.of(read.id(), read.graph(),
        read.caller()));
    assertArrayEquals(stamped, read.toBytes(), "the generator writes the field where the splice put it");
    assertArrayEquals(java.util.Arrays.copyOf(plain, plain.length - 1),
        java.util.Arrays.copyOf(stamped, plain.length - 1));
    IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
        () -> WireRequest.fromBytes("{\"type\":\"invoke\",\"id\":\"x\",\"expires\":\"soon\"}".getBytes()));
    assertTrue(bad.getMessage().contains("'expires' must be an integer"), bad.getMessage());
  }

  @Test
  void invocationsRoundTripAndTheJsonOfEarlierReleasesStillReads() throws Exception {
    Random r = new Random(42);
    for (int i = 0; i < 2000; i++) {
      Invocation inv = invocation(r);
      byte[] bound = Json.MAPPER.writeValueAsBytes(inv); // what a frontend of an earlier release sends
      Invocation parsed = Json.MAPPER.readValue(bound, Invocation.class); // numbers as a parser types them
      assertEquals(parsed, Invocation.fromBytes(inv.toBytes()));
      assertEquals(parsed, Invocation.fromBytes(bound));
    }
  }

  @Test
  void aTruncatedBinaryInvocationIsRefusedNamingWhatItIs() {
    Random r = new Random(3);
    for (int i = 0; i < 50; i++) {
      byte[] whole = invocation(r).toBytes();
      for (int length = 1; length < whole.length; length++) {
        byte[] cut = java.util.Arrays.copyOf(whole, length);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Invocation.fromBytes(cut),
            "a prefix of " + length + " of " + whole.length + " bytes");
        assertEquals(true, e.getMessage().startsWith("malformed function invocation"), e.getMessage());
      }
    }
  }

  @Test
  void outputsEncodeAsDataBindingDoesAndReadBothWays() throws Exception {
    Random r = new Random(7);
    TypeReference<List<Output>> list = new TypeReference<>() {};
    for (int i = 0; i < 2000; i++) {
      List<Output> outputs = new ArrayList<>();
      for (int k = r.nextInt(4); k > 0; k--) {
        outputs.add(new Output("e" + k, r.nextBoolean() ? null : value(r, 2), value(r, 0)));
      }
      byte[] bound = Json.MAPPER.writeValueAsBytes(outputs);
      assertArrayEquals(bound, FunctionOutputs.encode(outputs), () -> new String(bound));
      assertEquals(Json.MAPPER.readValue(bound, list), FunctionOutputs.decode(bound));
    }
  }

  @Test
  void valuesAFrontendForwardsWriteTheBytesTheTreesTheyStandForWrite() {
    Random r = new Random(11);
    for (int i = 0; i < 2000; i++) {
      List<Output> outputs = new ArrayList<>();
      for (int k = r.nextInt(4); k > 0; k--) {
        outputs.add(new Output("e" + k, r.nextBoolean() ? null : value(r, 2), value(r, 0)));
      }
      byte[] bytes = FunctionOutputs.encode(outputs);
      List<Output> trees = FunctionOutputs.decode(bytes);
      List<Output> forwarded = FunctionOutputs.decodeForwarding(bytes);
      // Read back, they are what the trees are (bytes may differ: a forwarded 12.50 stays 12.50).
      assertEquals(trees, FunctionOutputs.decode(FunctionOutputs.encode(forwarded)), () -> new String(bytes));
      Map<String, List<JsonNode>> treeInputs = new LinkedHashMap<>();
      Map<String, List<JsonNode>> forwardedInputs = new LinkedHashMap<>();
      for (int k = 0; k < trees.size(); k++) {
        Output tree = trees.get(k);
        Output passed = forwarded.get(k);
        assertEquals(tree.partitionKey(), passed.partitionKey());
        boolean container = tree.value().isArray() || tree.value().isObject();
        assertEquals(container, ForwardedJson.of(passed.value()) != null, tree.value()::toString);
        for (ValueKind kind : ValueKind.values()) {
          assertEquals(kind.accepts(tree.value()), kind.accepts(passed.value()), kind + " " + tree.value());
        }
        assertEquals(ValueKind.describe(tree.value()), ValueKind.describe(passed.value()));
        treeInputs.computeIfAbsent(tree.edge(), e -> new ArrayList<>()).add(tree.value());
        forwardedInputs.computeIfAbsent(passed.edge(), e -> new ArrayList<>()).add(passed.value());
      }
      // Into the next function's invocation, and into the reply, they carry what the trees carry.
      Invocation fromTrees = new Invocation(treeInputs, "id", true, "g", null, true, true, null);
      Invocation fromForwarded = new Invocation(forwardedInputs, "id", true, "g", null, true, true, null);
      assertEquals(Invocation.fromBytes(fromTrees.toBytes()), Invocation.fromBytes(fromForwarded.toBytes()));
      assertEquals(WireReply.fromBytes(WireReply.ok("id", trees).toBytes()),
          WireReply.fromBytes(WireReply.ok("id", forwarded).toBytes()));
    }
  }

  @Test
  void aForwardedValueIsExactlyItsOwnBytesWhateverSurroundsIt() throws Exception {
    byte[] bytes = "[ {\"value\" :  {\"a\" : [1, \"]}\\\"\" ]} , \"edge\":\"e\"} ,{\"edge\":\"f\",\"value\":[]}]"
        .getBytes(java.nio.charset.StandardCharsets.UTF_8);
    List<Output> forwarded = FunctionOutputs.decodeForwarding(bytes);
    assertEquals("{\"a\" : [1, \"]}\\\"\" ]}", ForwardedJson.of(forwarded.get(0).value()).getValue());
    assertEquals("[]", ForwardedJson.of(forwarded.get(1).value()).getValue());
    assertEquals(FunctionOutputs.decode(bytes), FunctionOutputs.decode(FunctionOutputs.encode(forwarded)));
    assertEquals(Json.MAPPER.readTree("{\"a\":[1,\"]}\\\"\"]}"), ForwardedJson.of(forwarded.get(0).value()).tree());
    assertEquals("[{\"edge\":\"f\",\"partitionKey\":null,\"value\":[]}]",
        Json.MAPPER.writeValueAsString(List.of(forwarded.get(1))), "data binding writes it too");
  }

  @Test
  void fieldsInAnyOrderAndUnknownFieldsAreRead() {
    Invocation inv = Invocation.fromBytes(("{\"future\":{\"x\":[1,2]},\"record\":true,\"invocationId\":\"i\","
        + "\"inputs\":{\"source\":[1,\"a\"]}}").getBytes(java.nio.charset.StandardCharsets.UTF_8));
    assertEquals("i", inv.invocationId());
    assertEquals(true, inv.record());
    assertEquals(List.of(NODES.numberNode(1), NODES.textNode("a")), inv.inputs().get("source"));
    List<Output> outputs = FunctionOutputs.decode("[{\"value\":3,\"later\":[],\"edge\":\"sink\"}]"
        .getBytes(java.nio.charset.StandardCharsets.UTF_8));
    assertEquals(List.of(new Output("sink", null, NODES.numberNode(3))), outputs);
  }

  @Test
  void malformedBytesAreRefusedNamingWhatTheyAre() {
    IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
        () -> Invocation.fromBytes("[1]".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    assertEquals(true, bad.getMessage().startsWith("malformed function invocation"), bad.getMessage());
    IllegalStateException badOutputs = assertThrows(IllegalStateException.class,
        () -> FunctionOutputs.decode("[{\"edge\":\"e\"}]".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    assertEquals(true, badOutputs.getMessage().startsWith("malformed function outputs"), badOutputs.getMessage());
  }

  @Test
  void scalarFastPathsAgreeWithJackson() throws Exception {
    for (Object v : new Object[] {1L, Long.MIN_VALUE, "x", "", 7, Integer.MAX_VALUE, true, false}) {
      assertEquals(Json.MAPPER.valueToTree(v), Json.tree(v), String.valueOf(v));
    }
    assertEquals(NODES.nullNode(), Json.tree(null));
    assertEquals(5L, Json.convert(NODES.numberNode(5), Long.class, "v"));
    assertEquals(5L, Json.convert(NODES.numberNode(5L), long.class, "v"));
    assertEquals(5, Json.convert(NODES.numberNode(5L), Integer.class, "v"));
    assertEquals("s", Json.convert(NODES.textNode("s"), String.class, "v"));
    assertEquals(true, Json.convert(NODES.booleanNode(true), Boolean.class, "v"));
    assertThrows(IllegalArgumentException.class, () -> Json.convert(NODES.numberNode(1L << 40), Integer.class, "v"));
    assertThrows(IllegalArgumentException.class,
        () -> Json.convert(NODES.numberNode(BigInteger.ONE.shiftLeft(70)), Long.class, "v"));
    assertThrows(IllegalArgumentException.class, () -> Json.convert(NODES.numberNode(1.5), Long.class, "v"));
  }

  @Test
  void wireMessagesEncodeAsDataBindingDoesAndReadBothWays() throws Exception {
    Random r = new Random(11);
    for (int i = 0; i < 2000; i++) {
      List<JsonNode> args = null;
      if (r.nextInt(4) > 0) {
        args = new ArrayList<>();
        for (int k = r.nextInt(3); k > 0; k--) {
          args.add(value(r, 0));
        }
      }
      WireRequest request = new WireRequest(r.nextBoolean() ? WireRequest.INVOKE : null, "id" + i,
          r.nextBoolean() ? "g" : null, r.nextBoolean() ? null : value(r, 2), args, r.nextBoolean() ? "c" : null,
          r.nextBoolean() ? "ak_0123456789abcdef.secret" : null, r.nextBoolean() ? "billing" : null, r.nextBoolean() ? "clerk,nurse" : null,
          r.nextBoolean() ? null : (Long) r.nextLong());
      byte[] bound = Json.MAPPER.writeValueAsBytes(request);
      assertArrayEquals(bound, request.toBytes(), () -> new String(bound));
      assertEquals(Json.MAPPER.readValue(bound, WireRequest.class), WireRequest.fromBytes(bound), new String(bound));

      List<Output> outputs = null;
      if (r.nextBoolean()) {
        outputs = new ArrayList<>();
        for (int k = r.nextInt(3); k > 0; k--) {
          outputs.add(new Output("e" + k, r.nextBoolean() ? null : value(r, 2), value(r, 0)));
        }
      }
      WireReply reply = new WireReply(r.nextBoolean() ? "id" : null, WireReply.OK, outputs,
          r.nextBoolean() ? WireReply.DATABASE : null, r.nextBoolean() ? "f" : null, r.nextBoolean() ? "E" : null,
          r.nextBoolean() ? "m\u00e9ssage" : null);
      byte[] boundReply = Json.MAPPER.writeValueAsBytes(reply);
      assertArrayEquals(boundReply, reply.toBytes(), () -> new String(boundReply));
      assertEquals(Json.MAPPER.readValue(boundReply, WireReply.class), WireReply.fromBytes(boundReply));
    }
  }

  /** Whatever a client sends, reading it ends in a request or in an IllegalArgumentException saying why. */
  @Test
  void garbledRequestsAreRefusedWithAReason() {
    Random r = new Random(3);
    byte[] valid = WireRequest.invoke("abc", "g", NODES.numberNode(5), List.of(NODES.textNode("x"),
        NODES.objectNode().put("a", 1)), "me").toBytes();
    int refused = 0;
    for (int i = 0; i < 20_000; i++) {
      byte[] garbled = valid.clone();
      for (int k = 1 + r.nextInt(3); k > 0; k--) {
        String noise = "{}[]\":,0a \u00ff";
        garbled[r.nextInt(garbled.length)] = (byte) noise.charAt(r.nextInt(noise.length()));
      }
      if (r.nextInt(10) == 0) {
        garbled = java.util.Arrays.copyOf(garbled, r.nextInt(garbled.length));
      }
      try {
        WireRequest.fromBytes(garbled);
      } catch (IllegalArgumentException e) {
        refused++;
        assertEquals(true, e.getMessage().startsWith("request is not valid: "), e.getMessage());
      }
    }
    assertEquals(true, refused > 1000, "refused " + refused);
    IllegalArgumentException structured = assertThrows(IllegalArgumentException.class,
        () -> WireRequest.fromBytes("{\"type\":\"invoke\",\"id\":{\"a\":1}}".getBytes(
            java.nio.charset.StandardCharsets.UTF_8)));
    assertEquals(true, structured.getMessage().contains("field 'id' must be a string"), structured.getMessage());
    assertThrows(IllegalArgumentException.class, () -> WireRequest.fromBytes(
        "{\"args\":\"x\"}".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
  }
}
