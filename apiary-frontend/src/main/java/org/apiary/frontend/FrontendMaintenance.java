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
  private final FrontendMetrics metrics;
  /** Durable queues: a dead frontend's running items go back to their queues in its takeover. */
  private final QueueRunner queues;
  /** The lease by this frontend's clock: renewals that succeeded, and the terms they make. */
  private final LeaseTerm lease;
  /** Why the last renewal failed, or {@code null} if it succeeded. */
  private volatile String renewalFailure;

  FrontendMaintenance(ApiaryDatabase db, FrontendConfig config, String frontendId, String endpoint,
                      GraphCatalog catalog, InvocationCoordinator coordinator, FrontendHooks hooks,
                      ScheduledExecutorService scheduler, FrontendMetrics metrics, QueueRunner queues,
                      LeaseTerm lease) {
    this.metrics = metrics;
    this.lease = lease;
    this.queues = queues;
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
    long began = System.nanoTime();
    leases.renew(config.leaseDuration());
    renewed(began);
    long every = config.heartbeatInterval().toMillis();
    scheduler.scheduleWithFixedDelay(this::renewLease, every, every, TimeUnit.MILLISECONDS);
    scheduler.scheduleWithFixedDelay(this::recoverDeadFrontends, every, every, TimeUnit.MILLISECONDS);
    long clean = config.cleanupInterval().toMillis();
    scheduler.scheduleWithFixedDelay(this::cleanUp, clean, clean, TimeUnit.MILLISECONDS);
  }

  private void renewLease() {
    try {
      hooks.beforeRenewingLease();
      long began = System.nanoTime();
      leases.renew(config.leaseDuration());
      renewed(began);
    } catch (RuntimeException e) {
      renewalFailure = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
      if (running) { // after close, an interrupted call is expected
        LOG.log(Level.WARNING, "frontend " + frontendId + ": lease renewal failed; retrying in "
            + config.heartbeatInterval() + ": " + e.getMessage());
      }
    }
  }

  private void renewed(long began) {
    lease.renewed(began);
    renewalFailure = null;
  }

  /**
   * Seconds left on this frontend's lease by its own clock: the lease duration from the start of the last renewal
   * that succeeded, less the time since; 0 once that passed, or before the first renewal.
   */
  double leaseRemainingSeconds() {
    return running ? lease.remainingNanos() / 1e9 : 0;
  }

  /** Why this frontend is not ready to serve (its lease not held), or {@code null} if it holds its lease. */
  String notReady() {
    if (!running) {
      return "the frontend is stopping; its lease is released";
    }
    String failure = renewalFailure;
    if (leaseRemainingSeconds() <= 0) {
      return "its lease expired" + (failure == null ? "" : ": renewing it failed: " + failure);
    }
    if (failure != null) {
      return "the database did not answer the last lease renewal: " + failure;
    }
    return null;
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
            long adopted = queues.release(dead);
            if (adopted > 0) {
              LOG.log(Level.INFO, "frontend " + frontendId + ": took over " + adopted + " queued item(s) that dead "
                  + "frontend " + dead + " ran");
            }
            hooks.duringTakeover(dead);
          } catch (RuntimeException e) {
            coordinator.recoveryWanted(); // a move cut short may have moved some, or all
            throw e;
          }
          if (moved > 0) {
            metrics.tookOver(moved);
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

  /**
   * One retention pass: ended invocations, recorded outputs and ended queue items older than the retention, by the
   * database's clock.
   */
  long deleteExpiredRecords() {
    return log.deleteOlderThan(config.retention()) + queues.deleteEnded(config.retention());
  }

  /** Stops the duties (their scheduler belongs to the frontend, which shuts it down). */
  void stop() {
    running = false;
    lease.stop();
  }

  /** Stops the duties and releases the lease, so other frontends take over at once what was running here. */
  @Override
  public void close() {
    running = false;
    lease.stop();
    try {
      leases.release();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "frontend " + frontendId + ": could not release its lease; it expires in "
          + config.leaseDuration() + ": " + e.getMessage());
    }
  }
}
