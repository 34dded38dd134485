package org.apiary.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apiary.FunctionFailedException;
import org.apiary.database.ApiaryDatabase;
import org.apiary.internal.FunctionErrors;
import org.apiary.internal.FunctionOutputs;
import org.apiary.internal.wire.WireReply;
import org.apiary.runtime.SystemSchema;
import org.apiary.runtime.procedure.RecordFailure;
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

  /**
   * Where an invocation's record lives: its table, the key it is stored under, and its function; and the caller
   * that started it (stored with a failure, as the function's transaction stores it with outputs); and the latest
   * database time at which a failure may still be stored (the request's deadline, milliseconds since the epoch; 0:
   * none).
   */
  record Location(String table, Object recordKey, String function, long requestHash, String caller, long deadline) {}

  /** A recorded outcome found by invocation ID, and who started the invocation ({@code null} if not recorded). */
  record Found(WireReply outcome, String caller) {}

  /**
   * The key a function execution's record is stored under: its partition key (integers as long, as the recorded
   * table's BIGINT column holds them), or for a global function ({@code null} key) the invocation ID.
   */
  static Object recordKey(Object partitionKey, String invocation) {
    return partitionKey == null ? invocation : partitionKey instanceof Number n ? (Object) n.longValue() : partitionKey;
  }

  /**
   * The hash stored with a one-transaction invocation's record: 64-bit FNV-1a over its graph name, partition key and
   * arguments as the frontend parsed them (an object's fields in any order), so the same request sent by any client
   * to any frontend hashes alike. It guards against a reused ID, not an adversary: it is not cryptographic.
   */
  static long requestHash(String graph, JsonNode key, List<JsonNode> args) {
    return requestHash(graph, key, args, null);
  }

  /**
   * {@link #requestHash(String, JsonNode, List)}, and the identity that sent the request where credentials are
   * required, so that a record matches only a request of the same identity ({@code null}: none, the hash of a
   * frontend that does not require credentials, as before identities entered it).
   */
  static long requestHash(String graph, JsonNode key, List<JsonNode> args, String identity) {
    long h = FNV_OFFSET;
    h = hash(h, graph);
    h = hash(h, key);
    h = mix(h, args.size());
    for (JsonNode arg : args) {
      h = hash(h, arg);
    }
    return identity == null ? h : hash(mix(h, IDENTITY_MARK), identity);
  }

  /** Marks where an identity follows the arguments in {@link #requestHash}. */
  private static final long IDENTITY_MARK = 0x1D;

  private static final long FNV_OFFSET = 0xcbf29ce484222325L;
  private static final long FNV_PRIME = 0x100000001b3L;

  private static long mix(long h, long value) {
    for (int i = 0; i < 8; i++) {
      h = (h ^ ((value >>> (8 * i)) & 0xFF)) * FNV_PRIME;
    }
    return h;
  }

  private static long hash(long h, String text) {
    h = mix(h, text.length());
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      h = (h ^ (c & 0xFF)) * FNV_PRIME;
      h = (h ^ (c >>> 8)) * FNV_PRIME;
    }
    return h;
  }

  private static long hash(long h, JsonNode node) {
    if (node == null || node.isNull() || node.isMissingNode()) {
      return mix(h, 0);
    }
    h = mix(h, node.getNodeType().ordinal() + 1);
    if (node.isObject()) { // fields in any order hash alike, as JSON objects compare
      long fields = 0;
      for (var it = node.fields(); it.hasNext(); ) {
        var field = it.next();
        fields += hash(hash(FNV_OFFSET, field.getKey()), field.getValue());
      }
      return mix(mix(h, node.size()), fields);
    }
    if (node.isArray()) {
      h = mix(h, node.size());
      for (JsonNode element : node) {
        h = hash(h, element);
      }
      return h;
    }
    if (node.isIntegralNumber() && node.canConvertToLong()) {
      return mix(h, node.longValue());
    }
    if (node.isNumber()) {
      return hash(h, node.numberValue().toString());
    }
    if (node.isBoolean()) {
      return mix(h, node.booleanValue() ? 1 : 2);
    }
    if (node.isBinary()) {
      return hash(h, node.asText());
    }
    return hash(h, node.asText());
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
            SystemSchema.recordFailureFencedProcedure(at.table()), at.recordKey(), invocation, at.function(),
            recorded, at.requestHash(), at.caller(), 0L, at.deadline())
        .thenCompose(r -> r.getResults()[0].asScalarLong() == RecordFailure.RECORDED
            ? CompletableFuture.completedFuture(reply(invocation, recorded)) // told as any later result(id) will
            : stored(at, invocation)); // recorded first: that record is the outcome
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
  CompletableFuture<Optional<Found>> find(String invocation) {
    CompletableFuture<Optional<Found>> found = CompletableFuture.completedFuture(Optional.empty());
    for (String table : SystemSchema.recordedTables()) {
      found = found.thenCompose(f -> f.isPresent() ? CompletableFuture.completedFuture(f)
          : InvocationLog.callAsync(db, "finding the outcome of invocation " + invocation,
              SystemSchema.findOutcomeWithCallerProcedure(table), invocation).thenApply(r -> first(r, invocation)));
    }
    return found;
  }

  private static Optional<Found> first(ClientResponse r, String invocation) {
    VoltTable t = r.getResults()[0];
    if (!t.advanceRow()) {
      return Optional.empty();
    }
    WireReply outcome = reply(invocation, t.getVarbinary(1));
    String caller = t.getString(2);
    return Optional.of(new Found(outcome, t.wasNull() ? null : caller));
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
