package org.apiary.internal;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.ArrayList;
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
 * @param purpose the data-use purpose the graph's caller stated, or {@code null} (recorded in provenance)
 * @param callerRoles the caller's roles as its frontend established them (sorted, comma-separated), or {@code null}
 *     (recorded in provenance)
 */
public record Invocation(Map<String, List<JsonNode>> inputs, String invocationId, boolean record, String graph,
                         String caller, boolean firstRun, boolean exactlyOnce, Map<String, OutputEdge> outputEdges,
                         Long requestHash, String purpose, String callerRoles) {
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

  /** An execution without a stated purpose. */
  public Invocation(Map<String, List<JsonNode>> inputs, String invocationId, boolean record, String graph,
                    String caller, boolean firstRun, boolean exactlyOnce, Map<String, OutputEdge> outputEdges,
                    Long requestHash) {
    this(inputs, invocationId, record, graph, caller, firstRun, exactlyOnce, outputEdges, requestHash, null, null);
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
    return new Invocation(inputs, invocationId, true, graph, caller, false, exactlyOnce, outputEdges, requestHash,
        purpose, callerRoles);
  }

  /** An invocation whose arguments all arrive on the source edge. */
  public static Invocation ofArguments(Object... args) {
    return new Invocation(Map.of(org.apiary.ApiaryFunction.SOURCE,
        java.util.Arrays.stream(args).map(Json::tree).toList()));
  }

  /**
   * Encodes this invocation as JSON: an object with one field per component, in declaration order, as Jackson's
   * data binding would write it. Written with the streaming API: it is decoded on the database's site threads, once
   * per function execution, where data binding's reflection cost more than the function itself.
   */
  public byte[] toBytes() {
    try {
      ByteArrayBuilder out = new ByteArrayBuilder(256);
      try (JsonGenerator g = Json.MAPPER.createGenerator(out)) {
        g.writeStartObject();
        g.writeObjectFieldStart("inputs");
        for (Map.Entry<String, List<JsonNode>> edge : inputs.entrySet()) {
          g.writeArrayFieldStart(edge.getKey());
          for (JsonNode value : edge.getValue()) {
            Json.writeTree(g, value);
          }
          g.writeEndArray();
        }
        g.writeEndObject();
        g.writeStringField("invocationId", invocationId);
        g.writeBooleanField("record", record);
        g.writeStringField("graph", graph);
        g.writeStringField("caller", caller);
        g.writeBooleanField("firstRun", firstRun);
        g.writeBooleanField("exactlyOnce", exactlyOnce);
        if (outputEdges == null) {
          g.writeNullField("outputEdges");
        } else {
          g.writeObjectFieldStart("outputEdges");
          for (Map.Entry<String, OutputEdge> edge : outputEdges.entrySet()) {
            g.writeObjectFieldStart(edge.getKey());
            OutputEdge e = edge.getValue();
            g.writeStringField("kind", e.kind() == null ? null : e.kind().name());
            g.writeStringField("targetKey", e.targetKey() == null ? null : e.targetKey().name());
            g.writeEndObject();
          }
          g.writeEndObject();
        }
        if (requestHash == null) {
          g.writeNullField("requestHash");
        } else {
          g.writeNumberField("requestHash", requestHash);
        }
        g.writeStringField("purpose", purpose);
        g.writeStringField("callerRoles", callerRoles);
        g.writeEndObject();
      }
      return out.toByteArray();
    } catch (IOException e) {
      throw new IllegalArgumentException("function invocation cannot be encoded: " + e.getMessage(), e);
    }
  }

  /** Decodes {@link #toBytes()}'s JSON (fields in any order; unknown fields are skipped). */
  public static Invocation fromBytes(byte[] bytes) {
    try (JsonParser p = Json.MAPPER.createParser(bytes)) {
      expect(p, p.nextToken(), JsonToken.START_OBJECT);
      Map<String, List<JsonNode>> inputs = null;
      String invocationId = null;
      boolean record = false;
      String graph = null;
      String caller = null;
      boolean firstRun = false;
      boolean exactlyOnce = false;
      Map<String, OutputEdge> outputEdges = null;
      Long requestHash = null;
      String purpose = null;
      String callerRoles = null;
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        JsonToken value = p.nextToken();
        switch (field) {
          case "inputs" -> inputs = value == JsonToken.VALUE_NULL ? null : readInputs(p);
          case "invocationId" -> invocationId = Json.text(p, "invocationId");
          case "record" -> record = p.getValueAsBoolean();
          case "graph" -> graph = Json.text(p, "graph");
          case "caller" -> caller = Json.text(p, "caller");
          case "firstRun" -> firstRun = p.getValueAsBoolean();
          case "exactlyOnce" -> exactlyOnce = p.getValueAsBoolean();
          case "outputEdges" -> outputEdges = value == JsonToken.VALUE_NULL ? null : readOutputEdges(p);
          case "requestHash" -> requestHash = value == JsonToken.VALUE_NULL ? null : p.getLongValue();
          case "purpose" -> purpose = Json.text(p, "purpose");
          case "callerRoles" -> callerRoles = Json.text(p, "callerRoles");
          default -> p.skipChildren();
        }
      }
      if (inputs == null) {
        throw new IllegalArgumentException("malformed function invocation: no inputs");
      }
      return new Invocation(inputs, invocationId, record, graph, caller, firstRun, exactlyOnce, outputEdges,
          requestHash, purpose, callerRoles);
    } catch (IOException e) {
      throw new IllegalArgumentException("malformed function invocation: " + e.getMessage(), e);
    }
  }

  private static Map<String, List<JsonNode>> readInputs(JsonParser p) throws IOException {
    expect(p, p.currentToken(), JsonToken.START_OBJECT);
    Map<String, List<JsonNode>> inputs = new LinkedHashMap<>();
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String edge = p.currentName();
      expect(p, p.nextToken(), JsonToken.START_ARRAY);
      List<JsonNode> values = new ArrayList<>(1);
      while (p.nextToken() != JsonToken.END_ARRAY) {
        values.add(Json.readTree(p));
      }
      inputs.put(edge, values);
    }
    return inputs;
  }

  private static Map<String, OutputEdge> readOutputEdges(JsonParser p) throws IOException {
    expect(p, p.currentToken(), JsonToken.START_OBJECT);
    Map<String, OutputEdge> edges = new LinkedHashMap<>();
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String edge = p.currentName();
      expect(p, p.nextToken(), JsonToken.START_OBJECT);
      ValueKind kind = null;
      PartitionKeyType targetKey = null;
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        JsonToken value = p.nextToken();
        if (field.equals("kind") && value != JsonToken.VALUE_NULL) {
          kind = ValueKind.valueOf(p.getText());
        } else if (field.equals("targetKey") && value != JsonToken.VALUE_NULL) {
          targetKey = PartitionKeyType.valueOf(p.getText());
        } else {
          p.skipChildren();
        }
      }
      edges.put(edge, new OutputEdge(kind, targetKey));
    }
    return edges;
  }

  private static void expect(JsonParser p, JsonToken actual, JsonToken expected) throws IOException {
    if (actual != expected) {
      throw new JsonParseException(p, "expected " + expected + " but found " + actual);
    }
  }
}
