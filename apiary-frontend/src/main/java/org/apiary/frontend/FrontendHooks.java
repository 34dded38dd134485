package org.apiary.frontend;

/**
 * Points in a frontend's work where a fault can be injected, for Apiary's drill harness ({@code apiary drill}) and
 * tests, not for applications: a hook may throw (the step fails, as if the database had not answered), block (the
 * step is slow) or stop the process. Hooks run on the frontend's own threads, so one that blocks holds that thread's
 * other work too. Production frontends use {@link #NONE}; the fault injections themselves live in the drill harness.
 */
public interface FrontendHooks {
  FrontendHooks NONE = new FrontendHooks() {};

  /**
   * On JeroMQ's I/O thread, as an inbound frame of {@code bytes} is allocated, before its bytes are read. What it
   * throws is thrown in that thread: an {@link Error} ends it, as an {@link OutOfMemoryError} there would.
   */
  default void receivingFrame(int bytes) {}

  /** On the socket thread, for each well-formed request, before it is handled. */
  default void receivedRequest(String invocation) {}

  /** After a request passed the frontend's checks (expiry included), before it is logged or run. */
  default void beforeStarting(String invocation) {}

  /** After a function of an invocation returned, before its outputs are routed. */
  default void afterFunction(String graph, String invocation, String function) {}

  /** Before an invocation's outcome is stored in the log. */
  default void beforeStoringOutcome(String invocation) {}

  /** Between the steps of taking over a dead frontend's invocations. */
  default void duringTakeover(String deadFrontend) {}

  /**
   * Before each renewal of the frontend's lease; a hook that throws skips the renewal, as a renewal the database did
   * not answer (a test lets a frontend's lease lapse this way, as a paused process's does).
   */
  default void beforeRenewingLease() {}

  /** Before a retention pass. */
  default void beforeCleanup() {}

  /** When recovery takes up a logged, running invocation that no attempt in this frontend is running. */
  default void recovering(String invocation) {}

  /**
   * Before each round in which the frontend claims queued items (issue 42); a hook that throws skips the round (a
   * test keeps a frontend from running queued work this way).
   */
  default void beforeClaimingQueueItems() {}
}
