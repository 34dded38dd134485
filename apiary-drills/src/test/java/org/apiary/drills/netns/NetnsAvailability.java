package org.apiary.drills.netns;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.Optional;
import org.junit.jupiter.api.Assumptions;

/** The netns tests' precondition: skipped with the reason where namespaces cannot be made, except in CI. */
public final class NetnsAvailability {
  private NetnsAvailability() {}

  /** Aborts the test (skipped) with the printed reason if {@code ip netns} is not allowed; with CI=true, fails. */
  public static void require() {
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

  /** The namespaces and links this JVM's runs of {@link NetnsHosts} left (none once every run is closed). */
  public static java.util.List<String> leftoversOfThisJvm() {
    String mine = NetnsHosts.FAMILY + ProcessHandle.current().pid() + "[a-z](-.*)?";
    return NetnsHosts.ownedNames().stream().filter(n -> n.matches(mine)).toList();
  }
}
