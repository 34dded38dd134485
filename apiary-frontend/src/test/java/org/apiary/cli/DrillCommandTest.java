package org.apiary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** Runs {@code apiary drill frontend-crash} as a user would: its own process, its own embedded database. */
class DrillCommandTest {
  @Test
  void theFrontendCrashDrillLosesAndDuplicatesNothing() throws Exception {
    CommandProcess drill = CommandProcess.run(Duration.ofSeconds(240),
        "drill", "frontend-crash", "--seconds", "6", "--kill-after", "2", "--clients", "4");
    String output = drill.output();
    Matcher m = Pattern.compile("drill frontend-crash: acknowledged=(\\d+) applied=(\\d+) duplicates=(\\d+) lost=(\\d+)")
        .matcher(output);
    assertTrue(m.find(), output);
    assertEquals(0, drill.exitCode(), output);
    assertEquals(m.group(1), m.group(2), output);
    assertEquals("0", m.group(3));
    assertEquals("0", m.group(4));
    assertTrue(Long.parseLong(m.group(1)) > 0, output);
    assertTrue(output.contains("killed frontend"), output);
  }
}
