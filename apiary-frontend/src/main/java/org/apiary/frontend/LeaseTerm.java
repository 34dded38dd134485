package org.apiary.frontend;

import java.time.Duration;

/**
 * This frontend's lease as its own clock sees it, and its terms: a term is a stretch in which the lease held without
 * a break. Another frontend may take over this one's invocations only once the lease has expired, so an execution
 * that began within a term, and finds the same term still held with time to spare, knows that nobody has taken its
 * invocation over since it began (leases assume clocks that run at the same rate, not clocks that agree). An
 * execution checks this right before it calls the outside world (an external step), which a takeover's execution
 * may do too: a process paused past its lease (SIGSTOP, a long GC pause) finds its term ended when it resumes.
 *
 * <p>The lease runs its duration from the start of the renewal that extended it (the database measures from when it
 * ran that renewal, which is no earlier), so this clock's view is never later than the database's.
 */
final class LeaseTerm {
  private final long durationNanos;
  /** Time the lease must have left for a term to count as held: the margin for a call's own delay. */
  private final long marginNanos;
  private volatile long renewedAtNanos;
  private volatile boolean held;
  private volatile boolean stopped;
  private volatile long term;

  LeaseTerm(Duration lease) {
    this.durationNanos = lease.toNanos();
    this.marginNanos = Math.max(Duration.ofMillis(50).toNanos(), durationNanos / 20);
  }

  /** A renewal that began at {@code beganNanos} succeeded; if the lease had expired before it began, a new term starts. */
  synchronized void renewed(long beganNanos) {
    if (held && beganNanos - renewedAtNanos >= durationNanos) {
      term++;
    }
    renewedAtNanos = beganNanos;
    held = true;
  }

  /** The frontend stops: no term holds from now on. */
  void stop() {
    stopped = true;
  }

  /** The current term, to check later with {@link #heldSince(long)}. */
  synchronized long term() {
    return term;
  }

  /** Whether the lease has held without a break since {@code term} was read, with more than the margin left. */
  synchronized boolean heldSince(long term) {
    return this.term == term && remainingNanos() > marginNanos;
  }

  /** Nanoseconds left on the lease: 0 once it has expired, before the first renewal, and after a stop. */
  long remainingNanos() {
    if (!held || stopped) {
      return 0;
    }
    long left = durationNanos - (System.nanoTime() - renewedAtNanos);
    return Math.max(0, left);
  }
}
