package org.apiary.cli;

import java.util.ServiceLoader;
import org.apiary.ApiaryException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code apiary} command line. */
@Command(name = "apiary", mixinStandardHelpOptions = true, version = "Apiary 0.1.0",
    description = "A transactional Function-as-a-Service framework that runs functions inside VoltDB.",
    subcommands = {DemoCommand.class, StartCommand.class, StopCommand.class, DeployCommand.class,
        InvokeCommand.class, StatusCommand.class, ExecutionsCommand.class, SchedulesCommand.class, ClusterCommand.class,
        FrontendCommand.class, ProvenanceCommand.class, CredentialsCommand.class, ConsoleCommand.class,
        SqlCommand.class, LoaderCommand.class})
public final class Main implements Runnable {
  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "name a command, for example: apiary demo");
  }

  /**
   * The command line, with the commands other modules add ({@link ExtensionCommand}), and with failures reported as
   * one line naming the command and what went wrong, never a stack trace (set the environment variable
   * {@code APIARY_DEBUG} to have unexpected ones logged with theirs). Exit codes: 0 success, 1 failure, 2 bad usage.
   */
  public static CommandLine commandLine() {
    CommandLine cl = new CommandLine(new Main());
    for (ExtensionCommand command : ServiceLoader.load(ExtensionCommand.class)) {
      cl.addSubcommand(command);
    }
    cl.setExecutionExceptionHandler((e, cmd, parsed) -> {
      cmd.getErr().println(cmd.getCommandSpec().qualifiedName() + ": " + describe(e));
      cmd.getErr().flush();
      if (System.getenv("APIARY_DEBUG") != null) {
        System.getLogger(Main.class.getName()).log(System.Logger.Level.ERROR, "stack trace", e);
      }
      return e instanceof CliException c ? c.exitCode() : 1;
    });
    return cl;
  }

  private static String describe(Exception e) {
    if (e instanceof CliException) {
      return e.getMessage();
    }
    if (e instanceof ApiaryException || e instanceof IllegalArgumentException
        || e instanceof java.io.UncheckedIOException) {
      return e.getMessage();
    }
    return e.getClass().getSimpleName() + ": " + e.getMessage()
        + " (unexpected; set APIARY_DEBUG=1 to log the stack trace)";
  }

  public static void main(String[] args) {
    System.exit(commandLine().execute(args));
  }
}
