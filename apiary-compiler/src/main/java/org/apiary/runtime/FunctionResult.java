package org.apiary.runtime;

import java.util.List;
import org.apiary.internal.Output;

/**
 * What one function execution returned.
 *
 * @param function the function's name
 * @param outputs every output, in the order the function returned them
 * @param replayed whether the outputs came from a recorded earlier execution instead of running the function
 */
public record FunctionResult(String function, List<Output> outputs, boolean replayed) {
  public FunctionResult {
    outputs = List.copyOf(outputs);
  }

  /** The outputs sent along one edge. */
  public List<Output> outputs(String edge) {
    return outputs.stream().filter(o -> o.edge().equals(edge)).toList();
  }

  /**
   * The single value the function returned to the caller (on the sink edge), as {@code type}.
   *
   * @throws IllegalStateException if the function returned no value or several on the sink edge
   */
  public <T> T value(Class<T> type) {
    List<Output> sink = outputs(org.apiary.ApiaryFunction.SINK);
    if (sink.size() != 1) {
      throw new IllegalStateException("function '" + function + "' returned " + sink.size()
          + " values to the caller, not exactly one");
    }
    return sink.get(0).valueAs(type);
  }
}
