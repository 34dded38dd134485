package org.apiary;

import java.time.Duration;
import java.util.Objects;

/**
 * How a frontend runs an {@link ExternalFunction}: how many attempts it gets, how long each may take, and how long
 * to wait between them (doubling from {@code firstBackoff} up to {@code maxBackoff}). An attempt that throws or
 * outlives its timeout is abandoned (its thread is interrupted, its outputs discarded) and the next one starts after
 * the back-off; once {@code maxAttempts} have failed, the step fails its graph with a
 * {@link FunctionFailedException} of type {@value ExternalFunction#FAILED} naming the step and the last cause.
 * Immutable; checked on construction.
 *
 * @param maxAttempts the most attempts, at least 1 (default 3)
 * @param timeout the longest one attempt may take, positive (default 10 s)
 * @param firstBackoff the wait before the second attempt, not negative (default 100 ms)
 * @param maxBackoff the longest wait between attempts, at least {@code firstBackoff} (default 2 s)
 */
public record StepPolicy(int maxAttempts, Duration timeout, Duration firstBackoff, Duration maxBackoff) {
  /** Checks the values. */
  public StepPolicy {
    Objects.requireNonNull(timeout, "timeout");
    Objects.requireNonNull(firstBackoff, "firstBackoff");
    Objects.requireNonNull(maxBackoff, "maxBackoff");
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("an external step needs at least 1 attempt, not " + maxAttempts);
    }
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("an external step's timeout must be positive, not " + timeout);
    }
    if (firstBackoff.isNegative() || maxBackoff.compareTo(firstBackoff) < 0) {
      throw new IllegalArgumentException("an external step's back-off must satisfy 0 <= first <= max, not "
          + firstBackoff + " and " + maxBackoff);
    }
  }

  /** 3 attempts of at most 10 s each, waiting 100 ms, then 200 ms, ..., at most 2 s between them. */
  public static StepPolicy defaults() {
    return new StepPolicy(3, Duration.ofSeconds(10), Duration.ofMillis(100), Duration.ofSeconds(2));
  }

  /** This policy with another number of attempts. */
  public StepPolicy withMaxAttempts(int attempts) {
    return new StepPolicy(attempts, timeout, firstBackoff, maxBackoff);
  }

  /** This policy with another timeout per attempt. */
  public StepPolicy withTimeout(Duration perAttempt) {
    return new StepPolicy(maxAttempts, perAttempt, firstBackoff, maxBackoff);
  }

  /** This policy with another back-off: {@code first} before the second attempt, doubled up to {@code max}. */
  public StepPolicy withBackoff(Duration first, Duration max) {
    return new StepPolicy(maxAttempts, timeout, first, max);
  }

  /** The wait after failed attempt {@code attempt} (from 1). */
  public Duration backoffAfter(int attempt) {
    long ms = firstBackoff.toMillis();
    for (int i = 1; i < attempt && ms < maxBackoff.toMillis(); i++) {
      ms *= 2;
    }
    return Duration.ofMillis(Math.min(ms, maxBackoff.toMillis()));
  }
}
