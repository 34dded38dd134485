package org.apiary.frontend;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apiary.database.ApiaryDatabase;
import org.apiary.runtime.SystemSchema;
import org.voltdb.VoltTable;

/**
 * Frontend leases in the database. Times come from the database's transaction clock ({@code NOW}), so frontends'
 * clocks need not agree. Taking over a dead frontend is decided by one atomic delete of its expired lease: exactly
 * one live frontend wins and moves the dead one's running invocations to itself.
 */
public final class FrontendLeases {
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
    long updated = db.callAdmin("renewing the lease of frontend " + frontend, "@AdHoc",
        "UPDATE " + SystemSchema.FRONTENDS + " SET lease_expires_ms = " + NOW_MS + " + ? WHERE frontend = ?",
        lease.toMillis(), frontend).getResults()[0].asScalarLong();
    if (updated == 0) {
      db.callAdmin("registering frontend " + frontend, "@AdHoc",
          "INSERT INTO " + SystemSchema.FRONTENDS + " VALUES (?, ?, " + NOW_MS + " + ?)", frontend, endpoint,
          lease.toMillis());
    }
  }

  /** Lets the lease expire at once, so another frontend takes over what this one leaves unfinished. */
  public void release() {
    db.callAdmin("releasing the lease of frontend " + frontend, "@AdHoc",
        "UPDATE " + SystemSchema.FRONTENDS + " SET lease_expires_ms = 0 WHERE frontend = ?", frontend);
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

  /** Removes a dead frontend's expired lease; true for exactly one caller, which then owns its recovery. */
  public boolean takeOver(String dead) {
    return db.callAdmin("taking over frontend " + dead, "@AdHoc",
        "DELETE FROM " + SystemSchema.FRONTENDS + " WHERE frontend = ? AND lease_expires_ms < " + NOW_MS, dead)
        .getResults()[0].asScalarLong() == 1;
  }
}
