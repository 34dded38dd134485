package org.apiary.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.apiary.internal.Json;

/**
 * One graph invocation as a client sends it. The ID identifies the invocation for exactly-once execution: send the
 * same request (same ID) again, to any frontend, and Apiary runs it at most once and returns the first answer.
 * Immutable; {@link #of} makes one, {@link #withId} and {@link #withPurpose} copies. Two requests are equal if their
 * ID, graph, partition key, arguments and purpose are.
 */
public final class InvocationRequest {
  private final String id;
  private final String graph;
  /** As JSON, the form the wire carries; {@code null} if there is none. */
  private final JsonNode partitionKey;
  private final List<JsonNode> arguments;
  private final String purpose;

  private InvocationRequest(String id, String graph, JsonNode partitionKey, List<JsonNode> arguments, String purpose) {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(graph, "graph");
    if (id.isEmpty() || id.length() > 64) {
      throw new IllegalArgumentException("an invocation ID must have 1 to 64 characters, not " + id.length());
    }
    if (purpose != null && !org.apiary.AccessPolicy.validName(purpose)) {
      throw new IllegalArgumentException("a purpose is 1 to 64 letters, digits, '_', '.', ':' or '-', not '"
          + purpose + "'");
    }
    this.id = id;
    this.graph = graph;
    this.partitionKey = partitionKey == null || partitionKey.isNull() ? null : partitionKey;
    this.arguments = List.copyOf(arguments);
    this.purpose = purpose;
  }

  /**
   * A request with a fresh random ID that states the client's purpose.
   *
   * @param graph the registered graph to run
   * @param partitionKey the partition key for local functions fed by the source, or {@code null} for a graph that
   *     starts globally
   * @param arguments the arguments, delivered along every edge out of the source, in order; anything Jackson can
   *     serialize
   */
  public static InvocationRequest of(String graph, Object partitionKey, Object... arguments) {
    return new InvocationRequest(org.apiary.internal.InvocationIds.next(), graph,
        partitionKey == null ? null : Json.tree(partitionKey), Arrays.stream(arguments).map(Json::tree).toList(),
        null);
  }

  /**
   * The same request under another ID (for example one the caller stored before sending, to retry later).
   *
   * @throws IllegalArgumentException if the ID is empty or longer than 64 characters
   */
  public InvocationRequest withId(String newId) {
    return new InvocationRequest(newId, graph, partitionKey, arguments, purpose);
  }

  /**
   * The same request stating another data-use purpose than the client's ({@code null}: the client's; see
   * {@link org.apiary.AccessPolicy}).
   *
   * @throws IllegalArgumentException if the purpose is not 1 to 64 letters, digits, '_', '.', ':' or '-'
   */
  public InvocationRequest withPurpose(String dataUsePurpose) {
    return new InvocationRequest(id, graph, partitionKey, arguments, dataUsePurpose);
  }

  /** The invocation's unique ID, at most 64 characters. */
  public String id() {
    return id;
  }

  /** The graph to run. */
  public String graph() {
    return graph;
  }

  /** The purpose this call states, or {@code null} for the client's ({@link ClientConfig#purpose()}). */
  public String purpose() {
    return purpose;
  }

  JsonNode partitionKey() {
    return partitionKey;
  }

  List<JsonNode> arguments() {
    return arguments;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof InvocationRequest r && id.equals(r.id) && graph.equals(r.graph)
        && Objects.equals(partitionKey, r.partitionKey) && arguments.equals(r.arguments)
        && Objects.equals(purpose, r.purpose);
  }

  @Override
  public int hashCode() {
    return Objects.hash(id, graph, partitionKey, arguments, purpose);
  }

  @Override
  public String toString() {
    return "InvocationRequest[id=" + id + ", graph=" + graph + ", partitionKey=" + partitionKey + ", arguments="
        + arguments + (purpose == null ? "" : ", purpose=" + purpose) + "]";
  }
}
