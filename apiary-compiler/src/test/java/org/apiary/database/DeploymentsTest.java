package org.apiary.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@link Deployments#withHeartbeatTimeout}: the element VoltDB reads, once, and bad input named. */
class DeploymentsTest {
  private static final String CLUSTER = Deployments.cluster(3, 2, 1, null, null);

  @Test
  void addsOneHeartbeatElementInsideTheDeployment() {
    String d = Deployments.withHeartbeatTimeout(CLUSTER, Duration.ofSeconds(8));
    assertTrue(d.contains("  <heartbeat timeout=\"8\"/>\n</deployment>"), d);
    assertEquals(CLUSTER, d.replace("  <heartbeat timeout=\"8\"/>\n", ""));
  }

  @Test
  void refusesWhatVoltDbWouldNotTakeOrASecondTimeout() {
    assertTrue(assertThrows(IllegalArgumentException.class, () -> Deployments.withHeartbeatTimeout(CLUSTER,
        Duration.ofMillis(1500))).getMessage().contains("whole seconds"));
    assertThrows(IllegalArgumentException.class, () -> Deployments.withHeartbeatTimeout(CLUSTER, Duration.ZERO));
    String once = Deployments.withHeartbeatTimeout(CLUSTER, Duration.ofSeconds(8));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> Deployments.withHeartbeatTimeout(once,
        Duration.ofSeconds(9))).getMessage().contains("already"));
    assertThrows(IllegalArgumentException.class, () -> Deployments.withHeartbeatTimeout("<x/>", Duration.ofSeconds(8)));
  }
}
