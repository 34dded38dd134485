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
    String message = error.getMessage() == null ? "" : error.getMessage();
    return MARKER + new String(Json.bytes(Map.of(
        "function", function, "type", error.getClass().getName(), "message", message)),
        java.nio.charset.StandardCharsets.UTF_8);
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
