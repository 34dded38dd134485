package org.apiary.client;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apiary.internal.wire.WireReply;
import org.apiary.internal.wire.WireRequest;

/**
 * One request on its way through the client's I/O thread.
 *
 * <p>{@link #reply} is completed with the frontend's definite answer (OK, RUNNING for a result request, or a
 * non-retryable error), or exceptionally when the client gives up; whoever completes it first wins. Every other
 * field belongs to the I/O thread.
 */
final class PendingCall {
  /** The request type; each has its own sockets, so replies to the two kinds can never be confused. */
  enum Kind {
    INVOKE(WireRequest.INVOKE), RESULT(WireRequest.RESULT);

    final String wireName;

    Kind(String wireName) {
      this.wireName = wireName;
    }
  }

  final Kind kind;
  final String id;
  /** The encoded request; the I/O thread drops it once the call is answered, as a stale deadline may hold the call. */
  byte[] bytes;
  /**
   * How many leading bytes of {@link #bytes} are the request itself: all but its closing brace, where an invoke
   * call's expiry goes.
   */
  int requestLength;
  final CompletableFuture<WireReply> reply = new CompletableFuture<>();

  /** Attempts started so far. */
  int attempts;
  /** The frontend of the first attempt; attempt {@code k} goes to {@code (firstFrontend + k) % n}. */
  int firstFrontend;
  /** The frontend of the latest attempt, or -1 before the first. */
  int currentFrontend = -1;
  /** One line per finished attempt, for the error message. */
  final List<String> history = new ArrayList<>();
  /** Whether some attempt reached a frontend and got no definite answer (a timeout or an outcome-unknown error). */
  boolean mayHaveRun;
  /** Whether some attempt was refused with a database error. */
  boolean refusedByDatabase;
  /** Whether some attempt reached a frontend only after the call's expiry (by the frontend's clock). */
  boolean refusedAsExpired;
  /** Whether some attempt was refused by a frontend at its in-flight limit. */
  boolean refusedAsOverloaded;
  /** The call's span if it is traced ({@link ClientTracing}), else {@code null}. */
  io.opentelemetry.api.trace.Span callSpan;
  /** The current attempt's span while it is unanswered, else {@code null} (I/O thread). */
  io.opentelemetry.api.trace.Span attemptSpan;
  /** {@link #bytes} with the current attempt's trace context, or {@code null} if the call is not traced. */
  byte[] attemptBytes;
  /** The latest attempt's deadline while the call is unanswered. */
  ClientIoLoop.Deadline deadline;

  /**
   * Whether the request starts an invocation and so carries its expiry: every invoke call, and a result-kind call
   * that sends a {@link WireRequest#START} request (answered, like a result request, with {@code running}).
   */
  final boolean starts;
  /**
   * Whether it is a plain result request, which a second one for the same ID may share; a start or a cancel (also
   * result-kind calls) shares only with an equal request.
   */
  final boolean plainResult;

  PendingCall(Kind kind, String id, byte[] bytes) {
    this(kind, id, bytes, kind == Kind.INVOKE, kind == Kind.RESULT);
  }

  PendingCall(Kind kind, String id, byte[] bytes, boolean starts, boolean plainResult) {
    this.starts = starts;
    this.plainResult = plainResult;
    this.kind = kind;
    this.id = id;
    this.bytes = bytes;
    this.requestLength = bytes.length - 1;
  }

  /**
   * Adds to an invoke request the time after which its client stops waiting ({@link WireRequest#expires()}), so that
   * a copy that reaches a frontend later (queued for one that was down or paused) is not started then.
   */
  void expireAt(long epochMillis) {
    bytes = WireRequest.withExpiry(bytes, epochMillis);
  }

  /** Whether {@code other}, a call not yet begun, asks for the same thing as this one (whatever their expiries). */
  boolean sameRequest(PendingCall other) {
    byte[] mine = bytes;
    return mine != null && java.util.Arrays.equals(mine, 0, requestLength, other.bytes, 0, other.requestLength);
  }

  /** Names the call in messages: {@code invocation 'ID'} or {@code result request for invocation 'ID'}. */
  String describe() {
    return (kind == Kind.INVOKE ? "invocation '" : "result request for invocation '") + id + "'";
  }
}
