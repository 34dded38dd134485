package org.apiary;

/**
 * Apiary gave up on the invocation without a function's failure to report: its attempts kept failing for another
 * reason (the database refusing or losing them, a graph version no longer deployed) until the frontend stopped trying,
 * and stored that as its outcome. Asking for its result again answers the same; a new invocation ID starts it afresh.
 * A function that threw is a {@link FunctionFailedException} instead.
 */
public final class InvocationFailedException extends ApiaryException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception; the message names the invocation and its last attempt's failure. */
  public InvocationFailedException(String message) {
    super(message);
  }
}
