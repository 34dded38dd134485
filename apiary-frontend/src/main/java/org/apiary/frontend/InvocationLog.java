package org.apiary.frontend;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apiary.DatabaseException;
import org.apiary.database.ApiaryDatabase;
import org.apiary.runtime.SystemSchema;
import org.apiary.runtime.procedure.InvocationLogBatch;
import org.voltdb.VoltTable;
import org.voltdb.client.ClientResponse;
import org.voltdb.types.TimestampType;

/**
 * The invocation log in the database: every graph invocation is logged before it starts, with the frontend running
 * it, and its outcome when it ends. It lets a live frontend finish a dead one's invocations and lets any client
 * fetch an outcome by invocation ID. Single-invocation operations are single-partition procedures called
 * asynchronously; the recovery scans are multi-partition and run off the request path.
 */
final class InvocationLog {
  /** Status of an invocation that has not ended. */
  static final String RUNNING = SystemSchema.STATUS_RUNNING;
  /** Status of an invocation that ended with a result for the client. */
  static final String DONE = SystemSchema.STATUS_DONE;
  /** Status of an invocation that ended with a function's failure. */
  static final String FAILED = SystemSchema.STATUS_FAILED;
  /** Status of an invocation that was cancelled (issue 42). */
  static final String CANCELLED = SystemSchema.STATUS_CANCELLED;

  /**
   * One logged invocation.
   *
   * @param graphVersion the version of the graph the invocation runs under
   * @param request the client's request as received (JSON)
   * @param attempts how many attempts were started (the first, and one per claim)
   * @param result the reply for the client (JSON), once ended
   */
  public record Entry(String invocationId, String graph, int graphVersion, byte[] request, String frontend,
                      String status, int attempts, byte[] result, long startedAtMillis) {
    /** The invocation's retention fence for its recorded executions ({@code Invocation.notBefore}), if known. */
    Long notBefore() {
      return InvocationLog.notBefore(startedAtMillis);
    }
  }

  /**
   * What a begin did.
   *
   * @param begun the invocation was logged now, as new
   * @param pastDeadline it was not logged: it reached the database after its deadline
   * @param startedAtMillis if begun, its start as logged (database clock)
   */
  record Began(boolean begun, boolean pastDeadline, long startedAtMillis) {
    /** The invocation's retention fence for its recorded executions ({@code Invocation.notBefore}), if known. */
    Long notBefore() {
      return InvocationLog.notBefore(startedAtMillis);
    }
  }

  /**
   * Records of a running invocation are never older than its start minus this (clock skew between hosts); the
   * database's retention keeps its fence at least as far before the oldest running invocation's start.
   */
  private static final long SKEW_MARGIN_MS = org.apiary.runtime.procedure.AdvanceRetentionByClock.MIN_RETENTION_MS;
  private static final String COLUMNS = "invocation_id, graph, graph_version, request, frontend, status, attempts, "
      + "result, SINCE_EPOCH(MILLISECOND, started_at)";

  /**
   * The earliest time (database clock) at which a record of an invocation that started at {@code startedAtMillis}
   * can have been written ({@code null} if the start is unknown); retention never deletes such a record while the
   * invocation runs, since its cutoff stays before the oldest running invocation's start less the same margin.
   */
  static Long notBefore(long startedAtMillis) {
    // 0: a log procedure of an earlier release, which does not return the start; its attempts go unfenced.
    return startedAtMillis > 0 ? startedAtMillis - SKEW_MARGIN_MS : null;
  }

  private final ApiaryDatabase db;
  private final InvocationLogBatcher batcher;

  public InvocationLog(ApiaryDatabase db) {
    this.db = db;
    this.batcher = new InvocationLogBatcher(db);
  }

  /**
   * Logs a new invocation run by {@code frontend} (batched with other log writes of its partition).
   *
   * @return true if it was logged now, false if the ID was already logged
   */
  public CompletableFuture<Boolean> begin(String invocationId, String graph, int graphVersion, byte[] request,
                                          String frontend) {
    return begin(invocationId, graph, graphVersion, request, frontend, 0L).thenApply(Began::begun);
  }

  /**
   * Logs a new invocation run by {@code frontend} unless the database's clock is past {@code deadline} (milliseconds
   * since the epoch; 0: none).
   */
  CompletableFuture<Began> begin(String invocationId, String graph, int graphVersion, byte[] request,
                                 String frontend, long deadline) {
    return batcher.submit(new InvocationLogBatch.Begin(invocationId, graph, graphVersion, request, frontend, deadline))
        .thenApply(a -> new Began(a.applied(), a.code() == InvocationLogBatch.PAST_DEADLINE, a.startedAtMillis()));
  }

