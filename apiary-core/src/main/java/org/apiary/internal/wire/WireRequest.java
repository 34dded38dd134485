package org.apiary.internal.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apiary.internal.Json;

/**
 * A request from a client to a frontend: one JSON document in one ZeroMQ frame.
 *
 * <ul>
 *   <li>{@code {"type":"invoke","id":ID,"graph":NAME,"key":KEY,"args":[...]}} runs a graph (or, with the same ID,
 *       re-attaches to the execution already started under that ID);</li>
 *   <li>{@code {"type":"start", ...}}, with an invoke request's fields, starts a graph and is answered as soon as the
 *       invocation is durably logged ({@code "running"}), or with its outcome if it already ended (issue 42);</li>
 *   <li>{@code {"type":"result","id":ID}} asks for the outcome of an earlier invocation;</li>
 *   <li>{@code {"type":"cancel","id":ID,"args":[REASON]}} cancels a running invocation and is answered with its stored
 *       outcome (the cancellation, or the outcome it had already ended with) (issue 42);</li>
 *   <li>{@code {"type":"enqueue", ..., "queue":NAME, "dedup":ID}}, with an invoke request's fields, puts the invocation
 *       on a durable queue and is answered ({@code "running"}, its one output the item's invocation ID) once the item
 *       is stored, or with the existing item's ID if the deduplication ID is taken by the same request (issue 42);
 *       {@code "delayMs":N} keeps the item from starting until N ms after it is stored (by the database's clock);
 *       {@code "priority":P} (an integer, on a queue declared with {@code Queue.priority()}) has it claimed before
 *       waiting items of lower priority.</li>
 * </ul>
 *
 * @param type {@link #INVOKE} or {@link #RESULT}
 * @param id the client-generated invocation ID
 * @param graph the graph to run (invoke only)
 * @param key the partition key for the graph's first local functions, or {@code null}
 * @param args the arguments, sent along every edge out of the graph's source
 * @param caller who is calling, as the client says (recorded in provenance), or {@code null}; a frontend that
 *     requires credentials replaces it with the identity the credential belongs to
 * @param credential the caller's API key, or {@code null}; a frontend strips it before it stores a request
 * @param purpose the data-use purpose the call states, or {@code null}; checked against the graph's access policy
 *     and recorded in provenance
 * @param roles the caller's roles as the frontend established them from its credential (sorted, comma-separated),
 *     or {@code null}; whatever a client sends here is replaced before the request is checked or stored, and it is
 *     recorded in provenance with the caller
 * @param expires for an invoke request, the time (milliseconds since the epoch by the client's clock) after which
 *     its client no longer waits for it, or {@code null}; a frontend does not start a request it receives later than
 *     this (plus its clock-skew allowance), because by then the client may have been answered elsewhere and the
 *     invocation's outcome may since have been deleted, so running it could apply its writes a second time
 * @param queue an enqueue's queue, else {@code null}
 * @param dedup an enqueue's deduplication ID, or {@code null}
 * @param delayMs how long after it is stored an enqueued item may start, in milliseconds, or {@code null} for at once
 * @param priority an enqueued item's priority (higher is claimed first), or {@code null} for 0
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record WireRequest(String type, String id, String graph, JsonNode key, List<JsonNode> args, String caller,
                          String credential, String purpose, String roles, Long expires, String queue,
                          String dedup, Long delayMs, Integer priority) {
  /** An enqueue request of priority 0. */
  public WireRequest(String type, String id, String graph, JsonNode key, List<JsonNode> args, String caller,
                     String credential, String purpose, String roles, Long expires, String queue, String dedup,
                     Long delayMs) {
    this(type, id, graph, key, args, caller, credential, purpose, roles, expires, queue, dedup, delayMs, null);
  }

  /** An enqueue request that starts its item as soon as it is claimed (no delay), or one that is not an enqueue. */
  public WireRequest(String type, String id, String graph, JsonNode key, List<JsonNode> args, String caller,
                     String credential, String purpose, String roles, Long expires, String queue, String dedup) {
    this(type, id, graph, key, args, caller, credential, purpose, roles, expires, queue, dedup, null);
  }

  /** A request that is not an enqueue (no queue, no deduplication ID). */
  public WireRequest(String type, String id, String graph, JsonNode key, List<JsonNode> args, String caller,
                     String credential, String purpose, String roles, Long expires) {
    this(type, id, graph, key, args, caller, credential, purpose, roles, expires, null, null);
  }

  /** Puts an invocation on a durable queue: answered once the item is stored (issue 42). */
  public static final String ENQUEUE = "enqueue";
  /** The longest delay an enqueue may ask for before its item starts (a year), in milliseconds. */
  public static final long MAX_DELAY_MS = 366L * 24 * 3600 * 1000;
  /** The longest deduplication ID an enqueue may carry. */
  public static final int MAX_DEDUP_LENGTH = 64;

  public static final String INVOKE = "invoke";
  public static final String RESULT = "result";
  /** Starts an invocation without waiting for its outcome: answered once it is durably logged. */
  public static final String START = "start";
  /** Cancels a running invocation; its reason is the one argument. */
  public static final String CANCEL = "cancel";
  /** The longest reason a cancel may give. */
  public static final int MAX_REASON_LENGTH = 512;

  /** The JSON field of {@link #expires()}. */
  public static final String EXPIRES_FIELD = "expires";

  /** The longest invocation ID a frontend accepts. */
  public static final int MAX_ID_LENGTH = 64;

  /** The longest caller name a frontend accepts (the width of the caller columns it is stored in). */
  public static final int MAX_CALLER_LENGTH = 128;

  /**
   * The longest invocation ID a {@link #RESULT} request may name: where credentials are required an invocation is
   * stored under its caller's identity, '/', and its ID, and a key with the admin role names another caller's
   * invocation that way.
   */
  public static final int MAX_QUALIFIED_ID_LENGTH = MAX_CALLER_LENGTH + 1 + MAX_ID_LENGTH;

  public static WireRequest invoke(String id, String graph, JsonNode key, List<JsonNode> args, String caller) {
    return new WireRequest(INVOKE, id, graph, key, args, caller, null, null, null, null);
  }

  /** A {@link #START} request: an invoke request answered once the invocation is logged. */
  public static WireRequest start(String id, String graph, JsonNode key, List<JsonNode> args, String caller) {
    return new WireRequest(START, id, graph, key, args, caller, null, null, null, null);
  }

  /**
   * Whether this request starts an invocation ({@link #INVOKE} or {@link #START}) or puts one on a queue
   * ({@link #ENQUEUE}): a copy of it must not take effect once its client stopped waiting.
   */
  public boolean starts() {
    return INVOKE.equals(type) || START.equals(type) || ENQUEUE.equals(type);
  }

  /** A {@link #CANCEL} request. */
  public static WireRequest cancel(String id, String reason) {
    return new WireRequest(CANCEL, id, null, null, List.of(com.fasterxml.jackson.databind.node.TextNode.valueOf(reason)),
        null, null, null, null, null);
  }

  /** A cancel request's reason, if it carries one as its one text argument; else {@code null}. */
  public String reason() {
    return args != null && args.size() == 1 && args.get(0).isTextual() ? args.get(0).asText() : null;
  }

  public static WireRequest result(String id) {
    return new WireRequest(RESULT, id, null, null, null, null, null, null, null, null);
  }

  /** This request stating a data-use purpose. */
  public WireRequest withPurpose(String value) {
    return new WireRequest(type, id, graph, key, args, caller, credential, value, roles, expires, queue, dedup,
        delayMs, priority);
  }

  /** This request presenting a credential. */
  public WireRequest withCredential(String value) {
    return new WireRequest(type, id, graph, key, args, caller, value, purpose, roles, expires, queue, dedup,
        delayMs, priority);
  }

  /** This request as a frontend keeps it: the caller and roles it established, and no credential. */
  public WireRequest asStored(String establishedCaller, String establishedRoles) {
    return new WireRequest(type, id, graph, key, args, establishedCaller, null, purpose, establishedRoles,
        expires, queue, dedup, delayMs, priority);
  }

  /**
   * {@code frame}, an encoded request without an expiry, with {@code "expires": epochMillis} added as its last field:
   * the client stamps a request when its call begins without encoding it again, and what precedes the added field
   * is the request itself, the same for every call with that request.
   */
  public static byte[] withExpiry(byte[] frame, long epochMillis) {
    if (frame.length < 2 || frame[frame.length - 1] != '}') {
      throw new IllegalArgumentException("not an encoded request: it does not end with '}'");
    }
    byte[] field = ((frame.length > 2 ? "," : "") + "\"" + EXPIRES_FIELD + "\":" + epochMillis + "}")
        .getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    byte[] out = java.util.Arrays.copyOf(frame, frame.length - 1 + field.length);
    System.arraycopy(field, 0, out, frame.length - 1, field.length);
    return out;
  }

  /** The JSON field of a request's W3C trace context ({@link TraceContext#traceparent()}); optional. */
  public static final String TRACEPARENT_FIELD = "traceparent";
  /** The JSON field of a request's W3C {@code tracestate} ({@link TraceContext#tracestate()}); optional. */
  public static final String TRACESTATE_FIELD = "tracestate";
  /** The longest {@code traceparent} read from a frame; a longer one is ignored (a new trace starts). */
  public static final int MAX_TRACEPARENT_LENGTH = 128;
  /** The longest {@code tracestate} read from a frame (W3C: 32 members, 512 characters); a longer one is ignored. */
  public static final int MAX_TRACESTATE_LENGTH = 512;
  private static final java.util.regex.Pattern TRACEPARENT =
      java.util.regex.Pattern.compile("[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}");

  /**
   * The W3C trace context a request frame carries (issue 43, traces): optional fields {@value #TRACEPARENT_FIELD}
   * and {@value #TRACESTATE_FIELD}, kept outside the record's components so that every other field of a request
   * stays as it was; old frames without them decode as before, and a frontend that does not trace skips them.
   *
   * @param traceparent the {@code traceparent} as sent, or {@code null} if absent, not text, or too long
   * @param tracestate the {@code tracestate} as sent, or {@code null} if absent, not text, or too long
   */
  public record TraceContext(String traceparent, String tracestate) {
    /** No trace context. */
    public static final TraceContext NONE = new TraceContext(null, null);

    /** The {@code traceparent} if it has the W3C form (version 00 layout, IDs not all zero); else {@code null}. */
    public String validTraceparent() {
      if (traceparent == null || !TRACEPARENT.matcher(traceparent).matches() || traceparent.startsWith("ff")) {
        return null;
      }
      boolean zeroTrace = traceparent.substring(3, 35).chars().allMatch(c -> c == '0');
      boolean zeroSpan = traceparent.substring(36, 52).chars().allMatch(c -> c == '0');
      return zeroTrace || zeroSpan ? null : traceparent;
    }
  }

  /**
   * {@code frame}, an encoded request, with its trace context added as its last fields (as {@link #withExpiry} adds
   * the expiry): the client adds each attempt's context to the request it encoded once. A {@code null} or over-long
   * value is left out.
   */
  public static byte[] withTraceContext(byte[] frame, String traceparent, String tracestate) {
    if (frame.length < 2 || frame[frame.length - 1] != '}') {
      throw new IllegalArgumentException("not an encoded request: it does not end with '}'");
    }
    boolean parent = traceparent != null && traceparent.length() <= MAX_TRACEPARENT_LENGTH;
    boolean state = parent && tracestate != null && !tracestate.isEmpty()
        && tracestate.length() <= MAX_TRACESTATE_LENGTH;
    if (!parent) {
      return frame;
    }
    try {
      String fields = "\"" + TRACEPARENT_FIELD + "\":" + Json.MAPPER.writeValueAsString(traceparent)
          + (state ? ",\"" + TRACESTATE_FIELD + "\":" + Json.MAPPER.writeValueAsString(tracestate) : "") + "}";
      byte[] field = ((frame.length > 2 ? "," : "") + fields).getBytes(java.nio.charset.StandardCharsets.UTF_8);
      byte[] out = java.util.Arrays.copyOf(frame, frame.length - 1 + field.length);
      System.arraycopy(field, 0, out, frame.length - 1, field.length);
      return out;
    } catch (IOException e) {
      throw new IllegalArgumentException("trace context cannot be encoded: " + e.getMessage(), e);
    }
  }

  /**
   * The trace context of a request frame, read without decoding its arguments; {@link TraceContext#NONE} if the
   * frame has none or cannot be read (a trace context is never a reason to refuse a request). A value that is not
   * text or is longer than its limit is left out.
   */
  public static TraceContext traceContext(byte[] frame) {
    if (frame == null) {
      return TraceContext.NONE;
    }
    String parent = null;
    String state = null;
    try (JsonParser p = Json.MAPPER.createParser(frame)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        return TraceContext.NONE;
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        JsonToken value = p.nextToken();
        if (value == JsonToken.VALUE_STRING && TRACEPARENT_FIELD.equals(field)) {
          String text = p.getText();
          parent = text.length() <= MAX_TRACEPARENT_LENGTH ? text : null;
        } else if (value == JsonToken.VALUE_STRING && TRACESTATE_FIELD.equals(field)) {
          String text = p.getText();
          state = text.length() <= MAX_TRACESTATE_LENGTH ? text : null;
        } else {
          p.skipChildren();
        }
      }
    } catch (IOException e) {
      return TraceContext.NONE;
    }
    return parent == null && state == null ? TraceContext.NONE : new TraceContext(parent, state);
  }

  /** This request as its JSON frame (fields that are {@code null} left out). */
  public byte[] toBytes() {
    try {
      ByteArrayBuilder out = new ByteArrayBuilder(128);
      try (JsonGenerator g = Json.MAPPER.createGenerator(out)) {
        g.writeStartObject();
        stringField(g, "type", type);
        stringField(g, "id", id);
        stringField(g, "graph", graph);
        if (key != null) {
          g.writeFieldName("key");
          Json.writeTree(g, key);
        }
        if (args != null) {
          g.writeArrayFieldStart("args");
          for (JsonNode arg : args) {
            Json.writeTree(g, arg);
          }
          g.writeEndArray();
        }
        stringField(g, "caller", caller);
        stringField(g, "credential", credential);
        stringField(g, "purpose", purpose);
        stringField(g, "roles", roles);
        stringField(g, "queue", queue);
        stringField(g, "dedup", dedup);
        if (delayMs != null) {
          g.writeNumberField("delayMs", delayMs);
        }
        if (priority != null) {
          g.writeNumberField("priority", priority);
        }
        if (expires != null) {
          g.writeNumberField(EXPIRES_FIELD, expires);
        }
        g.writeEndObject();
      }
      return out.toByteArray();
    } catch (IOException e) {
      throw new IllegalArgumentException("request cannot be encoded: " + e.getMessage(), e);
    }
  }

  static void stringField(JsonGenerator g, String name, String value) throws IOException {
    if (value != null) {
      g.writeStringField(name, value);
    }
  }

  /**
   * Reads a request frame (fields in any order, unknown fields skipped).
   *
   * @throws IllegalArgumentException saying what is wrong if the frame is not such a request
   */
  public static WireRequest fromBytes(byte[] frame) {
    try (JsonParser p = Json.MAPPER.createParser(frame)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new JsonParseException(p, "a request is a JSON object, not " + p.currentToken());
      }
      String type = null;
      String id = null;
      String graph = null;
      JsonNode key = null;
      List<JsonNode> args = null;
      String caller = null;
      String credential = null;
      String purpose = null;
      String roles = null;
      String queue = null;
      String dedup = null;
      Long expires = null;
      Long delayMs = null;
      Integer priority = null;
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        JsonToken value = p.nextToken();
        switch (field) {
          case "type" -> type = Json.text(p, field);
          case "id" -> id = Json.text(p, field);
          case "graph" -> graph = Json.text(p, field);
          case "caller" -> caller = Json.text(p, field);
          case "credential" -> credential = Json.text(p, field);
          case "purpose" -> purpose = Json.text(p, field);
          case "roles" -> roles = Json.text(p, field);
          case "queue" -> queue = Json.text(p, field);
          case "dedup" -> dedup = Json.text(p, field);
          case EXPIRES_FIELD -> {
            if (value != JsonToken.VALUE_NUMBER_INT) {
              throw new JsonParseException(p, "field '" + EXPIRES_FIELD + "' must be an integer (milliseconds since "
                  + "the epoch), not " + value);
            }
            expires = p.getLongValue();
          }
          case "delayMs" -> {
            if (value != JsonToken.VALUE_NUMBER_INT) {
              throw new JsonParseException(p, "field 'delayMs' must be an integer (milliseconds), not " + value);
            }
            delayMs = p.getLongValue();
          }
          case "priority" -> {
            if (value != JsonToken.VALUE_NUMBER_INT || p.getNumberType() != JsonParser.NumberType.INT) {
              throw new JsonParseException(p, "field 'priority' must be a 32-bit integer, not " + value);
            }
            priority = p.getIntValue();
          }
          case "key" -> key = Json.readTree(p); // JSON null as a NullNode, as data binding reads it
          case "args" -> {
            if (value == JsonToken.VALUE_NULL) {
              args = null;
            } else if (value != JsonToken.START_ARRAY) {
              throw new JsonParseException(p, "field 'args' must be an array, not " + value);
            } else {
              args = new ArrayList<>();
              while (p.nextToken() != JsonToken.END_ARRAY) {
                args.add(Json.readTree(p));
              }
            }
          }
          default -> p.skipChildren();
        }
      }
      return new WireRequest(type, id, graph, key, args, caller, credential, purpose, roles, expires, queue, dedup,
          delayMs, priority);
    } catch (IOException e) {
      throw new IllegalArgumentException("request is not valid: " + e.getMessage(), e);
    }
  }
}
