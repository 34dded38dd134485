package org.apiary.frontend;

import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apiary.InvalidRequestException;
import org.apiary.database.ApiaryDatabase;
import org.apiary.frontend.query.ExecutionQueries;
import org.apiary.runtime.SystemSchema;
import org.apiary.runtime.procedure.ResumeInvocation;
import org.voltdb.VoltTable;

/**
 * Administrative operations on invocations (issue 42), through an administrator's connection to the database:
 * {@link #list} what ran, runs and waits, and {@link #resume} a failed or cancelled one. {@code apiary executions
 * list} and {@code apiary executions resume} call these, so the command line and the Java API answer the same.
 */
public final class Invocations {
  private Invocations() {}

  /** The most invocations one {@link #list} returns. */
  public static final int MAX_LIMIT = 100_000;

  /**
   * Which invocations {@link #list} returns: {@code null} components do not filter.
   *
   * @param graph only invocations of this graph
   * @param status only those with this status: {@code QUEUED} (waiting on a queue or for its delay, not started),
   *     {@code RUNNING}, {@code DONE}, {@code FAILED} or {@code CANCELED} ({@code CANCELLED} too; any case)
   * @param since only those started (a queued one: enqueued) at or after this instant
   * @param limit the most returned, the newest, 1 to {@value #MAX_LIMIT}
   */
  public record Query(String graph, String status, Instant since, int limit) {
    /**
     * @throws IllegalArgumentException naming the status if it is none of the five, or the limit if out of range
     */
    public Query {
      if (status != null) {
        status = ExecutionQueries.status("status", status);
      }
      if (limit < 1 || limit > MAX_LIMIT) {
        throw new IllegalArgumentException("a listing's limit is 1 to " + MAX_LIMIT + ", not " + limit);
      }
    }

    /** Every invocation, the newest {@code limit}. */
    public static Query newest(int limit) {
      return new Query(null, null, null, limit);
    }

    /** This query, only invocations of {@code graph}. */
    public Query graph(String graph) {
      return new Query(graph, status, since, limit);
    }

    /** This query, only invocations with {@code status}. */
    public Query status(String status) {
      return new Query(graph, status, since, limit);
    }

    /** This query, only invocations started at or after {@code since}. */
    public Query since(Instant since) {
      return new Query(graph, status, since, limit);
    }

    ExecutionQueries.Filter filter() {
      return new ExecutionQueries.Filter(graph, status, since, null, null, null);
    }
  }

  /**
   * One invocation as listed; times by the database's clock.
   *
   * @param id the invocation ID as stored (where API keys are required, {@code IDENTITY/ID})
   * @param graphVersion the graph version it runs under (0 while queued: chosen when it starts)
   * @param status {@code QUEUED}, {@code RUNNING}, {@code DONE}, {@code FAILED} or {@code CANCELED}
   * @param frontend the frontend running it or that ran its last attempt ({@code null} while queued)
   * @param startedAt when it started (a queued one: when it was enqueued)
   * @param finishedAt when it ended, {@code null} if it has not
   * @param duration how long it took, or has taken (or waited) so far
   */
  public record Summary(String id, String graph, long graphVersion, String status, String frontend, long attempts,
                        Instant startedAt, Instant finishedAt, Duration duration) {
    static Summary of(ExecutionQueries.Execution e) {
      return new Summary(e.id(), e.graph(), e.version(), e.status(), e.frontend(), e.attempts(),
          Instant.ofEpochMilli(e.startedMs()), e.running() ? null : Instant.ofEpochMilli(e.finishedMs()),
          Duration.ofMillis(e.durationMs()));
    }
  }

  /**
   * What {@link #list} found.
   *
   * @param invocations newest first (by start, then ID)
   * @param total how many match in the database (the log and the queues), or {@code null} where the provenance sink
   *     was read too (an ended invocation is in both until the retention deletes it from the log)
   * @param more whether more match than {@code invocations} holds
   * @param sinkProblem why the provenance sink could not be read (then {@code invocations} holds the database's
   *     alone), or {@code null}
   */
  public record Listing(List<Summary> invocations, Long total, boolean more, String sinkProblem) {}

  /**
   * Lists invocations, newest first: those waiting on a queue or for their delay ({@code QUEUED}, from the queue
   * items: one multi-partition read), and those in the invocation log (running ones, and ended ones within the
   * frontends' retention, default 1 hour). Ended invocations past the retention are in the provenance sink
   * ({@link #list(ApiaryDatabase, Query, ExecutionQueries.Sink)}). {@code apiary executions list} is this.
   *
   * @param admin the database, connected as its administrator
   */
  public static Listing list(ApiaryDatabase admin, Query query) {
    return list(admin, query, null);
  }

