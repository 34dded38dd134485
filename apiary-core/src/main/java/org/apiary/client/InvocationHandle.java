package org.apiary.client;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.apiary.FunctionFailedException;
import org.apiary.OutcomeUnknownException;
import org.apiary.internal.wire.WireReply;

/**
 * An invocation started with {@link ApiaryClient#start}: it is durably logged, so it runs to its end (taken over by
 * another frontend if its own stops) whether or not anyone waits for it. The handle is only its ID and a client to
 * ask with: any client (and the {@code apiary} CLI) can attach to the same invocation by ID with
 * {@link ApiaryClient#handle(String)}. Every method asks a frontend; none keeps state of its own.
 */
public final class InvocationHandle {
  private final ApiaryClient client;
  private final String id;

  InvocationHandle(ApiaryClient client, String id) {
    this.client = Objects.requireNonNull(client, "client");
    this.id = Objects.requireNonNull(id, "id");
  }

  /** The invocation's ID (as the client named it). */
  public String id() {
    return id;
  }

  /**
   * Asks where the invocation stands: {@link InvocationStatus#QUEUED} while it waits on a queue or for its delay,
   * {@link InvocationStatus#RUNNING} once a frontend runs it, then how it ended.
   *
   * @throws org.apiary.InvalidRequestException if Apiary does not know the ID (never started, or past retention)
   * @throws OutcomeUnknownException if no frontend answered; asking again is safe
   */
  public InvocationStatus status() {
    WireReply reply = client.resultReply(id);
    if (reply.queued()) {
      return InvocationStatus.QUEUED;
    }
    if (WireReply.RUNNING.equals(reply.status())) {
      return InvocationStatus.RUNNING;
    }
    return ended(reply);
  }

  private static InvocationStatus ended(WireReply reply) {
    if (WireReply.OK.equals(reply.status())) {
      return InvocationStatus.DONE;
    }
    if (WireReply.CANCELLED.equals(reply.error())) {
      return InvocationStatus.CANCELLED;
    }
    if (WireReply.FUNCTION_FAILED.equals(reply.error()) || WireReply.INVOCATION_FAILED.equals(reply.error())) {
      return InvocationStatus.FAILED; // a function threw, or the invocation gave up (its outcome is stored)
    }
    throw ApiaryClient.toException(reply);
  }

  /**
   * Cancels the invocation, with a reason stored in its outcome. The cancel is stored in the invocation's partition
   * of the invocation log, where each frontend running it checks before starting each next function: no function of
   * it starts after the cancel is stored; a function running then commits or rolls back as it would. Waiting
   * clients and later {@link #result()} calls get the cancellation (an {@link org.apiary.InvocationCancelledException}
   * with the reason). An invocation that had already ended keeps its outcome.
   *
   * @return {@link InvocationStatus#CANCELLED}, or how the invocation had already ended
   * @throws IllegalArgumentException if the reason is blank or longer than 512 characters
   * @throws org.apiary.InvalidRequestException if Apiary does not know the ID
   * @throws OutcomeUnknownException if no frontend answered; cancelling again is safe
   */
  public InvocationStatus cancel(String reason) {
    WireReply reply = client.cancelReply(id, reason);
    if (WireReply.RUNNING.equals(reply.status())) {
      throw new OutcomeUnknownException("cancelling invocation '" + id + "' got 'running' for an answer", null);
    }
    return ended(reply);
  }

  /**
   * The invocation's result if it has ended, empty while it runs.
   *
   * @throws FunctionFailedException if it ended with a failed function
   * @throws org.apiary.InvalidRequestException if Apiary does not know the ID
   * @throws OutcomeUnknownException if no frontend answered; asking again is safe
   */
  public Optional<GraphResult> result() {
    return client.result(id);
  }

  /**
   * Waits at most {@code timeout} for the invocation to end.
   *
   * @throws OutcomeUnknownException if it has not ended within {@code timeout} (it goes on running), or no frontend
   *     answered
   * @throws FunctionFailedException if it ended with a failed function
   * @throws IllegalArgumentException if {@code timeout} is negative
   */
  public GraphResult await(Duration timeout) {
    return client.awaitResult(id, timeout);
  }

  @Override
  public String toString() {
    return "InvocationHandle[" + id + "]";
  }
}
