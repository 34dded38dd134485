package org.apiary.drills;

import org.apiary.cli.CliException;
import org.apiary.cli.ExtensionCommand;
import org.apiary.cli.FrontendCommand;
import org.apiary.frontend.FrontendHooks;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code apiary drill-frontend}: a frontend with one fault injected ({@link FaultInjection}), for the drill harness
 * and failure tests; otherwise {@code apiary frontend}, with the same options. Hidden: not for production use.
 */
@Command(name = "drill-frontend", hidden = true, mixinStandardHelpOptions = true,
    description = "A frontend with a fault injected, for Apiary's drills and failure tests; not for production.")
public final class DrillFrontendCommand extends FrontendCommand implements ExtensionCommand {
  /** The options that select a fault: a frontend started with one of them runs this command. */
  static final java.util.Set<String> FAULT_OPTIONS = java.util.Set.of("--crash-after", "--stop-after", "--fault");

  @Option(names = "--crash-after", paramLabel = "FUNCTION",
      description = "Halt the process (exit status 137) right after this function executes.")
  String crashAfter;

  @Option(names = "--stop-after", paramLabel = "[GRAPH:]FUNCTION",
      description = "Stop the process with SIGSTOP, once, right after this function executes (in any graph, or in "
          + "GRAPH only); SIGCONT lets it go on.")
  String stopAfter;

  @Option(names = "--fault", paramLabel = "socket-thread-error",
      description = "socket-thread-error: the socket thread throws an Error on the first request.")
  String fault;

  @Override
  protected FrontendHooks hooks() {
    int chosen = (crashAfter != null ? 1 : 0) + (stopAfter != null ? 1 : 0) + (fault != null ? 1 : 0);
    if (chosen != 1) {
      throw new CliException("drill-frontend takes exactly one of --crash-after, --stop-after and --fault", 2, null);
    }
    if (fault != null && !fault.equals("socket-thread-error")) {
      throw new CliException("--fault takes socket-thread-error, not '" + fault + "'", 2, null);
    }
    return crashAfter != null ? FaultInjection.haltAfter(crashAfter)
        : stopAfter != null ? FaultInjection.stopAfter(stopAfter)
        : FaultInjection.failSocketThread();
  }
}
