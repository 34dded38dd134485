package org.apiary;

/**
 * The client could not hand the call to any frontend (it could not connect, or no attempt could be sent before its
 * deadline): nothing ran. Retrying, with the same invocation ID or a new one, is safe once a frontend is reachable.
 */
public final class FrontendUnreachableException extends ApiaryException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception; the message names the call, the frontends and what each attempt met. */
  public FrontendUnreachableException(String message, Throwable cause) {
    super(message, cause);
  }
}
