package org.apiary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The quick start's `./apiary demo`, in its own process against a real embedded VoltDB. */
class DemoCommandTest {
  @Test
  void demoRunsEveryStepAndExitsZero() throws Exception {
    CommandProcess demo = CommandProcess.run(Duration.ofSeconds(180), "demo", "--deposits", "500");
    String out = demo.output();
    assertEquals(0, demo.exitCode(), out);
    assertTrue(out.contains("refused: insufficient funds"), out);
    assertTrue(out.contains("balance of 1 after the deposits = 570"), out);
    assertTrue(out.contains("account 1 after the resend (paid once) = 580"), out);
    assertTrue(out.contains("deposit (graph payday, invocation payday-demo, caller demo-user) read account 1"), out);
    assertTrue(out.contains("demo: every step worked"), out);
    assertEquals(java.util.List.of(), OutputHygiene.problems(out), "lines a new user should not see:\n" + out);
  }

  @Test
  void theHygieneCheckFindsWhatANewUserSaw() {
    String seen = String.join("\n",
        "15:21:40,277 WARN  [HOST] User \"apiary_frontend\" is assigned to non-existent role \"apiary_frontend\"",
        "WARN: User authentication is not enabled. The database is accessible and could be modified or shut down by "
            + "anyone on the network.",
        "WARN: create is deprecated, use init and start",
        "java.sql.SQLException: TransactionContext Error: Catalog write-write conflict on create with \"t\"",
        "\tat org.duckdb.DuckDBNative.duckdb_jdbc_execute(Native Method)",
        "Caused by: java.lang.IllegalStateException: x",
        "[\u001B[1;34mINFO\u001B[m] built", "[0m[0m",
        "apiary: ready: frontend tcp://127.0.0.1:5555");
    assertEquals(8, OutputHygiene.problems(seen).size(), OutputHygiene.problems(seen).toString());
  }

  @Test
  void noCommandIsAUsageError() {
    assertEquals(2, new CommandLine(new Main()).execute());
  }
}
