package org.apiary.benchmarks;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apiary.benchmarks.workload.Workloads;
import org.junit.jupiter.api.Test;

/** What the open loop reports for a system offered more than it can serve. */
class OpenLoopTest {
  /**
   * A server that takes at least 2 ms per request, one at a time (at most 500 requests/s), offered 1,500/s: the loop
   * falls behind during the warm-up, and the measured window must still report what the server served in it, not
   * only the requests scheduled in it (which, behind schedule, the server reaches late or never).
   */
  @Test
  void aboveCapacityTheLoadPointReportsWhatWasServedInTheWindow() throws InterruptedException {
    ExecutorService server = Executors.newSingleThreadExecutor();
    try {
      var settings = new OpenLoop.Settings(Duration.ofSeconds(2), Duration.ofSeconds(2),
          OpenLoop.Arrivals.UNIFORM, 64, Duration.ofSeconds(5), false);
      OpenLoop.Point p = OpenLoop.run(Workloads.byName("counter"), request -> CompletableFuture.runAsync(() -> {
        try {
          Thread.sleep(2);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }, server), 1_500, settings, 1);
      // Served at most 500/s; a report of the scheduled-in-window requests only would be near zero here.
      assertTrue(p.achieved() > 150 && p.achieved() <= 520, "achieved " + p.achieved());
      assertTrue(p.cpuMicrosPerRequest() > 0, "cpu per request " + p.cpuMicrosPerRequest());
    } finally {
      server.shutdownNow();
      server.awaitTermination(5, TimeUnit.SECONDS);
    }
  }
}
