package org.apiary.docs;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every {@code ```java} block of README.md and docs/*.md must appear, whitespace aside, in one of the sample sources
 * under this package (src/test/java/org/apiary/docs), which the build compiles. A sample edited in the docs without
 * its source, or a source that no longer compiles against the code, fails the build.
 */
class DocSamplesTest {
  private static final Pattern JAVA_BLOCK = Pattern.compile("(?m)^[ \\t]*```java[ \\t]*\\n(.*?)^[ \\t]*```",
      Pattern.DOTALL);
  private static final Pattern WHITESPACE = Pattern.compile("\\s+");

  /** One code block: where it is and its text. */
  record Block(Path file, int line, String text) {}

  @Test
  void everyJavaSampleOfTheDocsIsInACompiledSource() throws IOException {
    Path root = ProjectRoot.find();
    List<Path> docs = new ArrayList<>();
    docs.add(root.resolve("README.md"));
    try (Stream<Path> s = Files.list(root.resolve("docs"))) {
      s.filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
    }
    List<Block> blocks = new ArrayList<>();
    for (Path doc : docs) {
      blocks.addAll(javaBlocks(doc));
    }
    assertFalse(blocks.isEmpty(), "no ```java block found in " + docs);
    String sources = normalize(sampleSources(root));
    List<String> missing = new ArrayList<>();
    for (Block b : blocks) {
      if (!sources.contains(normalize(b.text()))) {
        missing.add(root.relativize(b.file()) + ":" + b.line());
      }
    }
    assertTrue(missing.isEmpty(), "these ```java blocks are not (whitespace aside) in any source under "
        + "apiary-testing/src/test/java/org/apiary/docs, so nothing compiles them: " + missing
        + ". Put the block's text into a sample source there (or change the source and the block together).");
  }

  static List<Block> javaBlocks(Path doc) throws IOException {
    String text = Files.readString(doc);
    List<Block> blocks = new ArrayList<>();
    Matcher m = JAVA_BLOCK.matcher(text);
    while (m.find()) {
      int line = 1 + (int) text.substring(0, m.start()).chars().filter(c -> c == '\n').count();
      blocks.add(new Block(doc, line, m.group(1)));
    }
    return blocks;
  }

  /**
   * Every Java source of this package and below, this test excepted, and of the examples the docs quote (the shop
   * application and the bank), so they are not copied here, concatenated.
   */
  private static String sampleSources(Path root) throws IOException {
    StringBuilder all = new StringBuilder();
    for (Path dir : List.of(root.resolve("apiary-testing/src/test/java/org/apiary/docs"),
        root.resolve("examples/shop/src"), root.resolve("apiary-cli/src/main/java/org/apiary/examples"))) {
      appendSources(dir, all);
    }
    return all.toString();
  }

  private static void appendSources(Path dir, StringBuilder all) throws IOException {
    try (Stream<Path> s = Files.walk(dir)) {
      s.filter(p -> p.toString().endsWith(".java") && !p.getFileName().toString().equals("DocSamplesTest.java"))
          .sorted()
          .forEach(p -> {
            try {
              all.append(Files.readString(p)).append('\n');
            } catch (IOException e) {
              throw new UncheckedIOException(e);
            }
          });
    }
  }

  /** The text without whitespace: indentation and line breaks differ between the docs and the sources. */
  static String normalize(String text) {
    return WHITESPACE.matcher(text).replaceAll("");
  }
}
