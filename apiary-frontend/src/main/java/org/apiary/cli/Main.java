package org.apiary.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code apiary} command line. */
@Command(name = "apiary", mixinStandardHelpOptions = true, version = "Apiary 0.1.0",
    description = "A transactional Function-as-a-Service framework that runs functions inside VoltDB.",
    subcommands = {DemoCommand.class, FrontendCommand.class, DrillCommand.class, ProvenanceCommand.class})
public final class Main implements Runnable {
  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "name a command, for example: apiary demo");
  }

  public static void main(String[] args) {
    System.exit(new CommandLine(new Main()).execute(args));
  }
}
