package org.apiary;

/**
 * The database could not be reached, could not be started, or refused a request (for example schema DDL it
 * rejected). When this is thrown for a call, the call did not run.
 */
public final class DatabaseException extends ApiaryException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception with a message naming what failed. */
  public DatabaseException(String message) {
    super(message);
  }

  /** Creates the exception with a message naming what failed and the underlying cause. */
  public DatabaseException(String message, Throwable cause) {
    super(message, cause);
  }
}
