package org.apiary;

/**
 * The frontend refused the call because it did not come with a valid credential (missing, unknown, malformed or
 * revoked API key): nothing ran. Configure the client with a valid key ({@code ClientConfig.withCredential}).
 */
public final class AccessDeniedException extends ApiaryException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception with a message saying what was wrong with the credential. */
  public AccessDeniedException(String message) {
    super(message);
  }
}