  /** The logged invocation, if there is one. */
  public CompletableFuture<Optional<Entry>> get(String invocationId) {
    return call("reading invocation " + invocationId, SystemSchema.GET_INVOCATION, invocationId)
        .thenApply(r -> read(r.getResults()[0]).stream().findFirst());
  }

  /** The logged invocation's status alone, if it is logged (a light read in its partition). */
  CompletableFuture<Optional<String>> status(String invocationId) {
    return call("reading the status of invocation " + invocationId, SystemSchema.INVOCATION_STATUS, invocationId)
        .thenApply(r -> {
          VoltTable t = r.getResults()[0];
          return t.advanceRow() ? Optional.of(t.getString(0)) : Optional.<String>empty();
        });
  }

  /**
   * Cancels a running invocation: stores {@code result} (the reply its clients get) as its outcome, with status
   * {@link #CANCELLED}, unless it has ended.
   *
   * @return true if this call cancelled it, false if it had ended (or is unknown)
   */
  CompletableFuture<Boolean> cancel(String invocationId, byte[] result) {
    return call("cancelling invocation " + invocationId, SystemSchema.CANCEL_INVOCATION, invocationId, result)
        .thenApply(r -> r.getResults()[0].asScalarLong() == 1);
  }

  /**
   * Stores an invocation's outcome if it is still running: the first outcome stored is the only one.
   *
   * @return true if this call stored it, false if the invocation had ended already (or is unknown)
   */
  public CompletableFuture<Boolean> finish(String invocationId, String status, byte[] result) {
    return batcher.submit(new InvocationLogBatch.Finish(invocationId, status, result))
        .thenApply(InvocationLogBatcher.Applied::applied);
  }

  /**
   * Makes {@code frontend} the runner of a still-running invocation for its next attempt, under a graph version.
   *
   * @return true if the invocation is still running (and now claimed), false if it ended
   */
  public CompletableFuture<Boolean> claim(String invocationId, String frontend, int graphVersion) {
    return call("claiming invocation " + invocationId, SystemSchema.CLAIM_INVOCATION, frontend, graphVersion,
        invocationId).thenApply(r -> r.getResults()[0].asScalarLong() == 1);
  }

  /** How many transactions the batched log writes took so far. */
  long batchedTransactions() {
    return batcher.transactions();
  }

  /**
   * The running invocations owned by {@code frontend} that started at least {@code minAge} ago by the database's
   * clock (a multi-partition read; for recovery).
   */
  public List<Entry> running(String frontend, java.time.Duration minAge) {
    return read(db.callAdmin("listing running invocations", "@AdHoc",
        "SELECT " + COLUMNS + " FROM " + SystemSchema.INVOCATIONS + " WHERE frontend = ? AND status = 'RUNNING'"
            + " AND started_at <= DATEADD(MILLISECOND, " + (-minAge.toMillis()) + ", NOW)", frontend)
        .getResults()[0]);
  }

  /**
   * Moves every running invocation of {@code from} to {@code to}; returns how many moved. Idempotent: a takeover
   * that fails after this still leaves the dead frontend's lease for the next attempt to find.
   */
  public long reassign(String from, String to) {
    return db.callAdmin("taking over the invocations of frontend " + from, SystemSchema.REASSIGN_INVOCATIONS, to, from)
        .getResults()[0].asScalarLong();
  }

  /**
   * Deletes ended invocations and recorded outputs older than {@code retention} by the database's clock, never a
   * record of a running invocation. The database chooses the cutoff ({@code AdvanceRetentionByClock}): its own clock
   * less the longest of {@code retention}, one second and the administrator's minimum ({@link #setMinimumRetention}),
   * kept a second before the start of the oldest running invocation; it moves retention's fence there first, and the
   * steps that follow delete nothing past the fence. It works partition by partition in single-partition transactions
   * of {@value #RETENTION_STEP_ROWS} rows (recorded outputs swept in key order, ended invocations deleted by their
   * time index), so no partition waits for more than one step and none waits for the others' (one multi-partition
   * delete of a whole interval's records stopped every partition until it ended).
   *
   * @return rows deleted
   */
  public long deleteOlderThan(java.time.Duration retention) {
    return deleteOlderThan(retention, RETENTION_STEP_ROWS);
  }

  /** The rows one retention step covers in one partition (scans, for recorded outputs; deletes at most, otherwise). */
  static final int RETENTION_STEP_ROWS = 2000;

