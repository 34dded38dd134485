package org.apiary.client;

import java.util.List;
import java.util.Objects;
import org.apiary.internal.Json;
import org.apiary.internal.Output;

/**
 * What a graph execution returned to its caller: every value its functions sent along edges into the sink.
 *
 * <p>The order is deterministic: by function in topological order, then by fan-out instance in the order the
 * instance's partition key first appeared, then in the order each execution returned its values. So a retried or
 * recovered invocation returns the values in the same order as the first. Two results are equal if they have the
 * same invocation ID and the same values in the same order.
 */
public final class GraphResult {
  private final String invocationId;
  private final List<Output> outputs;

  GraphResult(String invocationId, List<Output> outputs) {
    this.invocationId = Objects.requireNonNull(invocationId, "invocationId");
    this.outputs = List.copyOf(outputs);
  }

  /** The invocation's unique ID. */
  public String invocationId() {
    return invocationId;
  }

  /** How many values the graph returned. */
  public int size() {
    return outputs.size();
  }

  /**
   * The single value the graph returned, as {@code type}.
   *
   * @throws IllegalStateException if the graph returned no value or more than one
   * @throws IllegalArgumentException if the value cannot be read as {@code type}
   */
  public <T> T value(Class<T> type) {
    if (outputs.size() != 1) {
      throw new IllegalStateException("invocation " + invocationId + " returned " + outputs.size()
          + " values, not exactly one; use values()");
    }
    return outputs.get(0).valueAs(type);
  }

  /**
   * Every value the graph returned, as {@code type}, in the result's order.
   *
   * @throws IllegalArgumentException if a value cannot be read as {@code type}
   */
  public <T> List<T> values(Class<T> type) {
    return outputs.stream().map(o -> o.valueAs(type)).toList();
  }

  /** The values as a JSON array, in the result's order (what {@code apiary invoke} prints). */
  public String toJson() {
    return Json.MAPPER.createArrayNode().addAll(outputs.stream().map(Output::value).toList()).toString();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof GraphResult r && invocationId.equals(r.invocationId) && outputs.equals(r.outputs);
  }

  @Override
  public int hashCode() {
    return Objects.hash(invocationId, outputs);
  }

  @Override
  public String toString() {
    return "GraphResult[invocationId=" + invocationId + ", values=" + toJson() + "]";
  }
}
