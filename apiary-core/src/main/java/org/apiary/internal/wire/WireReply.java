package org.apiary.internal.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import java.io.IOException;
import java.util.List;
import org.apiary.internal.Output;
import org.apiary.internal.FunctionOutputs;
import org.apiary.internal.Json;

/**
 * A frontend's answer to one {@link WireRequest}, as one JSON frame.
 *
 * @param id the invocation ID of the request, or {@code null} if the request was too malformed to have one
 * @param status {@link #OK}, {@link #ERROR}, {@link #RUNNING} (a result request for an invocation not finished yet)
 * @param outputs the graph's outputs to the client, in a deterministic order (status OK)
 * @param error the kind of error (status ERROR), one of the {@code *_ERROR} constants; with status RUNNING,
 *     {@link #QUEUED} if the invocation waits on a queue or for its delay (not started yet), else {@code null} (a
 *     client that does not know it sees a running invocation, which it is to that client)
 * @param function the function that failed, for {@link #FUNCTION_FAILED}
 * @param functionError the exception type the function threw, for {@link #FUNCTION_FAILED}
 * @param message a human-readable explanation (status ERROR)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record WireReply(String id, String status, List<Output> outputs, String error, String function,
                        String functionError, String message) {
  public static final String OK = "ok";
  public static final String ERROR = "error";
  public static final String RUNNING = "running";
  /**
   * With status {@link #RUNNING}: the invocation waits on a queue or for its delay, and no frontend has claimed it yet
   * (issue 42).
   */
  public static final String QUEUED = "queued";

  /** A function threw; its transaction rolled back and the graph execution ended. */
  public static final String FUNCTION_FAILED = "function-failed";
  /** The request is wrong (malformed, unknown graph or invocation, wrong argument or key type); nothing ran. */
  public static final String INVALID_REQUEST = "invalid-request";
  /** The invocation was cancelled (issue 42): its stored outcome; the message gives the reason. */
  public static final String CANCELLED = "cancelled";
  /** The frontend could not tell whether the invocation took effect; retrying with the same ID is safe. */
  public static final String OUTCOME_UNKNOWN = "outcome-unknown";
  /** The database refused or failed the work; retrying with the same ID is safe. */
  public static final String DATABASE = "database";
  /**
   * The frontend has as many invocations in flight as it allows and refused this one; nothing ran. The message ends
   * with {@code retry after N ms}; another frontend may have room.
   */
  public static final String OVERLOADED = "overloaded";
  /**
   * The request reached the frontend after the time its client stopped waiting for it ({@link WireRequest#expires()},
   * plus the frontend's clock-skew allowance); the frontend did not start it. An earlier attempt may have run;
   * retrying with the same ID is safe.
   */
  public static final String EXPIRED = "expired";
  /** The request came without a valid credential, and the frontend requires one; nothing ran. */
  public static final String UNAUTHENTICATED = "unauthenticated";
  /**
   * The caller lacks a role the graph's access policy requires, or the call states a purpose the policy does not
   * allow (or none); nothing ran. The message names what was missing.
   */
  public static final String FORBIDDEN = "forbidden";
  /** How long a refused client should wait before sending again, as {@link #OVERLOADED} replies say. */
  public static final long OVERLOADED_RETRY_AFTER_MS = 100;
  /**
   * The invocation ended without a result for a reason other than a function's failure (retries exhausted, a
   * result too large to store, an internal error); this is its stored outcome, and resending its ID returns it.
   */
  public static final String INVOCATION_FAILED = "invocation-failed";

  public static WireReply ok(String id, List<Output> outputs) {
    return new WireReply(id, OK, List.copyOf(outputs), null, null, null, null);
  }

  public static WireReply running(String id) {
    return new WireReply(id, RUNNING, null, null, null, null, "invocation " + id + " has not finished yet");
  }

  /** The answer for an invocation that waits on a queue (or for its delay), not started: RUNNING, {@link #QUEUED}. */
  public static WireReply queued(String id) {
    return new WireReply(id, RUNNING, null, QUEUED, null, null, "invocation " + id + " waits on its queue and has "
        + "not started yet");
  }

  /** Whether this is a {@link #RUNNING} answer for an invocation that has not started: queued or delayed. */
  @com.fasterxml.jackson.annotation.JsonIgnore
  public boolean queued() {
    return RUNNING.equals(status) && QUEUED.equals(error);
  }

  public static WireReply error(String id, String error, String message) {
    return new WireReply(id, ERROR, null, error, null, null, message);
  }

  public static WireReply functionFailed(String id, String function, String functionError, String message) {
    return new WireReply(id, ERROR, null, FUNCTION_FAILED, function, functionError, message);
  }

  /** Whether a client may safely send the same invocation again, to this or another frontend. */
  @com.fasterxml.jackson.annotation.JsonIgnore
  public boolean retryable() {
    return ERROR.equals(status) && (OUTCOME_UNKNOWN.equals(error) || DATABASE.equals(error)
        || OVERLOADED.equals(error) || EXPIRED.equals(error));
  }

  /** This reply as its JSON frame (fields that are {@code null} left out). */
  public byte[] toBytes() {
    try {
      ByteArrayBuilder out = new ByteArrayBuilder(128);
      try (JsonGenerator g = Json.MAPPER.createGenerator(out)) {
        g.writeStartObject();
        WireRequest.stringField(g, "id", id);
        WireRequest.stringField(g, "status", status);
        if (outputs != null) {
          g.writeFieldName("outputs");
          FunctionOutputs.write(g, outputs);
        }
        WireRequest.stringField(g, "error", error);
        WireRequest.stringField(g, "function", function);
        WireRequest.stringField(g, "functionError", functionError);
        WireRequest.stringField(g, "message", message);
        g.writeEndObject();
      }
      return out.toByteArray();
    } catch (IOException e) {
      throw new IllegalArgumentException("reply cannot be encoded: " + e.getMessage(), e);
    }
  }

  /**
   * Reads a reply frame (fields in any order, unknown fields skipped).
   *
   * @throws IllegalArgumentException saying what is wrong if the frame is not such a reply
   */
  public static WireReply fromBytes(byte[] frame) {
    try (JsonParser p = Json.MAPPER.createParser(frame)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new JsonParseException(p, "a reply is a JSON object, not " + p.currentToken());
      }
      String id = null;
      String status = null;
      List<Output> outputs = null;
      String error = null;
      String function = null;
      String functionError = null;
      String message = null;
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        JsonToken value = p.nextToken();
        switch (field) {
          case "id" -> id = Json.text(p, field);
          case "status" -> status = Json.text(p, field);
          case "outputs" -> outputs = value == JsonToken.VALUE_NULL ? null : FunctionOutputs.read(p);
          case "error" -> error = Json.text(p, field);
          case "function" -> function = Json.text(p, field);
          case "functionError" -> functionError = Json.text(p, field);
          case "message" -> message = Json.text(p, field);
          default -> p.skipChildren();
        }
      }
      return new WireReply(id, status, outputs, error, function, functionError, message);
    } catch (IOException e) {
      throw new IllegalArgumentException("reply is not valid: " + e.getMessage(), e);
    }
  }
}
