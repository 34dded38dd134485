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
 * @param notBefore for a recorded execution of a logged invocation, the invocation's start (milliseconds since the
 *     epoch by the database's clock) less the clock skew between database hosts: no record of the invocation is older.
 *     If retention's cutoff (the fence it advances before deleting) is later, some of its records may be gone, so
 *     the execution refuses to run with {@link #PAST_RETENTION} rather than apply writes a second time; {@code null}:
 *     no such check
 * @param deadline for a recorded execution of a one-transaction invocation, the latest transaction time (milliseconds
 *     since the epoch, by the database's clock) at which it may still run: its client's expiry plus the clock skew
 *     allowed. A later execution (a frontend paused after it checked the request) refuses with {@link #EXPIRED},
 *     since retention may have deleted the record of an earlier run; {@code null}: no such check
 * @param graphVersion the version of {@code graph} the invocation runs, as its frontend knows it (kept in the
 *     database's journal with the transaction), or {@code null} if not known
 */
public record Invocation(Map<String, List<JsonNode>> inputs, String invocationId, boolean record, String graph,
                         String caller, boolean firstRun, boolean exactlyOnce, Map<String, OutputEdge> outputEdges,
                         Long requestHash, String purpose, String callerRoles, Long notBefore, Long deadline,
                         Integer graphVersion) {
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
  /**
   * The error type of a recorded execution refused because its invocation started before retention's cutoff
   * ({@link #notBefore()}): its records may have been deleted, so running it could apply its writes again. Nothing ran.
   */
  public static final String PAST_RETENTION = "org.apiary.internal.PastRetention";
  /**
   * The error type of a recorded execution of a one-transaction invocation refused because it would run after its
   * {@link #deadline()}. Nothing ran.
   */
  public static final String EXPIRED = "org.apiary.internal.Expired";

  public Invocation {
    Objects.requireNonNull(inputs, "inputs");
    Map<String, List<JsonNode>> copy = new LinkedHashMap<>();
    inputs.forEach((edge, values) -> copy.put(edge, List.copyOf(values)));
    inputs = copy;
    if (record && invocationId == null) {
      throw new IllegalArgumentException("a recorded execution needs an invocation ID");
    }
  }

  /** An execution whose graph version is not known. */
  public Invocation(Map<String, List<JsonNode>> inputs, String invocationId, boolean record, String graph,
                    String caller, boolean firstRun, boolean exactlyOnce, Map<String, OutputEdge> outputEdges,
                    Long requestHash, String purpose, String callerRoles, Long notBefore, Long deadline) {
    this(inputs, invocationId, record, graph, caller, firstRun, exactlyOnce, outputEdges, requestHash, purpose,
        callerRoles, notBefore, deadline, null);
  }

  /** An execution without retention or expiry fences. */
  public Invocation(Map<String, List<JsonNode>> inputs, String invocationId, boolean record, String graph,
                    String caller, boolean firstRun, boolean exactlyOnce, Map<String, OutputEdge> outputEdges,
                    Long requestHash, String purpose, String callerRoles) {
    this(inputs, invocationId, record, graph, caller, firstRun, exactlyOnce, outputEdges, requestHash, purpose,
        callerRoles, null, null);
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
        purpose, callerRoles, notBefore, deadline, graphVersion);
  }

  /** An invocation whose arguments all arrive on the source edge. */
  public static Invocation ofArguments(Object... args) {
    return new Invocation(Map.of(org.apiary.ApiaryFunction.SOURCE,
        java.util.Arrays.stream(args).map(Json::tree).toList()));
  }

  /** The first byte of {@link #toBytes()}'s binary form; JSON (which earlier releases sent) starts with '{'. */
  private static final byte BINARY = (byte) 0xA1;
  private static final int RECORD = 1;
  private static final int FIRST_RUN = 2;
  private static final int EXACTLY_ONCE = 4;
  private static final int HAS_REQUEST_HASH = 8;
  private static final int HAS_OUTPUT_EDGES = 16;
  private static final int HAS_NOT_BEFORE = 32;
  private static final int HAS_DEADLINE = 64;
  private static final int HAS_GRAPH_VERSION = 128;

  /**
   * Encodes this invocation for the database's site threads, which decode it once per function execution: a binary
   * envelope (flags, length-prefixed UTF-8 strings, the request hash, the output edges, each input edge's name and
   * value count) followed by every input value as one JSON array, parsed only if there is a value. Parsing all of it
   * as JSON was about 40% of the site threads' Java time on the counter (JFR).
   */
  public byte[] toBytes() {
    // One unsynchronized buffer for the envelope and the JSON values (a DataOutputStream over a
    // ByteArrayOutputStream took a lock per byte written and copied the values once more).
    ByteArrayBuilder out = new ByteArrayBuilder(128);
    out.append(BINARY);
    out.append((record ? RECORD : 0) | (firstRun ? FIRST_RUN : 0) | (exactlyOnce ? EXACTLY_ONCE : 0)
        | (requestHash != null ? HAS_REQUEST_HASH : 0) | (outputEdges != null ? HAS_OUTPUT_EDGES : 0)
        | (notBefore != null ? HAS_NOT_BEFORE : 0) | (deadline != null ? HAS_DEADLINE : 0)
        | (graphVersion != null ? HAS_GRAPH_VERSION : 0));
    writeString(out, invocationId);
    writeString(out, graph);
    writeString(out, caller);
    writeString(out, purpose);
    writeString(out, callerRoles);
    if (requestHash != null) {
      writeLong(out, requestHash);
    }
    if (notBefore != null) {
      writeLong(out, notBefore);
    }
    if (deadline != null) {
      writeLong(out, deadline);
    }
    if (graphVersion != null) {
      out.appendFourBytes(graphVersion);
    }
    if (outputEdges != null) {
      out.appendFourBytes(outputEdges.size());
      for (Map.Entry<String, OutputEdge> edge : outputEdges.entrySet()) {
        writeString(out, edge.getKey());
        writeString(out, edge.getValue().kind() == null ? null : edge.getValue().kind().name());
        writeString(out, edge.getValue().targetKey() == null ? null : edge.getValue().targetKey().name());
      }
    }
    out.appendFourBytes(inputs.size());
    int values = 0;
    for (Map.Entry<String, List<JsonNode>> edge : inputs.entrySet()) {
      writeString(out, edge.getKey());
      out.appendFourBytes(edge.getValue().size());
      values += edge.getValue().size();
    }
    if (values > 0) {
      try (JsonGenerator g = Json.MAPPER.createGenerator(out)) {
        g.writeStartArray();
        for (List<JsonNode> edge : inputs.values()) {
          for (JsonNode value : edge) {
            Json.writeTree(g, value);
          }
        }
        g.writeEndArray();
      } catch (IOException e) {
        throw new IllegalArgumentException("function invocation cannot be encoded: " + e.getMessage(), e);
      }
    }
    return out.toByteArray();
  }

  private static void writeLong(ByteArrayBuilder out, long value) {
    out.appendFourBytes((int) (value >>> 32));
    out.appendFourBytes((int) value);
  }

  private static void writeString(ByteArrayBuilder out, String value) {
    if (value == null) {
      out.appendFourBytes(-1);
      return;
    }
    byte[] utf8 = value.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    out.appendFourBytes(utf8.length);
    out.write(utf8);
  }

  /**
   * Decodes {@link #toBytes()}'s binary form, or the JSON object earlier releases sent (fields in any order; unknown
   * fields are skipped), so a frontend of the previous release can call procedures of this one.
   */
  public static Invocation fromBytes(byte[] bytes) {
    if (bytes.length > 0 && bytes[0] == BINARY) {
      return fromBinary(bytes);
    }
    return fromJson(bytes);
  }

  private static Invocation fromBinary(byte[] bytes) {
    java.nio.ByteBuffer in = java.nio.ByteBuffer.wrap(bytes);
    try {
      in.get();
      int flags = in.get();
      String invocationId = readString(in);
      String graph = readString(in);
      String caller = readString(in);
      String purpose = readString(in);
      String callerRoles = readString(in);
      Long requestHash = (flags & HAS_REQUEST_HASH) != 0 ? in.getLong() : null;
      Long notBefore = (flags & HAS_NOT_BEFORE) != 0 ? in.getLong() : null;
      Long deadline = (flags & HAS_DEADLINE) != 0 ? in.getLong() : null;
      Integer graphVersion = (flags & HAS_GRAPH_VERSION) != 0 ? in.getInt() : null;
      Map<String, OutputEdge> outputEdges = null;
      if ((flags & HAS_OUTPUT_EDGES) != 0) {
        int count = count(in);
        outputEdges = new LinkedHashMap<>();
        for (int i = 0; i < count; i++) {
          String edge = readString(in);
          String kind = readString(in);
          String targetKey = readString(in);
          outputEdges.put(edge, new OutputEdge(kind == null ? null : ValueKind.valueOf(kind),
              targetKey == null ? null : PartitionKeyType.valueOf(targetKey)));
        }
      }
      int edges = count(in);
      List<String> names = new ArrayList<>(edges);
      int[] sizes = new int[edges];
      int values = 0;
      for (int i = 0; i < edges; i++) {
        names.add(readString(in));
        sizes[i] = count(in);
        values += sizes[i];
      }
      Map<String, List<JsonNode>> inputs = new LinkedHashMap<>();
      if (values == 0) {
        for (String name : names) {
          inputs.put(name, new ArrayList<>(0));
        }
      } else {
        try (JsonParser p = Json.MAPPER.createParser(bytes, in.position(), in.remaining())) {
          expect(p, p.nextToken(), JsonToken.START_ARRAY);
          for (int i = 0; i < edges; i++) {
            List<JsonNode> list = new ArrayList<>(sizes[i]);
            for (int k = 0; k < sizes[i]; k++) {
              p.nextToken();
              list.add(Json.readTree(p));
            }
            inputs.put(names.get(i), list);
          }
          expect(p, p.nextToken(), JsonToken.END_ARRAY);
        }
      }
      return new Invocation(inputs, invocationId, (flags & RECORD) != 0, graph, caller, (flags & FIRST_RUN) != 0,
          (flags & EXACTLY_ONCE) != 0, outputEdges, requestHash, purpose, callerRoles, notBefore, deadline,
          graphVersion);
    } catch (java.nio.BufferUnderflowException | IOException | IllegalArgumentException e) {
      throw new IllegalArgumentException("malformed function invocation (binary, " + bytes.length + " bytes): "
          + (e.getMessage() == null ? "truncated" : e.getMessage()), e);
    }
  }

  private static int count(java.nio.ByteBuffer in) {
    int n = in.getInt();
    if (n < 0 || n > in.remaining()) {
      throw new IllegalArgumentException("a count of " + n + " with " + in.remaining() + " bytes left");
    }
    return n;
  }

  private static String readString(java.nio.ByteBuffer in) {
    int length = in.getInt();
    if (length == -1) {
      return null;
    }
    if (length < 0 || length > in.remaining()) {
      throw new IllegalArgumentException("a string of " + length + " bytes with " + in.remaining() + " left");
    }
    String value = new String(in.array(), in.position(), length, java.nio.charset.StandardCharsets.UTF_8);
    in.position(in.position() + length);
    return value;
  }

  private static Invocation fromJson(byte[] bytes) {
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
      Long notBefore = null;
      Long deadline = null;
      Integer graphVersion = null;
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
          case "notBefore" -> notBefore = value == JsonToken.VALUE_NULL ? null : p.getLongValue();
          case "deadline" -> deadline = value == JsonToken.VALUE_NULL ? null : p.getLongValue();
          case "graphVersion" -> graphVersion = value == JsonToken.VALUE_NULL ? null : p.getIntValue();
          default -> p.skipChildren();
        }
      }
      if (inputs == null) {
        throw new IllegalArgumentException("malformed function invocation: no inputs");
      }
      return new Invocation(inputs, invocationId, record, graph, caller, firstRun, exactlyOnce, outputEdges,
          requestHash, purpose, callerRoles, notBefore, deadline, graphVersion);
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
