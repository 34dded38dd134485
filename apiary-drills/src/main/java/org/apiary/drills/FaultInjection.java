package org.apiary.drills;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apiary.frontend.FrontendHooks;

/**
 * The faults {@code apiary drill-frontend} injects into a frontend process, for Apiary's crash drills and failure
 * tests: each is a {@link FrontendHooks} the drill harness passes to the frontend it starts. Not in the library, and
 * not reachable from {@code apiary frontend}.
 */
final class FaultInjection {
  /** The start of the line a frontend prints when it halts or stops itself; the drill reads the rest. */
  static final String LINE = "fault injection: ";

  private FaultInjection() {}

  /**
   * Halts this process (exit status 137, no shutdown hooks) right after {@code function} returns in any graph,
   * before its outputs are routed or the invocation's outcome is stored.
   */
  static FrontendHooks haltAfter(String function) {
    return new FrontendHooks() {
      @Override
      public void afterFunction(String graph, String invocation, String executed) {
        if (executed.equals(function)) {
          // The crash drill reads this line (function, then graph) to tell which invocation the halt cut short.
          System.err.println(LINE + "halting after function '" + function + "' in graph '" + graph
              + "', invocation " + invocation);
          Runtime.getRuntime().halt(137);
        }
      }
    };
  }

  /**
   * Stops this process with SIGSTOP, once, right after {@code function} returns (in any graph, or only in the graph
   * named before a colon: {@code graph:function}), as a host suspended mid-graph would: whoever started it lets it go
   * on with SIGCONT. The process is frozen whole (heartbeats too), so its lease runs out and another frontend may take
   * its invocations over meanwhile.
   */
  static FrontendHooks stopAfter(String where) {
    int colon = where.indexOf(':');
    String inGraph = colon < 0 ? null : where.substring(0, colon);
    String function = where.substring(colon + 1);
    AtomicBoolean stopped = new AtomicBoolean();
    return new FrontendHooks() {
      @Override
      public void afterFunction(String graph, String invocation, String executed) {
        if (executed.equals(function) && (inGraph == null || inGraph.equals(graph))
            && stopped.compareAndSet(false, true)) {
          System.err.println(LINE + "stopping after function '" + function + "' in graph '" + graph
              + "', invocation " + invocation);
          System.err.flush();
          signalSelf("STOP");
        }
      }
    };
  }

  /**
   * Makes the socket thread throw an {@link Error} on the first well-formed request, before handling it, as an
   * out-of-memory there would: the frontend stops itself.
   */
  static FrontendHooks failSocketThread() {
    return new FrontendHooks() {
      @Override
      public void receivedRequest(String invocation) {
        throw new OutOfMemoryError(LINE + "an error on the socket thread, receiving invocation " + invocation);
      }
    };
  }

  private static void signalSelf(String signal) {
    // SIGSTOP freezes the waiting thread too: the wait ends once the process is continued, however late.
    Signals.send(ProcessHandle.current().pid(), signal, "this frontend", Duration.ofDays(1));
  }
}
