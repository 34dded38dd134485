package org.apiary.drills;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Starts two frontend processes at once, for tests that need two: their JVM starts overlap, about one start's time
 * saved on two cores. Either both are returned, ready, or neither is left running.
 */
final class FrontendPair {
  private static final Duration START = Duration.ofSeconds(60);

  private FrontendPair() {}

  /** The two frontends, started with {@code first} and {@code second} as their options, in that order. */
  static FrontendProcess[] start(List<String> databaseHosts, List<String> first, List<String> second)
      throws InterruptedException {
    List<CompletableFuture<FrontendProcess>> starts = List.of(
        CompletableFuture.supplyAsync(() -> FrontendProcess.start(databaseHosts, first, START)),
        CompletableFuture.supplyAsync(() -> FrontendProcess.start(databaseHosts, second, START)));
    FrontendProcess[] started = new FrontendProcess[2];
    Exception failure = null;
    for (int i = 0; i < 2; i++) {
      try {
        started[i] = starts.get(i).get(START.plusSeconds(30).toMillis(), TimeUnit.MILLISECONDS);
      } catch (ExecutionException | TimeoutException e) {
        failure = failure == null ? e : failure;
        starts.get(i).thenAccept(FrontendProcess::close); // one that starts after all is closed then
      }
    }
    if (failure != null) {
      for (FrontendProcess p : started) {
        if (p != null) {
          p.close();
        }
      }
      throw new AssertionError("a frontend process did not start", failure instanceof ExecutionException e
          ? e.getCause() : failure);
    }
    return started;
  }
}
