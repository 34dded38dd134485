package org.apiary.frontend.testapp;

import java.time.Duration;
import org.apiary.ApiaryFunction;
import org.apiary.Application;
import org.apiary.Graph;
import org.apiary.StepPolicy;

/**
 * Graphs with an external step, on {@link GraphApp}'s tables: source [stub URL, k, amount] -> charge (external, a
 * payment stub) -> bump (adds the amount to counter k) -> report -> sink; the receipt goes to the sink too.
 */
public final class ExternalApp {
  /** Three attempts of at most 2 s, 50 ms apart at first. */
  public static final StepPolicy POLICY = StepPolicy.defaults().withMaxAttempts(3).withTimeout(Duration.ofSeconds(2))
      .withBackoff(Duration.ofMillis(50), Duration.ofMillis(200));

  public static final Graph CHARGE_THEN_BUMP = Graph.named("chargeThenBump")
      .addExternalFunction("charge", Charge.class, POLICY)
      .addLocalFunction("bump", Bump.class)
      .addLocalFunction("report", Report.class)
      .addEdge(Graph.SOURCE, "charge", ApiaryFunction.SOURCE)
      .addEdge("charge", "bump", ApiaryFunction.SOURCE)
      .addEdge("charge", Graph.SINK, "receipt")
      .addEdge("bump", "report", "bumped")
      .addEdge("report", Graph.SINK, ApiaryFunction.SINK);

  /** As {@link #CHARGE_THEN_BUMP}, with two attempts of at most 300 ms each. */
  public static final Graph CHARGE_QUICKLY = Graph.named("chargeQuickly")
      .addExternalFunction("chargeQuickly", Charge.class, POLICY.withMaxAttempts(2).withTimeout(Duration.ofMillis(300)))
      .addLocalFunction("bump", Bump.class)
      .addEdge(Graph.SOURCE, "chargeQuickly", ApiaryFunction.SOURCE)
      .addEdge("chargeQuickly", "bump", ApiaryFunction.SOURCE)
      .addEdge("chargeQuickly", Graph.SINK, "receipt");

  public static final Application APP = Application.of(GraphApp.SCHEMA, CHARGE_THEN_BUMP, CHARGE_QUICKLY);

  private ExternalApp() {}
}
