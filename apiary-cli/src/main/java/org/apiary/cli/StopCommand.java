package org.apiary.cli;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Stops the service {@code apiary start} runs on a data directory: SIGTERM, then a bounded wait for it to exit. */
@Command(name = "stop", mixinStandardHelpOptions = true,
    description = {"Stop the Apiary that `apiary start --data DIR` runs: it closes its frontend, takes a snapshot "
        + "with every committed transaction and exits; the next `apiary start --data DIR` restores it.",
        "Exit code 0 once it has stopped cleanly, 1 if nothing runs there or it did not stop within the timeout."})
public final class StopCommand implements Callable<Integer> {
  @Option(names = "--data", required = true, paramLabel = "DIR", description = "The data directory it runs on.")
  Path data;

  @Option(names = "--timeout-s", defaultValue = "60", paramLabel = "S",
      description = "Seconds to wait for it to exit (default ${DEFAULT-VALUE}); the snapshot of a large database "
          + "takes longer.")
  long timeoutSeconds;

  @Override
  public Integer call() throws InterruptedException {
    ServiceDirectory dir = new ServiceDirectory(data);
    Optional<Long> holder = dir.holder();
    if (holder.isEmpty()) {
      throw new CliException("no Apiary is running in " + dir.root() + dir.staleSuffix(-1));
    }
    // Only the lock's holder is signalled: the pid in a state file may be a stale one, by now another process's.
    long pid = holder.get();
    if (pid <= 0) {
      throw new CliException("Apiary in " + dir.root() + " is starting and has not written its process ID yet: "
          + "try again in a few seconds");
    }
    Optional<ProcessHandle> process = ProcessHandle.of(pid);
    if (process.isEmpty() || !process.get().isAlive()) {
      throw new CliException("no Apiary is running in " + dir.root() + " (pid " + pid + " has exited)");
    }
    System.out.println("apiary stop: stopping Apiary in " + dir.root() + " (pid " + pid + ")");
    System.out.flush();
    if (!process.get().destroy()) {
      throw new CliException("could not send SIGTERM to pid " + pid + ": is it another user's process?");
    }
    Duration timeout = Duration.ofSeconds(timeoutSeconds);
    try {
      process.get().onExit().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new CliException("Apiary (pid " + pid + ") did not exit within " + timeout.toSeconds() + " s; it may "
          + "still be writing its snapshot. Wait and run `apiary stop` again, or force it with `kill -9 " + pid
          + "` (that loses what committed after the last automatic snapshot)");
    } catch (ExecutionException e) {
      throw new CliException("waiting for pid " + pid + " to exit failed: " + e.getCause().getMessage());
    }
    if (dir.readState().isPresent()) {
      throw new CliException("Apiary (pid " + pid + ") exited without a clean stop (it left "
          + dir.stateFile() + "); its output says why. The next start restores the last snapshot");
    }
    System.out.println("apiary stop: stopped cleanly; the data is in " + dir.root());
    return 0;
  }
}
