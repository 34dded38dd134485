package org.apiary.internal;

import org.apiary.ApiaryException;

/**
 * A function's execution that the database refused before running it: a condition of Apiary's protocol, not the
 * function's failure (issue 44: these travelled as {@code FunctionFailedException}s with internal error types, and
 * every place that had to tell them apart compared type strings). Nothing ran. The procedure still reports it through
 * VoltDB's status string ({@link FunctionErrors}), where its {@link Reason#type()} names it.
 */
public final class ExecutionRefusedException extends ApiaryException {
  private static final long serialVersionUID = 1L;

  /** Why the execution was refused. */
  public enum Reason {
    /** Its outputs were recorded by a concurrent execution: replay that record instead ({@link Invocation#RECORDED_ELSEWHERE}). */
    RECORDED_ELSEWHERE(Invocation.RECORDED_ELSEWHERE),
    /** The caller's graph version is older than the function's deployment ({@link Invocation#STALE_GRAPH}). */
    STALE_GRAPH(Invocation.STALE_GRAPH),
    /** The invocation ID was used for a different request ({@link Invocation#CONFLICTING_REQUEST}). */
    CONFLICTING_REQUEST(Invocation.CONFLICTING_REQUEST),
    /** The invocation started before retention's cutoff ({@link Invocation#PAST_RETENTION}). */
    PAST_RETENTION(Invocation.PAST_RETENTION),
    /** It would run after its invocation's deadline ({@link Invocation#EXPIRED}). */
    EXPIRED(Invocation.EXPIRED);

    private final String type;

    Reason(String type) {
      this.type = type;
    }

    /** The error type the procedure reports it under. */
    public String type() {
      return type;
    }

    /** The reason reported under {@code type}, or {@code null} if it names none (a function's own failure). */
    public static Reason ofType(String type) {
      for (Reason r : values()) {
        if (r.type.equals(type)) {
          return r;
        }
      }
      return null;
    }
  }

  private final String function;
  private final Reason reason;

  /** Creates the refusal of {@code function}'s execution; the message says why, as the procedure said it. */
  public ExecutionRefusedException(String function, Reason reason, String message) {
    super(message);
    this.function = function;
    this.reason = reason;
  }

  /** The function whose execution was refused. */
  public String function() {
    return function;
  }

  /** Why. */
  public Reason reason() {
    return reason;
  }
}
