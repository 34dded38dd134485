package org.apiary.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apiary.ApiaryException;
import org.apiary.ExternalFunction;
import org.apiary.FunctionFailedException;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.ExternalAccess;
import org.apiary.internal.FunctionErrors;
import org.apiary.internal.FunctionOutputs;
import org.apiary.internal.Json;
import org.apiary.internal.Output;
import org.apiary.runtime.FunctionResult;
import org.apiary.runtime.SystemSchema;
import org.apiary.runtime.procedure.RecordFailure;

/**
 * Runs the external steps of a frontend's graphs ({@link ExternalFunction}): each attempt on a bounded pool of its
 * own (never on the socket thread or the database client's callback threads), each attempt bounded by the step's
 * timeout, back-off between attempts on a timer; and, for a recorded step, its outputs (or its final failure)
 * stored in the recorded-outputs table before the dispatcher routes them, so a later execution of the invocation
 * (a retry, a takeover, a resent request) replays the record instead of calling the step again.
 *
 * <p>The record goes where a global function's would: the {@code VARCHAR} table under the invocation ID, through the
 * fenced single-partition procedure frontends already use to record failures ({@code RecordFailure*}, which stores
 * whatever bytes it is given) and read back with {@code ApiaryGetRecorded_*}: no procedure of its own, no grant.
 */
final class ExternalSteps implements AutoCloseable {
  private static final Logger LOG = System.getLogger(ExternalSteps.class.getName());
  /** Threads that run attempts: at most this many steps call out at once in one frontend. */
  static final int THREADS = 16;
  /** Attempts waiting for a thread; beyond it an attempt fails at once (and is retried after its back-off). */
  static final int QUEUE = 1_024;

  private final ApiaryDatabase db;
  private final ThreadPoolExecutor pool;
  private final ScheduledExecutorService timer;
  /**
   * Loads the steps' classes and is their threads' context class loader: the one of the thread that started the
   * frontend. Not a thread's that happens to submit an attempt: that may be the database client's, whose context
   * is VoltDB's own (where, for one, {@code new URL("http://...")} fails with "unknown protocol").
   */
  private final ClassLoader loader;

  ExternalSteps(ApiaryDatabase db) {
    this.db = db;
    ClassLoader context = Thread.currentThread().getContextClassLoader();
    this.loader = context != null ? context : ExternalSteps.class.getClassLoader();
    this.pool = new ThreadPoolExecutor(THREADS, THREADS, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(QUEUE),
        r -> {
          Thread t = daemon(r, "apiary-external-step");
          t.setContextClassLoader(loader);
          return t;
        });
    this.pool.allowCoreThreadTimeOut(true);
    ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> daemon(r, "apiary-external-timer"));
    t.setRemoveOnCancelPolicy(true);
    this.timer = t;
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  /** The key every attempt of a step gets: invocation and step name, the same on every frontend. */
  static String idempotencyKey(String invocationId, String step) {
    return invocationId + "#" + step;
  }

  /**
   * Runs one external step of an invocation, or replays its record.
   *
   * @param record whether its outputs are recorded (always, but under {@link org.apiary.RecordingMode#NONE})
   * @param notBefore the invocation's retention fence for the record, or {@code null}
   * @param deadline the latest database time the record may be stored at, or {@code null}
   * @param admit checked before every attempt, the first included: the attempt is made only once it completes
   *     normally, and the step fails with its error otherwise (the invocation ended)
   * @param beforeCallingOut run on the attempt's thread right before the step runs; if it throws, the step's
   *     attempts end with its error (this frontend's lease lapsed: another may run the invocation now)
   */
  CompletableFuture<FunctionResult> run(RegisteredGraph.Node node, String invocationId,
                                        Map<String, List<JsonNode>> inputs, boolean record, String caller,
                                        Long notBefore, Long deadline,
                                        java.util.function.Supplier<CompletableFuture<Void>> admit,
                                        java.util.function.Consumer<String> beforeCallingOut) {
    String step = node.function();
    if (!record) {
      return attempts(node, invocationId, inputs, () -> admit.get().thenApply(x -> Optional.empty()),
          beforeCallingOut)
          .thenApply(done -> new FunctionResult(step,
              FunctionOutputs.decodeForwarding(FunctionOutputs.encode(done.outputs())), false));
    }
    // Before every attempt, not only the first: another execution of the invocation (a takeover while this one was
    // paused, its attempt timing out on resuming) may have stored the step's answer since, which this one then replays
    // instead of calling the step again.
    return attempts(node, invocationId, inputs, () -> admit.get().thenCompose(x -> recorded(step, invocationId)),
        beforeCallingOut)
        .handle((done, err) -> {
          if (err == null) {
            return done.record() != null
                ? CompletableFuture.completedFuture(replay(step, done.record(), true))
                : store(step, invocationId, FunctionOutputs.encode(done.outputs()), caller, notBefore, deadline);
          }
          Throwable cause = InvocationCoordinator.unwrap(err);
          if (cause instanceof FunctionFailedException f && ExternalFunction.FAILED.equals(f.errorType())
              && f.functionName().equals(step)) {
            return store(step, invocationId, FunctionErrors.recordedFailure(f), caller, notBefore, deadline);
          }
          return CompletableFuture.<FunctionResult>failedFuture(cause);
        }).thenCompose(x -> x);
  }

