package org.apiary;

/**
 * Every frontend that got the call found it past its expiry (the time this client stops waiting, which it sends with
 * the call): nothing ran. Since the client had not stopped waiting, the frontends' clocks are ahead of the client's by
 * more than they allow; fix the clocks, then retrying with the same invocation ID is safe.
 */
public final class RequestExpiredException extends ApiaryException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception; the message names the call and the frontends' answers. */
  public RequestExpiredException(String message) {
    super(message);
  }
}
