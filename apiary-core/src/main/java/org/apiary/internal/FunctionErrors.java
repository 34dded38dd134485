package org.apiary.internal;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import java.util.Optional;
import org.apiary.FunctionFailedException;

/**
 * Carries a function's exception from inside the database to the caller, through VoltDB's status string (the only
 * text a rolled-back procedure can return).
 */
public final class FunctionErrors {
  private static final String MARKER = "APIARY-FUNCTION-FAILED";

  private FunctionErrors() {}

  /** The status text a procedure aborts with when its function threw {@code error}. */
  public static String encode(String function, Throwable error) {
    return encode(function, error.getClass().getName(), error.getMessage());
  }

  /** The status text a procedure aborts with for a failure of {@code function} of type {@code type}. */
  public static String encode(String function, String type, String message) {
    return MARKER + new String(Json.bytes(Map.of("function", function, "type", type,
        "message", message == null ? "" : message)), java.nio.charset.StandardCharsets.UTF_8);
  }

  /**
   * A recorded function's failure as stored in place of its outputs, so a re-execution replays the failure
   * instead of running again. Outputs are stored as a JSON array; a failure is this marker text and a JSON object.
   */
  public static byte[] recordedFailure(FunctionFailedException failure) {
    return encode(failure.functionName(), failure.errorType(), failure.errorMessage())
        .getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }

  /** The failure stored by {@link #recordedFailure}, if these recorded bytes hold one rather than outputs. */
  public static Optional<FunctionFailedException> fromRecorded(byte[] recorded) {
    if (recorded.length == 0 || recorded[0] != MARKER.charAt(0)) {
      return Optional.empty();
    }
    return decode(new String(recorded, java.nio.charset.StandardCharsets.UTF_8));
  }

  /**
   * The exception a failed call's status text describes: an {@link ExecutionRefusedException} if the database refused
   * to run the function (a protocol condition), a {@link FunctionFailedException} if the function failed; empty if the
   * text is not Apiary's.
   */
  public static Optional<org.apiary.ApiaryException> decodeCall(String statusString) {
    return decode(statusString).map(f -> {
      ExecutionRefusedException.Reason reason = ExecutionRefusedException.Reason.ofType(f.errorType());
      return reason == null ? f : new ExecutionRefusedException(f.functionName(), reason, f.errorMessage());
    });
  }

  /** The exception described by a procedure's status text, if it came from a failed function. */
  public static Optional<FunctionFailedException> decode(String statusString) {
    if (statusString == null) {
      return Optional.empty();
    }
    int at = statusString.indexOf(MARKER);
    if (at < 0) {
      return Optional.empty();
    }
    try {
      JsonNode node = Json.MAPPER.readTree(statusString.substring(at + MARKER.length()));
      return Optional.of(new FunctionFailedException(
          node.path("function").asText(), node.path("type").asText(), node.path("message").asText()));
    } catch (java.io.IOException e) {
      return Optional.empty();
    }
  }
}
