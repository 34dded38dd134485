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
  }

  @Test
  void noCommandIsAUsageError() {
    assertEquals(2, new CommandLine(new Main()).execute());
  }
}
