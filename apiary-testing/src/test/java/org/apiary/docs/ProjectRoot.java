package org.apiary.docs;

import java.nio.file.Files;
import java.nio.file.Path;

/** Where the repository's sources are, for tests that read them (the docs' samples, the packages' documentation). */
public final class ProjectRoot {
  private ProjectRoot() {}

  /** The repository's root: the nearest directory up from the working directory holding README.md and docs/. */
  public static Path find() {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve("README.md")) && Files.isDirectory(p.resolve("docs"))) {
        return p;
      }
    }
    throw new IllegalStateException("no README.md with a docs/ directory above " + Path.of("").toAbsolutePath());
  }
}
