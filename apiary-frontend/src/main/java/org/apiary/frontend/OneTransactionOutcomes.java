package org.apiary.frontend;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.apiary.FunctionFailedException;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.FunctionErrors;
import org.apiary.internal.FunctionOutputs;
import org.apiary.internal.Json;
import org.apiary.internal.wire.WireReply;
import org.apiary.runtime.SystemSchema;
import org.voltdb.VoltTable;
import org.voltdb.client.ClientResponse;

/**
 * Outcomes of one-transaction invocations ({@link RegisteredGraph#oneTransaction()}): such an invocation has no
 * invocation-log entry; its outcome is its function's record (outputs, or a recorded failure), written in the
 * function's own transaction or, for an attempt that ends in an error, by a compare-and-set here. Each record carries
 * a hash of the client's request, which marks it as an invocation's outcome and lets a conflicting reuse of the ID
 * under the same partition key be refused.
 */
final class OneTransactionOutcomes {
  private final ApiaryDatabase db;

  OneTransactionOutcomes(ApiaryDatabase db) {
    this.db = db;
  }

  /** Where an invocation's record lives: its table, the key it is stored under, and its function. */
  record Location(String table, Object recordKey, String function, long requestHash) {}

  /**
   * The hash stored with a one-transaction invocation's record: of its graph, partition key and arguments as the
   * frontend parsed them (so the same request sent by any client to any frontend hashes alike).
   */
  static long requestHash(String graph, Object key, List<?> args) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update(graph.getBytes(StandardCharsets.UTF_8));
      sha.update((byte) 0);
      sha.update(Json.bytes(key));
      sha.update((byte) 0);
      sha.update(Json.bytes(args));
      byte[] d = sha.digest();
      long h = 0;
      for (int i = 0; i < 8; i++) {
        h = (h << 8) | (d[i] & 0xFF);
      }
      return h;
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("this JVM has no SHA-256", e);
    }
  }

  /**
   * Stores {@code failure} as the invocation's outcome unless its function recorded something first.
   *
   * @return the stored outcome: {@code failure} (as a failure of the function) if this stored it, else what was
   *     recorded before
   */
  CompletableFuture<WireReply> storeFailure(Location at, String invocation, WireReply failure) {
    FunctionFailedException asFailure = new FunctionFailedException(
        failure.function() != null ? failure.function() : at.function(),
        failure.functionError() != null ? failure.functionError() : failure.error(), failure.message());
    byte[] recorded = FunctionErrors.recordedFailure(asFailure);
    return InvocationLog.callAsync(db, "storing the failure of invocation " + invocation,
            SystemSchema.recordFailureProcedure(at.table()), at.recordKey(), invocation, at.function(), recorded,
            at.requestHash())
        .handle((r, err) -> {
          if (err == null) { // told as any later result(id) will tell it
            return CompletableFuture.completedFuture(reply(invocation, recorded));
          }
          Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
          if (!String.valueOf(cause.getMessage()).toUpperCase(java.util.Locale.ROOT).contains("CONSTRAINT")) {
            return CompletableFuture.<WireReply>failedFuture(cause);
          }
          return stored(at, invocation); // recorded first: that record is the outcome
        })
        .thenCompose(x -> x);
  }

  /** The recorded outcome at a known location (it must exist). */
  private CompletableFuture<WireReply> stored(Location at, String invocation) {
    return InvocationLog.callAsync(db, "reading the outcome of invocation " + invocation,
            SystemSchema.getRecordedProcedure(at.table()), at.recordKey(), invocation, at.function())
        .thenApply(r -> {
          VoltTable t = r.getResults()[0];
          if (!t.advanceRow()) {
            throw new IllegalStateException("the record of invocation " + invocation + " disappeared");
          }
          return reply(invocation, t.getVarbinary(0));
        });
  }

  /** The outcome of a one-transaction invocation found by its ID alone (a multi-partition read), if recorded. */
  CompletableFuture<Optional<WireReply>> find(String invocation) {
    CompletableFuture<Optional<WireReply>> found = CompletableFuture.completedFuture(Optional.empty());
    for (String table : SystemSchema.recordedTables()) {
      found = found.thenCompose(f -> f.isPresent() ? CompletableFuture.completedFuture(f)
          : InvocationLog.callAsync(db, "finding the outcome of invocation " + invocation,
              SystemSchema.findOneTransactionOutcomeProcedure(table), invocation).thenApply(r -> first(r, invocation)));
    }
    return found;
  }

  private static Optional<WireReply> first(ClientResponse r, String invocation) {
    VoltTable t = r.getResults()[0];
    return t.advanceRow() ? Optional.of(reply(invocation, t.getVarbinary(1))) : Optional.empty();
  }

  /** The reply a record stands for: the function's outputs (all of which go to the sink), or its failure. */
  static WireReply reply(String invocation, byte[] recorded) {
    Optional<FunctionFailedException> failure = FunctionErrors.fromRecorded(recorded);
    if (failure.isPresent()) {
      FunctionFailedException f = failure.get();
      return WireReply.functionFailed(invocation, f.functionName(), f.errorType(), f.errorMessage());
    }
    return WireReply.ok(invocation, FunctionOutputs.decode(recorded));
  }
}
