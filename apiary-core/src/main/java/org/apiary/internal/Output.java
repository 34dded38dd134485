package org.apiary.internal;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Objects;

/**
 * One value a function returned with {@code returnOutput}: the edge it was sent along, the partition key it was
 * associated with (for an edge into a local function) and the value, kept as JSON until a reader asks for a type.
 *
 * @param edge the edge ID
 * @param partitionKey the partition key as JSON, or {@code null} for an edge into a global function or the sink
 * @param value the value as JSON
 */
public record Output(String edge, JsonNode partitionKey, JsonNode value) {
  /**
   * The edge of an enqueue a function made in its transaction (issue 42, the outbox): its value names queue,
   * deduplication ID, graph, key and arguments. Recorded with the function's other outputs, in its transaction, and
   * enqueued by the frontend before anything routed from the function runs; never routed. No graph edge can have
   * this ID (registration refuses it).
   */
  public static final String ENQUEUE_EDGE = "apiary:enqueue";
  /** Checks that the edge and value are present. */
  public Output {
    Objects.requireNonNull(edge, "edge");
    Objects.requireNonNull(value, "value");
    if (partitionKey != null && partitionKey.isNull()) {
      partitionKey = null; // JSON null decodes as a NullNode; "no key" is always Java null
    }
  }

  /**
   * The value converted to a Java type with Jackson.
   *
   * @throws IllegalArgumentException naming the edge and the type, if the value cannot be read as {@code type}
   */
  public <T> T valueAs(Class<T> type) {
    return org.apiary.internal.Json.convert(value, type, "output on edge '" + edge + "'");
  }
}
