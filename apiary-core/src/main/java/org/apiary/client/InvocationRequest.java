package org.apiary.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import org.apiary.internal.Json;

/**
 * One graph invocation as a client sends it. The ID identifies the invocation for exactly-once execution: send the
 * same request (same ID) again, to any frontend, and Apiary runs it at most once and returns the first answer.
 *
 * @param id a unique ID of at most 64 characters; {@link #of} makes a random one
 * @param graph the registered graph to run
 * @param partitionKey the partition key for local functions fed by the source, or {@code null} if there are none
 * @param arguments the arguments, delivered along every edge out of the source, in order
 */
public record InvocationRequest(String id, String graph, JsonNode partitionKey, List<JsonNode> arguments) {
  public InvocationRequest {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(graph, "graph");
    if (id.isEmpty() || id.length() > 64) {
      throw new IllegalArgumentException("an invocation ID must have 1 to 64 characters, not " + id.length());
    }
    if (partitionKey != null && partitionKey.isNull()) {
      partitionKey = null;
    }
    arguments = List.copyOf(arguments);
  }

  /** A request with a fresh random ID; {@code partitionKey} is {@code null} for a graph that starts globally. */
  public static InvocationRequest of(String graph, Object partitionKey, Object... arguments) {
    return new InvocationRequest(UUID.randomUUID().toString(), graph,
        partitionKey == null ? null : Json.tree(partitionKey), Arrays.stream(arguments).map(Json::tree).toList());
  }

  /** The same request under another ID (for example one the caller stored before sending, to retry later). */
  public InvocationRequest withId(String newId) {
    return new InvocationRequest(newId, graph, partitionKey, arguments);
  }
}
