package org.apiary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The quick start's `./apiary demo`, run in-process against a real embedded VoltDB. */
class DemoCommandTest {
  @Test
  void demoRunsEveryStepAndExitsZero() {
    PrintStream original = System.out;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    int exit;
    try {
      System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
      exit = new CommandLine(new Main()).execute("demo", "--deposits", "500");
    } finally {
      System.setOut(original);
    }
    String out = captured.toString(StandardCharsets.UTF_8);
    assertEquals(0, exit, out);
    assertTrue(out.contains("refused: insufficient funds"), out);
    assertTrue(out.contains("balance of 1 after the deposits = 570"), out);
    assertTrue(out.contains("demo: every step worked"), out);
  }

  @Test
  void noCommandIsAUsageError() {
    assertEquals(2, new CommandLine(new Main()).execute());
  }
}
