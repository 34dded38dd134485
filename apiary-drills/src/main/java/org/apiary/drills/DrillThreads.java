package org.apiary.drills;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/** The drills' thread handling: a thread that fails is reported and fails the drill; joins are bounded. */
final class DrillThreads {
  private DrillThreads() {}

  /**
   * A thread body whose failure is added to {@code crashes} and printed with its stack through {@code print},
   * instead of vanishing.
   */
  static Runnable guarded(Runnable body, List<String> crashes, Consumer<String> print) {
    return () -> {
      try {
        body.run();
      } catch (RuntimeException | Error e) {
        String what = Thread.currentThread().getName() + " failed: " + e;
        crashes.add(what);
        print.accept("!! " + what);
        for (StackTraceElement frame : e.getStackTrace()) {
          print.accept("!!     at " + frame);
        }
      }
    };
  }

  /** Waits for every thread, all within {@code bound}. */
  static void joinAll(List<Thread> threads, Duration bound) throws InterruptedException {
    long deadline = System.nanoTime() + bound.toNanos();
    for (Thread t : threads) {
      t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
      if (t.isAlive()) {
        throw new IllegalStateException(t.getName() + " did not finish within " + bound);
      }
    }
  }
}
