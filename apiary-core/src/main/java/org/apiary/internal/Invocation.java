package org.apiary.internal;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a caller sends to one function execution: the inputs on each incoming edge, as JSON.
 *
 * @param inputs inputs per edge ID, each list in the order the values were sent
 */
public record Invocation(Map<String, List<JsonNode>> inputs) {
  public Invocation {
    Objects.requireNonNull(inputs, "inputs");
    Map<String, List<JsonNode>> copy = new LinkedHashMap<>();
    inputs.forEach((edge, values) -> copy.put(edge, List.copyOf(values)));
    inputs = copy;
  }

  /** An invocation whose arguments all arrive on the source edge. */
  public static Invocation ofArguments(Object... args) {
    return new Invocation(Map.of(org.apiary.ApiaryFunction.SOURCE,
        java.util.Arrays.stream(args).map(Json::tree).toList()));
  }

  public byte[] toBytes() {
    return Json.bytes(this);
  }

  public static Invocation fromBytes(byte[] bytes) {
    try {
      return Json.MAPPER.readValue(bytes, Invocation.class);
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("malformed function invocation: " + e.getMessage(), e);
    }
  }
}
