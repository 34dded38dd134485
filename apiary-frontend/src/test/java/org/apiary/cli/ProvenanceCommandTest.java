package org.apiary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code apiary provenance}: a sink password never comes from the command line (issue 14). */
class ProvenanceCommandTest {
  private static final String POSTGRES = "jdbc:postgresql://127.0.0.1:5432/postgres";

  private record Run(int code, String out, String err) {}

  private static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = Main.commandLine();
    cl.setOut(new PrintWriter(out));
    cl.setErr(new PrintWriter(err));
    int code = cl.execute(args);
    return new Run(code, out.toString(), err.toString());
  }

  @Test
  void aPasswordOnTheCommandLineIsRefused() {
    Run r = run("provenance", "sql", "--sink", POSTGRES, "--user", "postgres", "--password", "secret", "SELECT 1");
    assertEquals(2, r.code(), r.err());
    assertTrue(r.err().contains("--password"), r.err());
  }

  @Test
  void thePasswordComesFromAFile(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("sink-password");
    Files.writeString(file, "secret\n");
    Run r = run("provenance", "sql", "--sink", POSTGRES, "--user", "postgres", "--password-file", file.toString(),
        "SELECT 41 + 1 AS answer");
    assertEquals(0, r.code(), r.err());
    assertTrue(r.out().contains("42"), r.out());
  }

  @Test
  void aMissingOrEmptyPasswordFileIsNamed(@TempDir Path dir) throws Exception {
    Run missing = run("provenance", "sql", "--sink", POSTGRES, "--password-file", dir.resolve("nope").toString(),
        "SELECT 1");
    assertEquals(2, missing.code(), missing.err());
    assertTrue(missing.err().contains("cannot read --password-file"), missing.err());
    Path empty = Files.createFile(dir.resolve("empty"));
    Run blank = run("provenance", "sql", "--sink", POSTGRES, "--password-file", empty.toString(), "SELECT 1");
    assertEquals(2, blank.code(), blank.err());
    assertTrue(blank.err().contains("is empty"), blank.err());
  }
}
