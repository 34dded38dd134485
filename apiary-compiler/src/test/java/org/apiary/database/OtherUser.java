package org.apiary.database;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * What another local user ({@code nobody}) can read of a directory tree: the test runs as root and asks
 * {@code runuser} to read every file and list every directory as {@code nobody}.
 */
public final class OtherUser {
  private OtherUser() {}

  /** Whether this process can act as another user (it runs as root on a system with {@code runuser}). */
  public static boolean available() {
    return "root".equals(System.getProperty("user.name")) && command() != null;
  }

  /**
   * Makes {@code dir} traversable by everyone ({@code rwxr-xr-x}), as a home or {@code /var/lib} directory is: a
   * test's temporary directory is owner-only, which would hide everything under it and prove nothing.
   */
  public static void openUp(Path dir) throws IOException {
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  /** The files {@code nobody} can read and the directories it can list, under {@code root} (itself included). */
  public static List<String> readable(Path root) throws IOException, InterruptedException {
    List<Path> all;
    try (Stream<Path> paths = Files.walk(root)) {
      all = paths.filter(p -> !Files.isSymbolicLink(p)).toList();
    }
    if (all.isEmpty()) {
      throw new AssertionError(root + " holds nothing to check");
    }
    String script = "while IFS= read -r f; do if [ -d \"$f\" ]; then ls \"$f\" >/dev/null 2>&1 && echo \"$f\"; "
        + "else cat \"$f\" >/dev/null 2>&1 && echo \"$f\"; fi; done; echo END";
    List<String> cmd = new ArrayList<>(command());
    cmd.addAll(List.of("/bin/sh", "-c", script));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    try (var in = p.getOutputStream()) {
      for (Path f : all) {
        in.write((f + "\n").getBytes(StandardCharsets.UTF_8));
      }
    }
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("reading " + root + " as nobody did not finish within 60 s");
    }
    List<String> lines = new ArrayList<>(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8)
        .lines().toList());
    if (lines.isEmpty() || !"END".equals(lines.remove(lines.size() - 1))) {
      throw new AssertionError("reading " + root + " as nobody failed: " + lines);
    }
    return lines;
  }

  private static List<String> command() {
    boolean runuser = Files.isExecutable(Path.of("/usr/sbin/runuser")) || Files.isExecutable(Path.of("/sbin/runuser"));
    return runuser ? List.of("runuser", "-u", "nobody", "--") : null;
  }
}
