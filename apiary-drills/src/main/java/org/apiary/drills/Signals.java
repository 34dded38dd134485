package org.apiary.drills;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** Sends POSIX signals to processes (the JDK sends only SIGTERM and SIGKILL), for the drills and failure tests. */
final class Signals {
  private Signals() {}

  /**
   * Sends {@code SIG<signal>} to a process with the system's {@code kill} command and waits for the command.
   *
   * @param signal the signal's name without {@code SIG}, e.g. {@code STOP}
   * @param process what the process is, for messages
   * @param wait how long the command may take; a process stopping itself must allow for the time it stays stopped,
   *     since its waiting thread is frozen with it until someone continues it
   * @throws IllegalStateException if the command fails, does not finish within {@code wait}, or the wait is
   *     interrupted
   * @throws UncheckedIOException if the command cannot be started
   */
  static void send(long pid, String signal, String process, Duration wait) {
    try {
      Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).redirectErrorStream(true).start();
      if (!kill.waitFor(wait.toMillis(), TimeUnit.MILLISECONDS)) {
        kill.destroyForcibly();
        throw new IllegalStateException("kill -" + signal + " " + pid + " (" + process + ") did not finish within "
            + wait);
      }
      if (kill.exitValue() != 0) {
        throw new IllegalStateException("kill -" + signal + " " + pid + " (" + process + ") failed with exit code "
            + kill.exitValue() + ": " + new String(kill.getInputStream().readAllBytes()).trim());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot send SIG" + signal + " to " + process + " (pid " + pid + ")", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while sending SIG" + signal + " to " + process + " (pid " + pid
          + ")", e);
    }
  }
}
