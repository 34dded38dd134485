package org.apiary;

/**
 * The call was sent but no answer came back (a lost connection, a failed database node, a timeout): the function
 * may or may not have committed. Only a retry that carries the same invocation ID is safe; see the frontend's
 * exactly-once guarantee.
 */
public final class OutcomeUnknownException extends ApiaryException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception; the message says which call and why its outcome is unknown. */
  public OutcomeUnknownException(String message, Throwable cause) {
    super(message, cause);
  }
}