  /** How a step's attempts ended: with the outputs of the one that returned, or with a record found before one. */
  private record Attempted(List<Output> outputs, byte[] record) {
  }

  /** The step's record, if one is stored. */
  private CompletableFuture<Optional<byte[]>> recorded(String step, String invocationId) {
    return InvocationLog.callAsync(db, "reading the record of external step '" + step + "'",
            SystemSchema.getRecordedProcedure(SystemSchema.RECORDED_VARCHAR), invocationId, invocationId, step)
        .thenApply(r -> {
          var t = r.getResults()[0];
          return t.advanceRow() ? Optional.of(t.getVarbinary(0)) : Optional.empty();
        });
  }

  /**
   * Stores the step's outcome; if another execution stored one first, that one stands and is what this execution
   * goes on with.
   */
  private CompletableFuture<FunctionResult> store(String step, String invocationId, byte[] outcome, String caller,
                                                  Long notBefore, Long deadline) {
    return InvocationLog.callAsync(db, "recording the outputs of external step '" + step + "'",
            SystemSchema.recordFailureFencedProcedure(SystemSchema.RECORDED_VARCHAR), invocationId, invocationId,
            step, outcome, null, caller, notBefore == null ? 0L : notBefore, deadline == null ? 0L : deadline)
        // Not stored, or no answer: the call fails, so this execution does; a later one calls the step again.
        .thenCompose(r -> r.getResults()[0].asScalarLong() == RecordFailure.RECORDED
            ? CompletableFuture.completedFuture(replay(step, outcome, false))
            : recorded(step, invocationId).thenApply(found -> replay(step, found.orElseThrow(() ->
                new ApiaryException("the record of external step '" + step + "' for invocation " + invocationId
                    + " disappeared", null)), true)));
  }

  /** A record as the step's result: its outputs, or its failure thrown. */
  private static FunctionResult replay(String step, byte[] recorded, boolean replayed) {
    Optional<FunctionFailedException> failure = FunctionErrors.fromRecorded(recorded);
    if (failure.isPresent()) {
      throw failure.get();
    }
    return new FunctionResult(step, FunctionOutputs.decodeForwarding(recorded), replayed);
  }

  /**
   * Every attempt the step's policy allows, until one returns or {@code before} (run before each) finds the step's
   * record or fails.
   */
  private CompletableFuture<Attempted> attempts(RegisteredGraph.Node node, String invocationId,
                                                Map<String, List<JsonNode>> inputs,
                                                java.util.function.Supplier<CompletableFuture<Optional<byte[]>>> before,
                                                java.util.function.Consumer<String> beforeCallingOut) {
    CompletableFuture<Attempted> done = new CompletableFuture<>();
    Class<? extends ExternalFunction> stepClass;
    try {
      stepClass = load(node);
    } catch (ApiaryException e) {
      done.completeExceptionally(e);
      return done;
    }
    checkThenAttempt(new Step(node, stepClass, invocationId, inputs, before, beforeCallingOut), 1, done);
    return done;
  }

  /** One execution of a step: what each of its attempts needs. */
  private record Step(RegisteredGraph.Node node, Class<? extends ExternalFunction> stepClass, String invocationId,
                      Map<String, List<JsonNode>> inputs,
                      java.util.function.Supplier<CompletableFuture<Optional<byte[]>>> before,
                      java.util.function.Consumer<String> beforeCallingOut) {
  }

  private void checkThenAttempt(Step step, int n, CompletableFuture<Attempted> done) {
    CompletableFuture<Optional<byte[]>> checked;
    try {
      checked = step.before().get();
    } catch (RuntimeException e) {
      done.completeExceptionally(e);
      return;
    }
    checked.whenComplete((found, err) -> {
      if (err != null) {
        done.completeExceptionally(InvocationCoordinator.unwrap(err));
      } else if (found.isPresent()) {
        done.complete(new Attempted(null, found.get()));
      } else {
        attempt(step, n, done);
      }
    });
  }

  private Class<? extends ExternalFunction> load(RegisteredGraph.Node node) {
    String name = node.external().className();
    try {
      Class<?> c = Class.forName(name, true, loader);
      if (!ExternalFunction.class.isAssignableFrom(c)) {
        throw new ApiaryException("external step '" + node.function() + "' names class " + name
            + ", which does not extend ExternalFunction", null);
      }
      return c.asSubclass(ExternalFunction.class);
    } catch (ClassNotFoundException e) {
      // Not recorded as the step's failure: a frontend that has the class may run it.
      throw new ApiaryException("external step '" + node.function() + "' cannot run in this frontend: its class "
          + name + " is not on the frontend's classpath", e);
    } catch (LinkageError e) {
      throw new ApiaryException("external step '" + node.function() + "' cannot run in this frontend: its class "
          + name + " could not be loaded: " + e, e);
    }
  }

