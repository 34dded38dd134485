package org.apiary.drills.netns;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.Optional;
import org.junit.jupiter.api.Assumptions;

/** The netns tests' precondition: skipped with the reason where namespaces cannot be made, except in CI. */
final class NetnsAvailability {
  private NetnsAvailability() {}

  /** Aborts the test (skipped) with the printed reason if {@code ip netns} is not allowed; with CI=true, fails. */
  static void require() {
    Optional<String> why = NetnsHosts.unavailableReason();
    if (why.isEmpty()) {
      return;
    }
    String message = "network namespaces cannot be made here (needs root and `ip netns`): " + why.get();
    if ("true".equalsIgnoreCase(System.getenv("CI"))) {
      fail(message + "; CI=true, where this test must run");
    }
    System.out.println("SKIPPED: " + message);
    Assumptions.abort(message);
  }
}
