package org.apiary;

/**
 * Root of every exception Apiary throws to application code and to callers.
 *
 * <p>Subclasses say what happened to the work a call asked for: {@link FunctionFailedException} (the function ran
 * and its transaction was rolled back), {@link OutcomeUnknownException} (it may or may not have committed),
 * {@link RegistrationException} (a function or schema was rejected before deployment) and
 * {@link DatabaseException} (the database could not be reached or refused the request).
 */
public class ApiaryException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Creates an exception with a message. */
  public ApiaryException(String message) {
    super(message);
  }

  /** Creates an exception with a message and the cause it wraps. */
  public ApiaryException(String message, Throwable cause) {
    super(message, cause);
  }
}