  long deleteOlderThan(java.time.Duration retention, int stepRows) {
    // The fence first: from now on no recorded execution of an invocation that started before the cutoff commits,
    // so none can miss a record this pass deletes and apply its writes again.
    long fenceMicros = db.callAdmin("advancing retention's fence", SystemSchema.ADVANCE_RETENTION_BY_CLOCK,
        retention.toMillis()).getResults()[0].asScalarLong();
    if (fenceMicros <= 0) {
      return 0; // no fence yet: nothing is old enough
    }
    TimestampType cutoff = new TimestampType(fenceMicros);
    // Recorded outputs go first: once an invocation's log entry is gone, a new invocation with its ID is a first
    // run that skips the lookup, so no record of the old one may be left.
    long deleted = 0;
    for (String table : SystemSchema.recordedTables()) {
      deleted += sweep(table, cutoff, stepRows);
    }
    return deleted + expire(SystemSchema.INVOCATIONS, cutoff, stepRows);
  }

  /**
   * Sets the shortest retention any frontend's pass applies, whatever retention the frontend is configured with: a
   * frontend may keep records longer, never shorter. The administrator's (the frontends' database user may not call
   * it); {@link Duration#ZERO} leaves only the one-second margin.
   *
   * @param admin the database, connected as its administrator
   */
  public static void setMinimumRetention(ApiaryDatabase admin, Duration minimum) {
    SystemSchema.ensure(admin);
    admin.callAdmin("setting the minimum retention", SystemSchema.SET_MINIMUM_RETENTION, minimum.toMillis());
  }

  /**
   * Sweeps {@code table}, a recorded-outputs table, partition by partition in key order, {@code stepRows} rows per
   * single-partition step, deleting the expired ones (the tables have no time index: see
   * {@code SweepRecordedOutputs}).
   */
  private long sweep(String table, TimestampType cutoff, int stepRows) {
    String what = "deleting expired rows of " + table;
    long deleted = 0;
    for (Object key : partitionKeys(table, what)) {
      String after = "";
      while (after != null) {
        VoltTable step = db.callAdmin(what, SystemSchema.sweepProcedure(table), key, cutoff, after, (long) stepRows)
            .getResults()[0];
        step.advanceRow();
        deleted += step.getLong(0);
        after = step.getString(1);
      }
    }
    return deleted;
  }

  /**
   * Runs {@code table}'s retention step (by its time index: {@link SystemSchema#INVOCATIONS}) in every partition
   * until a step deletes fewer than {@code stepRows}.
   */
  private long expire(String table, TimestampType cutoff, int stepRows) {
    String what = "deleting expired rows of " + table;
    long deleted = 0;
    for (Object key : partitionKeys(table, what)) {
      long step;
      do {
        step = db.callAdmin(what, SystemSchema.expireProcedure(table), key, cutoff, (long) stepRows)
            .getResults()[0].asScalarLong();
        deleted += step;
      } while (step >= stepRows);
    }
    return deleted;
  }

  /** One key of each partition, of {@code table}'s partition column type (routes a single-partition procedure). */
  private List<Object> partitionKeys(String table, String what) {
    VoltTable keys = db.callAdmin(what, "@GetPartitionKeys", SystemSchema.partitionKeyType(table)).getResults()[0];
    List<Object> result = new ArrayList<>();
    while (keys.advanceRow()) {
      result.add(keys.get(1, keys.getColumnType(1)));
    }
    return result;
  }

  private static List<Entry> read(VoltTable t) {
    List<Entry> entries = new ArrayList<>();
    t.resetRowPosition();
    while (t.advanceRow()) {
      byte[] result = t.getVarbinary(7);
      boolean noResult = t.wasNull();
      entries.add(new Entry(t.getString(0), t.getString(1), (int) t.getLong(2), t.getVarbinary(3), t.getString(4),
          t.getString(5), (int) t.getLong(6), noResult ? null : result, t.getLong(8)));
    }
    return entries;
  }

  private CompletableFuture<ClientResponse> call(String what, String procedure, Object... params) {
    return callAsync(db, what, procedure, params);
  }

  /** Calls a procedure through VoltDB's asynchronous client; failures complete the future with Apiary's exceptions. */
  static CompletableFuture<ClientResponse> callAsync(ApiaryDatabase db, String what, String procedure,
                                                     Object... params) {
    CompletableFuture<ClientResponse> f = new CompletableFuture<>();
    try {
      boolean queued = db.client().callProcedure(r -> {
        if (r.getStatus() == ClientResponse.SUCCESS) {
          f.complete(r);
        } else {
          f.completeExceptionally(ApiaryDatabase.failure(what, r, null));
        }
      }, procedure, params);
      if (!queued) {
        f.completeExceptionally(new DatabaseException(what + ": the database client has no connection"));
      }
    } catch (IOException e) {
      f.completeExceptionally(new DatabaseException(what + ": " + e.getMessage(), e));
    }
    return f;
  }
}
