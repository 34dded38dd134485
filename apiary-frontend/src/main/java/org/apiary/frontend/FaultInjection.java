package org.apiary.frontend;

import org.apiary.database.ApiaryDatabase;

/**
 * Fault injection for Apiary's own crash drills and tests, not for applications: a frontend that halts its process
 * at a chosen point, as SIGKILL would, so a drill can check what other frontends recover, or whose socket thread
 * fails, so a test can check that the process stops visibly. Kept out of
 * {@link FrontendConfig} and {@link FrontendServer}, which production frontends use.
 */
public final class FaultInjection {
  private FaultInjection() {}

  /**
   * Starts a frontend that halts this process (exit status 137, no shutdown hooks) right after {@code function}
   * returns in any graph, before its outputs are routed or the invocation's outcome is stored.
   */
  public static FrontendServer startHaltingAfter(ApiaryDatabase db, FrontendConfig config, String function) {
    return FrontendServer.start(db, config, new FrontendHooks() {
      @Override
      public void afterFunction(String graph, String invocation, String executed) {
        if (executed.equals(function)) {
          // The crash drill reads this line (function, then graph) to tell which invocation the halt cut short.
          System.err.println("fault injection: halting after function '" + function + "' in graph '" + graph
              + "', invocation " + invocation);
          Runtime.getRuntime().halt(137);
        }
      }
    });
  }

  /**
   * Starts a frontend whose socket thread throws an {@link Error} on the first well-formed request, before handling
   * it, as an out-of-memory there would: the frontend stops itself ({@link FrontendServer#failure}).
   */
  public static FrontendServer startFailingSocketThread(ApiaryDatabase db, FrontendConfig config) {
    return FrontendServer.start(db, config, new FrontendHooks() {
      @Override
      public void receivedRequest(String invocation) {
        throw new OutOfMemoryError("fault injection: an error on the socket thread, receiving invocation "
            + invocation);
      }
    });
  }
}
