package org.apiary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Every {@code apiary} command line in a shell block of the README and docs/ names only commands and options the
 * command line has (read from picocli's model of {@link Main}), so the docs cannot drift from the CLI. Commands the
 * drills add (found on the class path at run time, absent here) are left out.
 */
class DocCommandLinesTest {
  private static final Path ROOT = Path.of("").toAbsolutePath().getParent();

  @Test
  void everyDocumentedCommandLineNamesExistingCommandsAndOptions() throws IOException {
    List<Path> docs = new ArrayList<>(List.of(ROOT.resolve("README.md")));
    try (Stream<Path> files = Files.list(ROOT.resolve("docs"))) {
      files.filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
    }
    List<String> problems = new ArrayList<>();
    int checked = 0;
    for (Path doc : docs) {
      for (String line : shellLines(doc)) {
        String problem = check(line);
        checked++;
        if (problem != null) {
          problems.add(ROOT.relativize(doc) + ": " + line.strip() + "\n    " + problem);
        }
      }
    }
    assertTrue(checked >= 10, "found only " + checked + " command lines: is the README where it was?");
    assertEquals(List.of(), problems, String.join("\n", problems));
  }

  @Test
  void theCheckRefusesAnUnknownCommandOrOption() {
    assertTrue(check("./apiary invoke checkout --key 42 '\"o-1\"' --data ./d") == null);
    assertTrue(String.valueOf(check("./apiary invoke checkout --colour red")).contains("--colour"));
    assertTrue(String.valueOf(check("./apiary credentials mint --data d")).contains("mint"));
    assertTrue(String.valueOf(check("./apiary start --data=./d --ports 9")).contains("--ports"));
    assertTrue(check("./apiary start --data=./d --port 9 &") == null);
  }

  /** The lines of fenced bash/sh blocks that run {@code apiary} (with or without {@code ./}). */
  private static List<String> shellLines(Path doc) throws IOException {
    List<String> lines = new ArrayList<>();
    boolean inShell = false;
    for (String line : Files.readAllLines(doc)) {
      String t = line.strip();
      if (t.startsWith("```")) {
        inShell = !inShell && (t.equals("```bash") || t.equals("```sh") || t.equals("```shell"));
        continue;
      }
      if (inShell && (t.startsWith("./apiary ") || t.startsWith("apiary "))) {
        lines.add(t);
      }
    }
    return lines;
  }

  /** What is wrong with one command line, or {@code null}. */
  static String check(String line) {
    CommandLine cl = Main.commandLine();
    List<String> words = words(line);
    boolean positional = false;
    for (String w : words.subList(1, words.size())) {
      if (w.equals("--")) {
        return null;
      }
      if (w.startsWith("-") && w.length() > 1 && !w.matches("-\\d.*")) {
        String name = w.contains("=") ? w.substring(0, w.indexOf('=')) : w;
        if (cl.getCommandSpec().findOption(name) == null) {
          return "'" + cl.getCommandSpec().qualifiedName() + "' has no option " + name + "; its options: "
              + cl.getCommandSpec().options().stream().map(o -> o.longestName()).toList();
        }
        continue;
      }
      CommandLine sub = positional ? null : cl.getSubcommands().get(w);
      if (sub != null) {
        cl = sub;
      } else if (!cl.getSubcommands().isEmpty() && !positional && cl.getCommandSpec().positionalParameters().isEmpty()) {
        if (cl.getCommandSpec().name().equals("apiary") && w.equals("drill")) {
          return null; // the drills' commands are found at run time on the drills' class path
        }
        return "'" + cl.getCommandSpec().qualifiedName() + "' has no command '" + w + "'; its commands: "
            + cl.getSubcommands().keySet();
      } else {
        positional = true;
      }
    }
    return null;
  }

  /** Shell words of a line up to a comment, redirection, pipe, '&' or '&&' (single and double quotes respected). */
  private static List<String> words(String line) {
    List<String> words = new ArrayList<>();
    StringBuilder w = new StringBuilder();
    boolean inWord = false;
    char quote = 0;
    for (int i = 0; i < line.length(); i++) {
      char c = line.charAt(i);
      if (quote != 0) {
        if (c == quote) {
          quote = 0;
        } else {
          w.append(c);
        }
      } else if (c == '\'' || c == '"') {
        quote = c;
        inWord = true;
      } else if (Character.isWhitespace(c)) {
        if (inWord) {
          words.add(w.toString());
          w.setLength(0);
          inWord = false;
        }
      } else if ((c == '#' && !inWord) || c == '|' || c == '&' || c == '>' || c == ';') {
        break;
      } else {
        w.append(c);
        inWord = true;
      }
    }
    if (inWord) {
      words.add(w.toString());
    }
    return words;
  }
}