  private void attempt(Step step, int n, CompletableFuture<Attempted> done) {
    RegisteredGraph.Node node = step.node();
    String invocationId = step.invocationId();
    RegisteredGraph.External policy = node.external();
    AttemptRuntime runtime = new AttemptRuntime(node.function(), invocationId, step.inputs(), n);
    CompletableFuture<List<Output>> attempt = new CompletableFuture<>();
    Future<?> task = null;
    try {
      task = pool.submit(() -> {
        try {
          step.beforeCallingOut().accept(node.function());
          ExternalFunction function = step.stepClass().getConstructor().newInstance();
          ExternalAccess.run(function, runtime);
          attempt.complete(runtime.close());
        } catch (LeaseLapsedException e) {
          runtime.close();
          attempt.completeExceptionally(e);
        } catch (Exception | Error e) {
          runtime.close();
          attempt.completeExceptionally(e instanceof java.lang.reflect.InvocationTargetException i
              && i.getCause() != null ? i.getCause() : e);
          if (e instanceof VirtualMachineError vm) {
            throw vm; // the attempt failed; the JVM's own trouble goes on up
          }
        }
      });
    } catch (RejectedExecutionException e) {
      attempt.completeExceptionally(new ApiaryException("this frontend already runs " + THREADS + " external steps "
          + "and has " + QUEUE + " waiting", e));
    }
    Future<?> running = task;
    java.util.concurrent.ScheduledFuture<?> timeout;
    try {
      timeout = timer.schedule(() -> {
        if (attempt.completeExceptionally(new java.util.concurrent.TimeoutException("attempt " + n + " took longer "
            + "than its timeout of " + policy.timeoutMs() + " ms")) && running != null) {
          running.cancel(true);
        }
      }, policy.timeoutMs(), TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      if (running != null) {
        running.cancel(true);
      }
      done.completeExceptionally(new ApiaryException("this frontend stopped while external step '"
          + node.function() + "' ran", e));
      return;
    }
    attempt.whenComplete((outputs, err) -> {
      timeout.cancel(false);
      if (err == null) {
        done.complete(new Attempted(outputs, null));
        return;
      }
      if (err instanceof LeaseLapsedException e) {
        done.completeExceptionally(e); // not an attempt: the step was not called, and may not be from here
        return;
      }
      if (n >= policy.maxAttempts()) {
        done.completeExceptionally(new FunctionFailedException(node.function(), ExternalFunction.FAILED,
            "external step '" + node.function() + "' failed " + n + (n == 1 ? " attempt" : " attempts")
                + "; the last: " + describe(err)));
        return;
      }
      long wait = policy.policy().backoffAfter(n).toMillis();
      LOG.log(Level.DEBUG, "external step " + node.function() + " of invocation " + invocationId + ": attempt " + n
          + " failed (" + describe(err) + "); retrying in " + wait + " ms");
      try {
        timer.schedule(() -> checkThenAttempt(step, n + 1, done), wait, TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException e) {
        done.completeExceptionally(new ApiaryException("this frontend stopped before external step '"
            + node.function() + "' could be attempted again", e));
      }
    });
  }

  private static String describe(Throwable e) {
    return e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
  }

  /** Stops the pool and the timer; attempts still running are interrupted. */
  @Override
  public void close() {
    timer.shutdownNow();
    pool.shutdownNow();
  }

  /** One attempt's view of the graph; its outputs are kept only until the attempt ends. */
  private static final class AttemptRuntime implements ExternalAccess.Runtime {
    private final String step;
    private final String invocationId;
    private final Map<String, List<JsonNode>> inputs;
    private final int attempt;
    private final List<Output> outputs = new ArrayList<>();
    private boolean closed;

    AttemptRuntime(String step, String invocationId, Map<String, List<JsonNode>> inputs, int attempt) {
      this.step = step;
      this.invocationId = invocationId;
      this.inputs = inputs;
      this.attempt = attempt;
    }

    @Override
    public String functionName() {
      return step;
    }

    @Override
    public List<JsonNode> inputs(String edge) {
      return inputs.getOrDefault(edge, List.of());
    }

    @Override
    public synchronized void output(String edge, Object value, Object partitionKey) {
      if (closed) {
        throw new IllegalStateException("attempt " + attempt + " of external step '" + step + "' has ended (it timed "
            + "out); its outputs are discarded");
      }
      outputs.add(new Output(edge, partitionKey == null ? null : Json.tree(partitionKey), Json.tree(value)));
    }

    @Override
    public String idempotencyKey() {
      return ExternalSteps.idempotencyKey(invocationId, step);
    }

    @Override
    public int attempt() {
      return attempt;
    }

    @Override
    public String invocationId() {
      return invocationId;
    }

    synchronized List<Output> close() {
      closed = true;
      return List.copyOf(outputs);
    }
  }
}
