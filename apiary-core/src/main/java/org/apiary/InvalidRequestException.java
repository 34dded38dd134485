package org.apiary;

/**
 * A call was refused before it ran because the request itself is wrong: an unknown function, a partition key of
 * the wrong type, arguments that cannot be serialized. Nothing was executed; fix the request, do not retry it.
 */
public final class InvalidRequestException extends ApiaryException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception with a message naming what is wrong. */
  public InvalidRequestException(String message) {
    super(message);
  }

  /** Creates the exception with a message naming what is wrong and the cause. */
  public InvalidRequestException(String message, Throwable cause) {
    super(message, cause);
  }
}