  /**
   * As {@link #list(ApiaryDatabase, Query)}, with the ended invocations the log no longer holds read from the
   * provenance sink through {@code pastRetention} (the command line's and the console's way to it), merged into one
   * page; with {@code admin} {@code null} (a stopped service), from the sink alone.
   *
   * @throws InvalidRequestException if {@code admin} is {@code null} and the sink cannot be read
   */
  public static Listing list(ApiaryDatabase admin, Query query, ExecutionQueries.Sink pastRetention) {
    ExecutionQueries.Page page;
    if (admin == null) {
      try {
        page = ExecutionQueries.listEnded(java.util.Objects.requireNonNull(pastRetention, "pastRetention"),
            query.filter(), null, query.limit());
      } catch (SQLException e) {
        throw new InvalidRequestException("the provenance sink could not be read: " + e.getMessage());
      }
    } else if (!ExecutionQueries.hasLog(admin)) {
      return new Listing(List.of(), 0L, false, null);
    } else {
      page = ExecutionQueries.list(admin, query.filter(), null, query.limit(), pastRetention);
    }
    return new Listing(page.executions().stream().map(Summary::of).toList(), page.total(), page.next() != null,
        page.sinkProblem());
  }

  /**
   * What a resume did.
   *
   * @param frontend the live frontend whose recovery runs the invocation next (within about ten heartbeats)
   * @param graphVersion the graph version it runs under
   * @param was its status before: {@code FAILED} or {@code CANCELED}
   */
  public record Resumed(String frontend, int graphVersion, String was) {}

  /**
   * Resumes a failed or cancelled invocation from its first unfinished function: the functions that committed are
   * replayed from their records (Algorithm 1), not run again; the failures recorded functions stored are deleted, so
   * those functions run again; its attempts are counted afresh. It runs under its own graph version, or the graph's
   * latest if {@code latest}, on the frontend named, or else the one whose lease runs longest (which may be one
   * that stopped without its lease expiring yet: name the frontend where that matters). Its clients learn the new
   * outcome from {@code result(id)}.
   *
   * @param admin the database, connected as its administrator
   * @param invocationId the invocation as logged (where API keys are required, {@code IDENTITY/ID})
   * @param frontend the ID of a live frontend to run it ({@code FrontendServer.id()}), or {@code null}
   * @throws InvalidRequestException naming what is wrong: the ID is not in the log, the invocation is running or
   *     ended with a result, its graph version is no longer registered, or no frontend is live to run it
   */
  public static Resumed resume(ApiaryDatabase admin, String invocationId, boolean latest, String frontend) {
    SystemSchema.ensure(admin);
    VoltTable e = admin.callAdmin("reading invocation " + invocationId, "@AdHoc", "SELECT graph, graph_version, "
        + "status FROM " + SystemSchema.INVOCATIONS + " WHERE invocation_id = ?", invocationId).getResults()[0];
    if (!e.advanceRow()) {
      throw new InvalidRequestException("invocation " + invocationId + " is not in the invocation log: it is unknown, "
          + "or it ended longer ago than the retention and was deleted");
    }
    String graph = e.getString(0);
    int version = (int) e.getLong(1);
    String status = e.getString(2);
    if (!SystemSchema.STATUS_FAILED.equals(status) && !SystemSchema.STATUS_CANCELLED.equals(status)) {
      throw new InvalidRequestException("invocation " + invocationId + " is " + status + "; only a failed or "
          + "cancelled invocation can be resumed");
    }
    VoltTable versions = admin.callAdmin("reading the versions of graph " + graph, "@AdHoc", "SELECT MAX(version) FROM "
        + SystemSchema.GRAPHS + " WHERE name = ?", graph).getResults()[0];
    long newest = versions.advanceRow() ? versions.getLong(0) : 0;
    if (versions.wasNull() || newest <= 0) {
      throw new InvalidRequestException("graph '" + graph + "' of invocation " + invocationId + " is no longer "
          + "registered");
    }
    int runAs = latest ? (int) newest : version;
    String liveSql = "SELECT frontend FROM " + SystemSchema.FRONTENDS + " WHERE lease_expires_ms > "
        + "SINCE_EPOCH(MILLISECOND, NOW)" + (frontend == null ? "" : " AND frontend = ?")
        + " ORDER BY lease_expires_ms DESC, frontend LIMIT 1";
    VoltTable live = (frontend == null ? admin.callAdmin("finding a live frontend", "@AdHoc", liveSql)
        : admin.callAdmin("finding frontend " + frontend, "@AdHoc", liveSql, frontend)).getResults()[0];
    if (!live.advanceRow()) {
      throw new InvalidRequestException(frontend == null ? "no frontend is live to run invocation " + invocationId
          + "; start one and resume it again" : "frontend " + frontend + " is not live (no unexpired lease); name a "
          + "running frontend");
    }
    String runner = live.getString(0);
    long done = admin.callAdmin("resuming invocation " + invocationId, SystemSchema.RESUME_INVOCATION, invocationId,
        runner, (long) runAs).getResults()[0].asScalarLong();
    if (done == ResumeInvocation.UNKNOWN || done == ResumeInvocation.NOT_RESUMABLE) {
      throw new InvalidRequestException("invocation " + invocationId + " changed while it was being resumed (it is "
          + (done == ResumeInvocation.UNKNOWN ? "no longer logged" : "no longer failed or cancelled") + ")");
    }
    return new Resumed(runner, runAs, status);
  }
}
