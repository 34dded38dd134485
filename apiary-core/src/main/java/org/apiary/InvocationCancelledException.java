package org.apiary;

/**
 * The invocation was cancelled ({@code InvocationHandle.cancel}, {@code apiary executions cancel}) before it ended:
 * no function of it started after the cancel was stored, and one running then committed or rolled back as it would.
 * The message carries the reason given. Its stored outcome is this cancellation, so asking for its result again, from
 * any client, answers the same.
 */
public final class InvocationCancelledException extends ApiaryException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception; the message names the invocation and the reason it was cancelled. */
  public InvocationCancelledException(String message) {
    super(message);
  }
}
