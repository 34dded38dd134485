package org.apiary.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A frontend's lease terms by its own clock: what an execution checks before it calls the outside world. */
class LeaseTermTest {
  private static final Duration LEASE = Duration.ofSeconds(2);

  @Test
  void noTermHoldsBeforeTheFirstRenewalOrAfterAStop() {
    LeaseTerm lease = new LeaseTerm(LEASE);
    assertFalse(lease.heldSince(lease.term()));
    lease.renewed(System.nanoTime());
    assertTrue(lease.heldSince(lease.term()));
    lease.stop();
    assertFalse(lease.heldSince(lease.term()));
    assertEquals(0, lease.remainingNanos());
  }

  @Test
  void renewalsWithinTheLeaseKeepTheTermAndOneAfterItExpiredStartsANewOne() {
    LeaseTerm lease = new LeaseTerm(LEASE);
    long start = System.nanoTime() - LEASE.toNanos() * 5;
    lease.renewed(start);
    long term = lease.term();
    lease.renewed(start + LEASE.toNanos() / 2); // in time
    assertEquals(term, lease.term());
    // The process was paused past the lease (another frontend may have taken its invocations): renewing again, even
    // successfully, does not bring back the term an execution began in.
    lease.renewed(System.nanoTime());
    assertTrue(lease.remainingNanos() > 0);
    assertFalse(lease.heldSince(term), "a term held across an expired lease");
    assertTrue(lease.heldSince(lease.term()));
  }

  @Test
  void aTermWithLessThanItsMarginLeftDoesNotHold() {
    LeaseTerm lease = new LeaseTerm(LEASE);
    lease.renewed(System.nanoTime() - LEASE.toNanos() + Duration.ofMillis(100).toNanos()); // 100 ms left
    assertFalse(lease.heldSince(lease.term()), "a call could start after the lease expired");
  }
}
