package org.apiary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ServiceLoader;
import java.util.Set;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The command line names no drill: on this module's class path (no apiary-drills) there is no {@code drill} or
 * {@code drill-frontend} command and no {@link ExtensionCommand}, and asking for one is a usage error. (The drills'
 * tests run the same {@link Main} with the drills on the class path.)
 */
class ExtensionCommandTest {
  @Test
  void withoutTheDrillsOnTheClassPathThereIsNoDrillCommand() {
    assertFalse(ServiceLoader.load(ExtensionCommand.class).iterator().hasNext(),
        "an extension command is on the CLI's own class path");
    CommandLine cl = Main.commandLine();
    Set<String> commands = cl.getSubcommands().keySet();
    assertTrue(commands.containsAll(Set.of("demo", "start", "stop", "deploy", "invoke", "status", "executions",
        "cluster", "frontend", "provenance", "credentials")), commands.toString());
    assertFalse(commands.contains("drill") || commands.contains("drill-frontend"), commands.toString());

    StringWriter err = new StringWriter();
    cl.setErr(new PrintWriter(err));
    assertEquals(2, cl.execute("drill", "exactly-once"));
    assertTrue(err.toString().contains("Unmatched argument"), err.toString());
  }
}
