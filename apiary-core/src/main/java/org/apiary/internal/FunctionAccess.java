package org.apiary.internal;

import org.apiary.ApiaryFunction;

/**
 * Lets the runtime run a function's protected {@code run()} without making it public. {@link ApiaryFunction}
 * installs the accessor once, when its class initializes.
 */
public final class FunctionAccess {
  /** Runs a function with a runtime bound for the duration of the call. */
  @FunctionalInterface
  public interface Runner {
    void run(ApiaryFunction function, FunctionRuntime runtime) throws Exception;
  }

  private static volatile Runner runner;

  private FunctionAccess() {}

  /** Called by {@link ApiaryFunction}'s static initializer; a second call is refused. */
  public static synchronized void install(Runner r) {
    if (runner != null) {
      throw new IllegalStateException("function runner already installed");
    }
    runner = r;
  }

  /** Runs {@code function} against {@code runtime}. */
  public static void run(ApiaryFunction function, FunctionRuntime runtime) throws Exception {
    Runner r = runner;
    if (r == null) {
      // A function instance exists, so its class (and ApiaryFunction's initializer) already ran.
      throw new IllegalStateException("ApiaryFunction was not initialized");
    }
    r.run(function, runtime);
  }
}
