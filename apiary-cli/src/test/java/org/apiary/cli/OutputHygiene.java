package org.apiary.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * What a command's output must not hold (issue 44, as a new user saw it): a Java stack trace, VoltDB's warning that an
 * embedded database listening on loopback is "accessible ... by anyone on the network", "create is deprecated",
 * "assigned to non-existent role", DuckDB's "Catalog write-write conflict", and terminal colour codes.
 */
final class OutputHygiene {
  private static final List<Pattern> FORBIDDEN = List.of(
      Pattern.compile("^\\s+at [\\w$.]+\\([^)]*\\)\\s*$"), // a stack frame
      Pattern.compile("Exception in thread"),
      Pattern.compile("^Caused by: "),
      Pattern.compile("accessible .*by anyone", Pattern.CASE_INSENSITIVE),
      Pattern.compile("create is deprecated", Pattern.CASE_INSENSITIVE),
      Pattern.compile("non-existent role", Pattern.CASE_INSENSITIVE),
      Pattern.compile("write-write conflict", Pattern.CASE_INSENSITIVE),
      Pattern.compile("\u001B\\[|\\[0m|\\[1;3\\dm"));

  private OutputHygiene() {}

  /** The lines of {@code output} that should not be there; empty if none. */
  static List<String> problems(String output) {
    List<String> bad = new ArrayList<>();
    for (String line : output.split("\n", -1)) {
      for (Pattern p : FORBIDDEN) {
        if (p.matcher(line).find()) {
          bad.add(line);
          break;
        }
      }
    }
    return bad;
  }
}
