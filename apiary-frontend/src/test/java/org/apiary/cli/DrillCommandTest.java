package org.apiary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apiary.database.LocalCluster;
import org.junit.jupiter.api.Test;

/** Runs {@code apiary drill frontend-crash} as a user would: its own process, its own embedded database. */
class DrillCommandTest {
  @Test
  void theFrontendCrashDrillLosesAndDuplicatesNothing() throws Exception {
    Path log = Files.createTempFile("apiary-drill-", ".log");
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(LocalCluster.VOLTDB_JVM_FLAGS);
    cmd.addAll(List.of("-Xmx1g", "-cp", System.getProperty("java.class.path"), "org.apiary.cli.Main",
        "drill", "frontend-crash", "--seconds", "6", "--kill-after", "2", "--clients", "4"));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    try {
      assertTrue(p.waitFor(240, TimeUnit.SECONDS), "the drill did not finish in 240 s");
      String output = Files.readString(log);
      Matcher m = Pattern.compile("drill frontend-crash: acknowledged=(\\d+) applied=(\\d+) duplicates=(\\d+) lost=(\\d+)")
          .matcher(output);
      assertTrue(m.find(), output);
      assertEquals(0, p.exitValue(), output);
      assertEquals(m.group(1), m.group(2), output);
      assertEquals("0", m.group(3));
      assertEquals("0", m.group(4));
      assertTrue(Long.parseLong(m.group(1)) > 0, output);
      assertTrue(output.contains("killed frontend"), output);
    } finally {
      p.destroyForcibly();
      Files.deleteIfExists(log);
    }
  }
}
