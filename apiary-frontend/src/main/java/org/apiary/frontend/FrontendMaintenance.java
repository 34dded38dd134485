package org.apiary.frontend;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apiary.database.ApiaryDatabase;

/**
 * A frontend's background duties, each on a schedule of its own so a slow one never delays the lease: renewing its
 * lease, taking over the logged invocations of frontends whose lease expired (and handing them, with any of its own
 * left by a failed attempt, to the {@link InvocationCoordinator}), and deleting records past the retention (done by
 * one frontend at a time, the live one whose ID sorts first).
 */
final class FrontendMaintenance implements AutoCloseable {
  private static final Logger LOG = System.getLogger(FrontendMaintenance.class.getName());

  private final FrontendConfig config;
  private final String frontendId;
  private final GraphCatalog catalog;
  private final InvocationCoordinator coordinator;
  private final InvocationLog log;
  private final FrontendLeases leases;
  private final FrontendHooks hooks;
  private final ScheduledExecutorService scheduler;
  private volatile boolean running = true;

  FrontendMaintenance(ApiaryDatabase db, FrontendConfig config, String frontendId, String endpoint,
                      GraphCatalog catalog, InvocationCoordinator coordinator, FrontendHooks hooks,
                      ScheduledExecutorService scheduler) {
    this.config = config;
    this.frontendId = frontendId;
    this.catalog = catalog;
    this.coordinator = coordinator;
    this.log = coordinator.log();
    this.leases = new FrontendLeases(db, frontendId, endpoint);
    this.hooks = hooks;
    this.scheduler = scheduler;
  }

  /** Takes the lease now (failing if the database refuses) and schedules every duty. */
  void start() {
    leases.renew(config.leaseDuration());
    long every = config.heartbeatInterval().toMillis();
    scheduler.scheduleWithFixedDelay(this::renewLease, every, every, TimeUnit.MILLISECONDS);
    scheduler.scheduleWithFixedDelay(this::recoverDeadFrontends, every, every, TimeUnit.MILLISECONDS);
    long clean = config.cleanupInterval().toMillis();
    scheduler.scheduleWithFixedDelay(this::cleanUp, clean, clean, TimeUnit.MILLISECONDS);
  }

  private void renewLease() {
    try {
      leases.renew(config.leaseDuration());
    } catch (RuntimeException e) {
      if (running) { // after close, an interrupted call is expected
        LOG.log(Level.WARNING, "frontend " + frontendId + ": lease renewal failed; retrying in "
            + config.heartbeatInterval() + ": " + e.getMessage());
      }
    }
  }

  /** Refreshes the catalog, takes over dead frontends' invocations and runs whatever is ours and not running. */
  private void recoverDeadFrontends() {
    try {
      catalog.reload();
      for (String dead : leases.expired()) {
        if (!dead.equals(frontendId)) {
          // Invocations first, lease last: a takeover cut short leaves the lease for the next round to find.
          long moved;
          try {
            moved = log.reassign(dead, frontendId);
            hooks.duringTakeover(dead);
          } catch (RuntimeException e) {
            coordinator.recoveryWanted(); // a move cut short may have moved some, or all
            throw e;
          }
          if (moved > 0) {
            coordinator.recoveryWanted();
          }
          if (leases.forget(dead) || moved > 0) {
            LOG.log(Level.INFO, "frontend " + frontendId + ": took over " + moved + " running invocation(s) of dead "
                + "frontend " + dead);
          }
        }
      }
      coordinator.recover();
    } catch (RuntimeException e) {
      if (running) { // after close, an interrupted call is expected
        LOG.log(Level.WARNING, "frontend " + frontendId + ": recovery failed; retrying in "
            + config.heartbeatInterval() + ": " + e.getMessage());
      }
    }
  }

  private void cleanUp() {
    try {
      hooks.beforeCleanup();
      if (!leases.runsRetention()) {
        return; // another live frontend does
      }
      long deleted = deleteExpiredRecords();
      if (deleted > 0) {
        LOG.log(Level.DEBUG, "frontend " + frontendId + ": deleted " + deleted + " old invocation record(s)");
      }
    } catch (RuntimeException e) {
      if (running) { // after close, an interrupted call is expected
        LOG.log(Level.WARNING, "frontend " + frontendId + ": retention cleanup failed: " + e.getMessage());
      }
    }
  }

  /** One retention pass: ended invocations and recorded outputs older than the retention, by the database's clock. */
  long deleteExpiredRecords() {
    return log.deleteOlderThan(config.retention());
  }

  /** Stops the duties (their scheduler belongs to the frontend, which shuts it down). */
  void stop() {
    running = false;
  }

  /** Stops the duties and releases the lease, so other frontends take over at once what was running here. */
  @Override
  public void close() {
    running = false;
    try {
      leases.release();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "frontend " + frontendId + ": could not release its lease; it expires in "
          + config.leaseDuration() + ": " + e.getMessage());
    }
  }
}
