package org.apiary.internal;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import org.apiary.ExternalFunction;

/**
 * Lets a frontend run an {@link ExternalFunction}'s protected {@code run()} against a runtime of its own, without
 * making either public. {@link ExternalFunction} installs the accessor once, when its class initializes.
 */
public final class ExternalAccess {
  /** What an external step sees of the graph while one attempt of it runs. Never SQL. */
  public interface Runtime {
    /** The step's name in its graph. */
    String functionName();

    /** The values that arrived on an edge, in arrival order; empty if none. */
    List<JsonNode> inputs(String edge);

    /** Sends a value along an edge, with the partition key of a receiving local function (or {@code null}). */
    void output(String edge, Object value, Object partitionKey);

    /** The key the outside service can deduplicate calls by: the same for every attempt and every frontend. */
    String idempotencyKey();

    /** The attempt, from 1. */
    int attempt();

    /** The invocation this step runs for. */
    String invocationId();
  }

  /** Runs a step with a runtime bound for the duration of the call. */
  @FunctionalInterface
  public interface Runner {
    void run(ExternalFunction step, Runtime runtime) throws Exception;
  }

  private static volatile Runner runner;

  private ExternalAccess() {}

  /** Called by {@link ExternalFunction}'s static initializer; a second call is refused. */
  public static synchronized void install(Runner r) {
    if (runner != null) {
      throw new IllegalStateException("external step runner already installed");
    }
    runner = r;
  }

  /** Runs {@code step} against {@code runtime}. */
  public static void run(ExternalFunction step, Runtime runtime) throws Exception {
    Runner r = runner;
    if (r == null) {
      throw new IllegalStateException("ExternalFunction was not initialized");
    }
    r.run(step, runtime);
  }
}
