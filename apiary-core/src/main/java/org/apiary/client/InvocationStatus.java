package org.apiary.client;

/**
 * Where an invocation stands, as the invocation log says ({@link InvocationHandle#status()}).
 */
public enum InvocationStatus {
  /**
   * Waiting on a queue ({@link ApiaryClient#enqueue}) or for its delay, not started: no frontend has claimed it yet, so
   * no function of it has run (issue 42). It becomes {@link #RUNNING} when a frontend claims it.
   */
  QUEUED,
  /**
   * Started and not ended: a frontend runs it, or will take it over (after its frontend stopped); for a queued
   * invocation, claimed from its queue.
   */
  RUNNING,
  /** Ended with a result ({@link InvocationHandle#result()}). */
  DONE,
  /** Ended with a failure: a function threw (its transaction rolled back), or the invocation gave up. */
  FAILED,
  /**
   * Cancelled ({@link InvocationHandle#cancel}): no function of it started after the cancel was stored; one running
   * then committed or rolled back as it would have.
   */
  CANCELLED
}
