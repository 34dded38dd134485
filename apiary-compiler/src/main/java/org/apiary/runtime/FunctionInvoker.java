package org.apiary.runtime;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apiary.ApiaryException;
import org.apiary.DatabaseException;
import org.apiary.InvalidRequestException;
import org.apiary.OutcomeUnknownException;
import org.apiary.compiler.FunctionKind;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.FunctionErrors;
import org.apiary.internal.FunctionOutputs;
import org.apiary.internal.Invocation;
import org.apiary.runtime.procedure.FunctionProcedure;
import org.voltdb.VoltTable;
import org.voltdb.client.ClientResponse;

/**
 * Calls one compiled function: by name, with arguments, with a partition key for a local function. Asynchronous
 * calls go through VoltDB's asynchronous client, so no thread waits per call; the synchronous form waits at most
 * the configured call timeout (plus a margin).
 *
 * <p>Failures complete the future with {@link org.apiary.FunctionFailedException} (the function threw and was
 * rolled back), {@link OutcomeUnknownException} (no answer; it may have committed), {@link DatabaseException}
 * (not executed) or {@link InvalidRequestException} (the request is wrong; not executed).
 */
public final class FunctionInvoker {
  private final ApiaryDatabase db;
  private final FunctionCatalog catalog;
  private final boolean forwardValues;

  public FunctionInvoker(ApiaryDatabase db, FunctionCatalog catalog) {
    this(db, catalog, false);
  }

  private FunctionInvoker(ApiaryDatabase db, FunctionCatalog catalog, boolean forwardValues) {
    this.db = db;
    this.catalog = catalog;
    this.forwardValues = forwardValues;
  }

  /**
   * An invoker for a caller that only routes the values functions return (a frontend): output values that are
   * arrays or objects come back as {@link org.apiary.internal.ForwardedJson}, their bytes unparsed.
   */
  public static FunctionInvoker forwarding(ApiaryDatabase db, FunctionCatalog catalog) {
    return new FunctionInvoker(db, catalog, true);
  }

  /** Calls a local function with its partition key; the arguments arrive on the source edge. */
  public FunctionResult call(String function, Object partitionKey, Object... args) {
    return await(function, callAsync(function, partitionKey, Invocation.ofArguments(args)));
  }

  /** Calls a global function; the arguments arrive on the source edge. */
  public FunctionResult callGlobal(String function, Object... args) {
    return await(function, callAsync(function, null, Invocation.ofArguments(args)));
  }

  /**
   * Starts a call and returns at once.
   *
   * @param partitionKey the key for a local function (of its declared type), {@code null} for a global one
   */
  public CompletableFuture<FunctionResult> callAsync(String function, Object partitionKey, Invocation invocation) {
    CompletableFuture<FunctionResult> future = new CompletableFuture<>();
    Object[] params;
    try {
      params = parameters(function, partitionKey, invocation);
    } catch (ApiaryException | IllegalArgumentException e) {
      future.completeExceptionally(e instanceof ApiaryException ? e : new InvalidRequestException(e.getMessage(), e));
      return future;
    }
    try {
      // A direct call's answer waits until the journal holds the call (in synchronous mode). A frontend's does not:
      // its graph's later steps are journaled after this one, and its reply to the client waits for them all.
      boolean queued = db.client().callProcedure(response -> {
        if (forwardValues) {
          complete(future, function, response, true);
          return;
        }
        db.whenDurable(() -> complete(future, function, response, false),
            e -> future.completeExceptionally(new OutcomeUnknownException("call to '" + function + "' ran, but the "
                + "journal could not make it durable, so a crash may undo it: " + e.getMessage(), e)));
      }, function, params);
      if (!queued) {
        future.completeExceptionally(new DatabaseException("call to '" + function + "' was not queued: the client is "
            + "backed up or has no connection; it did not run"));
      }
    } catch (IOException e) {
      future.completeExceptionally(new DatabaseException("call to '" + function + "' could not be sent; it did not run: "
          + e.getMessage(), e));
    }
    return future;
  }

  private Object[] parameters(String function, Object partitionKey, Invocation invocation) {
    FunctionCatalog.Entry entry = catalog.get(function).orElseThrow(() -> new InvalidRequestException(
        "unknown function '" + function + "'; deployed functions are " + catalog.entries().keySet()));
    byte[] payload = invocation.toBytes();
    if (entry.kind() == FunctionKind.GLOBAL) {
      if (partitionKey != null) {
        throw new InvalidRequestException("function '" + function + "' is global and takes no partition key");
      }
      return new Object[] {payload};
    }
    entry.keyType().check(partitionKey, "partition key for local function '" + function + "'");
    return new Object[] {partitionKey, payload};
  }

  private static void complete(CompletableFuture<FunctionResult> future, String function, ClientResponse r,
                               boolean forwardValues) {
    if (r.getStatus() == ClientResponse.SUCCESS) {
      try {
        VoltTable t = r.getResults()[0];
        t.advanceRow();
        byte[] outputs = t.getVarbinary(FunctionProcedure.OUTPUTS_INDEX);
        future.complete(new FunctionResult(function,
            forwardValues ? FunctionOutputs.decodeForwarding(outputs) : FunctionOutputs.decode(outputs),
            t.getLong(FunctionProcedure.REPLAYED_INDEX) != 0));
      } catch (RuntimeException e) {
        future.completeExceptionally(new ApiaryException("function '" + function + "' committed but its outputs "
            + "could not be read: " + e.getMessage(), e));
      }
      return;
    }
    var failed = FunctionErrors.decodeCall(r.getStatusString());
    if (failed.isPresent()) {
      future.completeExceptionally(failed.get());
      return;
    }
    future.completeExceptionally(ApiaryDatabase.failure("call to '" + function + "'", r, null));
  }

  private FunctionResult await(String function, CompletableFuture<FunctionResult> future) {
    long waitMs = db.config().callTimeout().toMillis() + 5_000;
    try {
      return future.get(waitMs, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof ApiaryException a) {
        throw a;
      }
      throw new ApiaryException("call to '" + function + "' failed: " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      throw new OutcomeUnknownException("call to '" + function + "' got no answer within " + waitMs
          + " ms; it may or may not have committed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new OutcomeUnknownException("interrupted while waiting for '" + function + "'", e);
    }
  }

  /** The functions this invoker can call. */
  public List<String> functions() {
    return List.copyOf(catalog.entries().keySet());
  }
}
