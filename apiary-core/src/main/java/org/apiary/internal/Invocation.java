package org.apiary.internal;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a caller sends to one function execution: the inputs on each incoming edge, as JSON, and, when the
 * execution is part of a graph invocation, that invocation's ID and whether the execution records its outputs.
 *
 * @param inputs inputs per edge ID, each list in the order the values were sent
 * @param invocationId the graph invocation this execution belongs to, or {@code null} for a direct call
 * @param record whether the execution first looks for, and otherwise stores, its outputs under
 *     (invocation ID, function, partition key), in its own transaction
 * @param graph the graph the execution belongs to, or {@code null} for a direct call (recorded in provenance)
 * @param caller who invoked the graph, as the client said, or {@code null} (recorded in provenance)
 * @param firstRun the invocation was logged as new just before this execution, so no earlier execution can have
 *     recorded outputs and a recorded execution skips the lookup (if one was recorded concurrently after all, the
 *     execution aborts with {@link #RECORDED_ELSEWHERE} and is sent again without this flag)
 * @param exactlyOnce the execution belongs to a graph invocation that records per Algorithm 1, so a function that
 *     writes must be asked to record and a function asked to record must be able to; where the deployed function
 *     and the caller's graph version disagree, the execution aborts with {@link #STALE_GRAPH} before running
 * @param outputEdges in a graph, the edges out of this function by ID, so an output on an unknown edge, of the
 *     wrong kind or with a partition key of the wrong type fails the function inside its transaction (rolling its
 *     writes back) rather than after it committed; {@code null} outside a graph
 * @param requestHash for an invocation that runs as this one recorded execution (a graph of one function), a hash
 *     of the client's request, stored with the record: a later execution under the same invocation ID and key that
 *     finds the record with another hash is refused with {@link #CONFLICTING_REQUEST} instead of replaying it;
 *     {@code null} otherwise
 */
public record Invocation(Map<String, List<JsonNode>> inputs, String invocationId, boolean record, String graph,
                         String caller, boolean firstRun, boolean exactlyOnce, Map<String, OutputEdge> outputEdges,
                         Long requestHash) {
  /**
   * An edge a function's outputs may take.
   *
   * @param kind the JSON shape of the values it carries
   * @param targetKey the partition key type of the local function it leads to, or {@code null} (a global function
   *     or the sink)
   */
  public record OutputEdge(ValueKind kind, PartitionKeyType targetKey) {}

  /** The error type of an execution that found its outputs recorded by a concurrent execution. */
  public static final String RECORDED_ELSEWHERE = RecordedElsewhereException.class.getName();
  /**
   * The error type of an execution refused because the caller's graph version disagrees with the deployed function
   * about whether it writes (the graph was registered again); nothing ran, and the caller retries with the newest
   * version.
   */
  public static final String STALE_GRAPH = "org.apiary.internal.StaleGraphVersion";
  /**
   * The error type of an execution refused because its invocation ID was already used, under the same partition
   * key, for a different request; nothing ran.
   */
  public static final String CONFLICTING_REQUEST = "org.apiary.internal.ConflictingRequest";

  public Invocation {
    Objects.requireNonNull(inputs, "inputs");
    Map<String, List<JsonNode>> copy = new LinkedHashMap<>();
    inputs.forEach((edge, values) -> copy.put(edge, List.copyOf(values)));
    inputs = copy;
    if (record && invocationId == null) {
      throw new IllegalArgumentException("a recorded execution needs an invocation ID");
    }
  }

  /** An execution of a function within a graph invocation whose other executions are logged or unrecorded. */
  public Invocation(Map<String, List<JsonNode>> inputs, String invocationId, boolean record, String graph,
                    String caller, boolean firstRun, boolean exactlyOnce, Map<String, OutputEdge> outputEdges) {
    this(inputs, invocationId, record, graph, caller, firstRun, exactlyOnce, outputEdges, null);
  }

  /** A direct call, outside any graph invocation: nothing recorded. */
  public Invocation(Map<String, List<JsonNode>> inputs) {
    this(inputs, null, false, null, null, false, false, null, null);
  }

  /** An execution of a function for an invocation, outside a named graph. */
  public Invocation(Map<String, List<JsonNode>> inputs, String invocationId, boolean record) {
    this(inputs, invocationId, record, null, null, false, false, null, null);
  }

  /** The same execution sent again to replay its record (it no longer skips the lookup). */
  public Invocation replay() {
    return new Invocation(inputs, invocationId, true, graph, caller, false, exactlyOnce, outputEdges, requestHash);
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
