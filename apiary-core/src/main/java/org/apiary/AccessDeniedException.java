package org.apiary;

/**
 * The frontend refused the call, and nothing ran: it did not come with a valid credential (missing, unknown,
 * malformed or revoked API key; configure the client with {@code ClientConfig.withCredential}), or the graph's
 * {@link AccessPolicy} does not allow it (the caller has none of the roles it names, or the call states a purpose it
 * does not list, or none; see {@code ClientConfig.withPurpose}). The message says which. Refusals by policy are
 * recorded in provenance ({@code DeniedCalls}).
 */
public final class AccessDeniedException extends ApiaryException {
  private static final long serialVersionUID = 1L;

  private final boolean byPolicy;

  /** Creates the exception with a message saying what was wrong with the credential. */
  public AccessDeniedException(String message) {
    this(message, false);
  }

  /**
   * Creates the exception.
   *
   * @param message what was wrong: the credential, or which roles or purposes the policy asks for
   * @param byPolicy whether the credential was valid and an {@link AccessPolicy} refused the call
   */
  public AccessDeniedException(String message, boolean byPolicy) {
    super(message);
    this.byPolicy = byPolicy;
  }

  /**
   * Whether the caller's credential was valid (or none was required) and the graph's or a function's
   * {@link AccessPolicy} refused the call (its roles or purposes, named in the message); {@code false} when the
   * credential itself was missing, unknown, malformed or revoked.
   */
  public boolean byPolicy() {
    return byPolicy;
  }
}
