package org.apiary;

import java.time.Duration;

/**
 * Every frontend the client tried had as many invocations in flight as it allows, and refused this one: nothing ran.
 * Call again after {@link #retryAfter()} (with the same invocation ID or a new one; both are safe).
 */
public final class OverloadedException extends ApiaryException {
  private static final long serialVersionUID = 1L;

  private final Duration retryAfter;

  /** Creates the exception with a message naming who refused and how long to wait. */
  public OverloadedException(String message, Duration retryAfter) {
    super(message);
    this.retryAfter = retryAfter;
  }

  /** How long to wait before calling again, as the frontends suggested. */
  public Duration retryAfter() {
    return retryAfter;
  }
}
