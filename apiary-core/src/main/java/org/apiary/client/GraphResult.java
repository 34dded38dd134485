package org.apiary.client;

import java.util.List;
import org.apiary.Output;

/**
 * What a graph execution returned to its caller: every value its functions sent along edges into the sink.
 *
 * <p>The order is deterministic: by function in topological order, then by fan-out instance in the order the
 * instance's partition key first appeared, then in the order each execution returned its values. So a retried or
 * recovered invocation returns the outputs in the same order as the first.
 *
 * @param invocationId the invocation's unique ID
 * @param outputs the values on the sink edges
 */
public record GraphResult(String invocationId, List<Output> outputs) {
  public GraphResult {
    outputs = List.copyOf(outputs);
  }

  /**
   * The single value the graph returned, as {@code type}.
   *
   * @throws IllegalStateException if the graph returned no value or more than one
   */
  public <T> T value(Class<T> type) {
    if (outputs.size() != 1) {
      throw new IllegalStateException("invocation " + invocationId + " returned " + outputs.size()
          + " values, not exactly one; use values()");
    }
    return outputs.get(0).valueAs(type);
  }

  /** Every value the graph returned, as {@code type}, in the result's order. */
  public <T> List<T> values(Class<T> type) {
    return outputs.stream().map(o -> o.valueAs(type)).toList();
  }
}
