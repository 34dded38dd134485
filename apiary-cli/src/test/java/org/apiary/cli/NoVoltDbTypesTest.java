package org.apiary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Issue 44 item 2: the command line, the console and the drills use no VoltDB type; they read the database through
 * {@code org.apiary.database} (rows as {@code Rows}). Reads their main source from the source tree, found from where
 * this class was loaded, so it holds for any working directory.
 */
class NoVoltDbTypesTest {
  private static final List<String> MODULES = List.of("apiary-cli", "apiary-console", "apiary-drills");
  /** An import of, or a fully qualified reference to, anything of VoltDB's. */
  private static final Pattern VOLTDB = Pattern.compile("\\borg\\.voltdb\\.");

  @Test
  void noMainSourceFileNamesAVoltDbType() throws IOException, URISyntaxException {
    Path root = projectRoot();
    List<String> offenders = new ArrayList<>();
    for (String module : MODULES) {
      Path sources = root.resolve(module).resolve("src/main/java");
      assertTrue(Files.isDirectory(sources), "no main source at " + sources);
      int files = 0;
      try (Stream<Path> walk = Files.walk(sources)) {
        for (Path file : walk.filter(f -> f.toString().endsWith(".java")).toList()) {
          files++;
          List<String> lines = Files.readAllLines(file);
          for (int i = 0; i < lines.size(); i++) {
            if (VOLTDB.matcher(lines.get(i)).find()) {
              offenders.add(root.relativize(file) + ":" + (i + 1) + ": " + lines.get(i).strip());
            }
          }
        }
      }
      assertTrue(files > 0, "no Java file under " + sources);
    }
    assertEquals(List.of(), offenders, "main code of " + MODULES + " names VoltDB; read rows with "
        + "ApiaryDatabase.query, queryEach or callAdminForRows instead");
  }

  /** The directory holding the modules: the nearest ancestor of this class's location with all of them. */
  private static Path projectRoot() throws URISyntaxException {
    Path start = Path.of(NoVoltDbTypesTest.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    for (Path p = start.toAbsolutePath(); p != null; p = p.getParent()) {
      Path candidate = p;
      if (MODULES.stream().allMatch(m -> Files.isDirectory(candidate.resolve(m).resolve("src/main/java")))) {
        return p;
      }
    }
    throw new IllegalStateException("no directory above " + start + " holds " + MODULES);
  }
}
