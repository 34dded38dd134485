package org.apiary.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import org.apiary.internal.Json;
import org.junit.jupiter.api.Test;

/** The request hash of one-transaction invocations: equal requests hash alike, different ones apart. */
class RequestHashTest {
  private static JsonNode json(String text) {
    return Json.read(text.getBytes(java.nio.charset.StandardCharsets.UTF_8), JsonNode.class, "test JSON");
  }

  private static long hash(String graph, String key, String... args) {
    return OneTransactionOutcomes.requestHash(graph, json(key), java.util.Arrays.stream(args).map(
        RequestHashTest::json).toList());
  }

  @Test
  void equalRequestsHashAlikeWhateverTheirEncoding() {
    assertEquals(hash("g", "5", "{\"a\":1,\"b\":[true,\"x\"]}"), hash("g", "5", "{ \"b\" : [true, \"x\"], \"a\" : 1 }"));
    assertEquals(hash("g", "5", "7"), OneTransactionOutcomes.requestHash("g", Json.tree(5L), List.of(Json.tree(7))));
  }

  @Test
  void anyDifferenceChangesTheHash() {
    long base = hash("g", "5", "1", "\"x\"");
    assertNotEquals(base, hash("h", "5", "1", "\"x\""));
    assertNotEquals(base, hash("g", "6", "1", "\"x\""));
    assertNotEquals(base, hash("g", "5", "2", "\"x\""));
    assertNotEquals(base, hash("g", "5", "1", "\"y\""));
    assertNotEquals(base, hash("g", "5", "\"x\"", "1"));
    assertNotEquals(base, hash("g", "5", "1"));
    assertNotEquals(hash("g", "5", "\"1\""), hash("g", "5", "1"));
    assertNotEquals(hash("g", "5", "{\"a\":1,\"b\":2}"), hash("g", "5", "{\"a\":2,\"b\":1}"));
  }
}
