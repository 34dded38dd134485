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

  /**
   * A thread body that first lowers its own thread's CPU priority to {@code nice} (Linux: {@code renice} of the
   * thread's own ID, which threads it starts inherit), then runs {@code body}. For attackers that share the machine
   * with what they attack: on a real deployment an attacker's CPU is not the server's, and here an attacker at the
   * server's priority takes the cores the server needs to close what it attacks with on time, so the drill would
   * judge the scheduler rather than the server. Where the priority cannot be lowered, {@code print} says why once
   * per thread and the body runs anyway.
   */
  static Runnable niced(int nice, Runnable body, Consumer<String> print) {
    return () -> {
      String why = lowerOwnPriority(nice);
      if (why != null) {
        print.accept("-> " + Thread.currentThread().getName() + " runs at the server's priority: " + why);
      }
      body.run();
    };
  }

  /** Sets this thread's nice value; null if done, else why not. */
  private static String lowerOwnPriority(int nice) {
    try {
      // "/proc/thread-self" links to "<pid>/task/<tid>": the calling thread's own kernel ID.
      java.nio.file.Path self = java.nio.file.Files.readSymbolicLink(java.nio.file.Path.of("/proc/thread-self"));
      String tid = self.getFileName().toString();
      Process renice = new ProcessBuilder("renice", "-n", String.valueOf(nice), "-p", tid)
          .redirectErrorStream(true).start();
      if (!renice.waitFor(10, TimeUnit.SECONDS)) {
        renice.destroyForcibly();
        return "renice did not finish within 10 s";
      }
      String output = new String(renice.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      return renice.exitValue() == 0 ? null : "renice exited with " + renice.exitValue() + ": " + output.strip();
    } catch (java.io.IOException | UnsupportedOperationException e) {
      return "no renice of a thread here (" + e + ")";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "interrupted";
    }
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
