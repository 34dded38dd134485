package org.apiary;

import java.util.List;
import org.apiary.internal.ExternalAccess;
import org.apiary.internal.Json;

/**
 * An external step: a function that runs in the frontend, not in the database, so it may do I/O (charge a card,
 * send an email, call any HTTP API) but has no way to reach SQL: it is not an {@link ApiaryFunction} and gets no
 * statement, query or transaction. It is placed in a graph like any other function
 * ({@link Graph#addExternalFunction}), reads its inputs and returns outputs along edges the same way, and runs once
 * its inputs are complete (like a {@link GlobalFunction}: once per invocation, whatever partition keys its inputs
 * carry).
 *
 * <pre>{@code
 * public class Charge extends ExternalFunction {
 *   protected void run() throws Exception {
 *     long cents = retrieveInput("amount", Long.class);
 *     String receipt = payments.charge(cents, idempotencyKey()); // the service drops a repeated key
 *     returnOutput(receipt, "receipt");
 *   }
 * }
 * }</pre>
 *
 * <h2>What Apiary guarantees</h2>
 * <ul>
 *   <li>Its outputs (or its final failure) are recorded in the database before any later function sees them, so
 *       once a step has returned, no recovery, takeover or resent request calls it again: the record is replayed.
 *       Algorithm 1 counts it as a recorded function.</li>
 *   <li>A call cut off mid-flight (the frontend died, or the attempt timed out, before the outputs were recorded)
 *       is made again: an external step runs <b>at least once</b>. Every attempt, on every frontend, gets the same
 *       {@link #idempotencyKey()}: hand it to the outside service so it can drop the repeat.</li>
 *   <li>Attempts, their timeout and the back-off between them are declared with the step ({@link StepPolicy}); a
 *       step that exhausts them fails its graph with a {@link FunctionFailedException} of type {@value #FAILED}
 *       naming the step and the cause.</li>
 * </ul>
 *
 * <h2>Rules a step follows</h2>
 * <ul>
 *   <li>It has a public no-argument constructor; Apiary creates a fresh instance for every attempt. Its class is on
 *       the classpath of every frontend that may run its graph.</li>
 *   <li>It answers interruption: an attempt that outlives its timeout is interrupted and its outputs discarded.</li>
 *   <li>It throws to fail an attempt; the next attempt starts after the back-off.</li>
 * </ul>
 */
public abstract class ExternalFunction {
  /** The error type of a step that failed every attempt. */
  public static final String FAILED = "ExternalStepFailed";

  static {
    ExternalAccess.install(ExternalFunction::runWith);
  }

  private ExternalAccess.Runtime runtime;

  /** For subclasses. */
  protected ExternalFunction() {}

  /**
   * The step's body: reads inputs, calls the outside world, returns outputs.
   *
   * @throws Exception to fail this attempt
   */
  protected abstract void run() throws Exception;

  private static void runWith(ExternalFunction step, ExternalAccess.Runtime runtime) throws Exception {
    step.runtime = runtime;
    try {
      step.run();
    } finally {
      step.runtime = null;
    }
  }

  private ExternalAccess.Runtime runtime() {
    ExternalAccess.Runtime r = runtime;
    if (r == null) {
      throw new IllegalStateException("the external step API is only usable while a frontend runs this step");
    }
    return r;
  }

  /**
   * The single input on an edge, converted to {@code type}.
   *
   * @throws IllegalArgumentException if the edge carries no input, more than one, or one that is not a {@code type}
   */
  protected final <T> T retrieveInput(String edge, Class<T> type) {
    List<com.fasterxml.jackson.databind.JsonNode> values = runtime().inputs(edge);
    String where = "input on edge '" + edge + "' of external step '" + runtime().functionName() + "'";
    if (values.size() != 1) {
      throw new IllegalArgumentException("external step '" + runtime().functionName() + "' expected exactly one "
          + "input on edge '" + edge + "' but received " + values.size());
    }
    return Json.convert(values.get(0), type, where);
  }

  /** Every input on an edge, converted to {@code type}, in the order they were sent; empty if there are none. */
  protected final <T> List<T> retrieveInputs(String edge, Class<T> type) {
    String where = "input on edge '" + edge + "' of external step '" + runtime().functionName() + "'";
    return runtime().inputs(edge).stream().map(v -> Json.convert(v, type, where)).toList();
  }

  /** Returns a value to the caller, along the {@link ApiaryFunction#SINK} edge. */
  protected final void returnOutput(Object value) {
    runtime().output(ApiaryFunction.SINK, value, null);
  }

  /** Returns a value along an edge into a global function, another step, or the sink. */
  protected final void returnOutput(Object value, String edge) {
    runtime().output(edge, value, null);
  }

  /** Returns a value along an edge into a local function, with the partition key it runs under. */
  protected final void returnOutput(Object value, String edge, Object partitionKey) {
    runtime().output(edge, value, partitionKey);
  }

  /**
   * A key naming this step's call within its invocation, the same in every attempt on every frontend (it is made of
   * the invocation ID and the step's name): pass it to the outside service as its idempotency key, so that the
   * repeat of a call cut off mid-flight is recognized.
   */
  protected final String idempotencyKey() {
    return runtime().idempotencyKey();
  }

  /** Which attempt this is, from 1 (attempts of earlier frontends not counted). */
  protected final int attempt() {
    return runtime().attempt();
  }

  /** The ID of the invocation this step runs for. */
  protected final String invocationId() {
    return runtime().invocationId();
  }

  /** The name this step was added to its graph under. */
  protected final String functionName() {
    return runtime().functionName();
  }
}
