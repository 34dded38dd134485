package org.apiary.database;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/** The TCP sockets this process listens on, read from Linux's {@code /proc} (what {@code ss -ltnp} shows). */
final class ListeningSockets {
  private static final String LISTEN = "0A";

  private ListeningSockets() {}

  /** Each as {@code address:port}, the address in hex as the kernel gives it (00000000 is every IPv4 address). */
  static List<String> ofThisProcess() throws IOException {
    Set<String> inodes = new HashSet<>();
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      for (Path fd : fds.toList()) {
        try {
          String target = Files.readSymbolicLink(fd).toString();
          if (target.startsWith("socket:[")) {
            inodes.add(target.substring(8, target.length() - 1));
          }
        } catch (IOException e) {
          // closed while listed: not a listener of interest
        }
      }
    }
    List<String> listening = new ArrayList<>();
    for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
      List<String> lines = Files.readAllLines(Path.of(table));
      for (String line : lines.subList(1, lines.size())) {
        String[] f = line.trim().split("\\s+");
        if (f[3].equals(LISTEN) && inodes.contains(f[9])) {
          String[] local = f[1].split(":");
          listening.add(local[0] + ":" + Integer.parseInt(local[1], 16));
        }
      }
    }
    return listening;
  }

  /** Whether an address from {@link #ofThisProcess} is a wildcard (every interface) rather than one address. */
  static boolean everyInterface(String listening) {
    String address = listening.substring(0, listening.lastIndexOf(':'));
    return address.chars().allMatch(c -> c == '0');
  }
}
