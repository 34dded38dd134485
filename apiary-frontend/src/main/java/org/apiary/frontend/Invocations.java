package org.apiary.frontend;

import org.apiary.InvalidRequestException;
import org.apiary.database.ApiaryDatabase;
import org.apiary.runtime.SystemSchema;
import org.apiary.runtime.procedure.ResumeInvocation;
import org.voltdb.VoltTable;

/** Administrative operations on logged invocations (issue 42): {@code apiary executions resume} calls these. */
public final class Invocations {
  private Invocations() {}

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
