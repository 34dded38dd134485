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
 * @param purpose the data-use purpose this call states (see {@link org.apiary.AccessPolicy}), or {@code null} for
 *     the client's ({@link ClientConfig#purpose()})
 */
public record InvocationRequest(String id, String graph, JsonNode partitionKey, List<JsonNode> arguments,
                                String purpose) {
  /** A request that states the client's purpose. */
  public InvocationRequest(String id, String graph, JsonNode partitionKey, List<JsonNode> arguments) {
    this(id, graph, partitionKey, arguments, null);
  }

  /**
   * Checks the ID's length and the purpose's form.
   *
   * @throws IllegalArgumentException naming what is wrong
   */
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
    if (purpose != null && !org.apiary.AccessPolicy.validName(purpose)) {
      throw new IllegalArgumentException("a purpose is 1 to 64 letters, digits, '_', '.', ':' or '-', not '"
          + purpose + "'");
    }
  }

  /** A request with a fresh random ID; {@code partitionKey} is {@code null} for a graph that starts globally. */
  public static InvocationRequest of(String graph, Object partitionKey, Object... arguments) {
    return new InvocationRequest(UUID.randomUUID().toString(), graph,
        partitionKey == null ? null : Json.tree(partitionKey), Arrays.stream(arguments).map(Json::tree).toList());
  }

  /** The same request under another ID (for example one the caller stored before sending, to retry later). */
  public InvocationRequest withId(String newId) {
    return new InvocationRequest(newId, graph, partitionKey, arguments, purpose);
  }

  /** The same request stating another data-use purpose than the client's ({@code null}: the client's). */
  public InvocationRequest withPurpose(String dataUsePurpose) {
    return new InvocationRequest(id, graph, partitionKey, arguments, dataUsePurpose);
  }
}
