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

  /** Creates the exception with a message saying what was wrong with the credential. */
  public AccessDeniedException(String message) {
    super(message);
  }
}
