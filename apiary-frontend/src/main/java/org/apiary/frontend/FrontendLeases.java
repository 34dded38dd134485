package org.apiary.frontend;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apiary.database.ApiaryDatabase;
import org.apiary.runtime.SystemSchema;
import org.voltdb.VoltTable;

/**
 * Frontend leases in the database, partitioned by frontend so renewing one is a single-partition write that
 * multi-partition load cannot hold up. Times come from the database's transaction clock ({@code NOW}), so
 * frontends' clocks need not agree. Taking over a dead frontend moves its running invocations first and deletes its
 * expired lease last, so a takeover cut short leaves the lease for the next one to find: no invocation is orphaned.
 */
final class FrontendLeases {
  private static final String NOW_MS = "SINCE_EPOCH(MILLISECOND, NOW)";

  private final ApiaryDatabase db;
  private final String frontend;
  private final String endpoint;

  public FrontendLeases(ApiaryDatabase db, String frontend, String endpoint) {
    this.db = db;
    this.frontend = frontend;
    this.endpoint = endpoint;
  }

  /** Extends this frontend's lease by {@code lease} from now, creating it if it is missing (or was taken over). */
  public void renew(Duration lease) {
    db.callAdmin("renewing the lease of frontend " + frontend, SystemSchema.RENEW_LEASE, frontend, endpoint,
        lease.toMillis());
  }

  /** Lets the lease expire at once, so another frontend takes over what this one leaves unfinished. */
  public void release() {
    db.callAdmin("releasing the lease of frontend " + frontend, SystemSchema.RENEW_LEASE, frontend, endpoint, -1L);
  }

  /** Whether {@code frontend}'s lease holds now, by the database's clock: a single-partition read. */
  static java.util.concurrent.CompletableFuture<Boolean> isLive(ApiaryDatabase db, String frontend) {
    return InvocationLog.callAsync(db, "reading the lease of frontend " + frontend, "@AdHoc", "SELECT COUNT(*) FROM "
            + SystemSchema.FRONTENDS + " WHERE frontend = ? AND lease_expires_ms >= " + NOW_MS + ";", frontend)
        .thenApply(r -> r.getResults()[0].asScalarLong() > 0);
  }

  /** Frontends whose lease has expired. */
  public List<String> expired() {
    VoltTable t = db.callAdmin("looking for dead frontends", "@AdHoc",
        "SELECT frontend FROM " + SystemSchema.FRONTENDS + " WHERE lease_expires_ms < " + NOW_MS).getResults()[0];
    List<String> dead = new ArrayList<>();
    while (t.advanceRow()) {
      dead.add(t.getString(0));
    }
    return dead;
  }

  /**
   * Whether this frontend is the one that runs retention: the live frontend (unexpired lease) whose ID sorts first.
   * One sweeper, not one per frontend, since a retention pass reads every recorded output.
   */
  public boolean runsRetention() {
    VoltTable t = db.callAdmin("choosing the frontend that runs retention", "@AdHoc",
        "SELECT MIN(frontend) FROM " + SystemSchema.FRONTENDS + " WHERE lease_expires_ms >= " + NOW_MS)
        .getResults()[0];
    return t.advanceRow() && frontend.equals(t.getString(0));
  }

  /**
   * Removes a dead frontend's lease if it is still expired (the last step of a takeover, after its invocations
   * moved); false if it renewed in between.
   */
  public boolean forget(String dead) {
    return db.callAdmin("forgetting frontend " + dead, SystemSchema.EXPIRE_LEASE, dead)
        .getResults()[0].asScalarLong() == 1;
  }
}
