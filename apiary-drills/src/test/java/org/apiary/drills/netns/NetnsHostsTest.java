package org.apiary.drills.netns;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The harness itself: hosts reach each other at their addresses, a cut link stops traffic, a heal restores it. */
class NetnsHostsTest {
  private static final Duration CONNECT = Duration.ofSeconds(5);

  @TempDir
  Path work;

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void aCutLinkStopsTrafficBetweenTwoHostsOnlyAndHealRestoresIt() throws Exception {
    NetnsAvailability.require();
    String prefix;
    Process listener;
    try (NetnsHosts hosts = NetnsHosts.create(List.of("a", "b", "c"))) {
      prefix = hosts.prefix();
      assertEquals(List.of("198.18.0.1", "198.18.0.2", "198.18.0.3"),
          hosts.hosts().stream().map(hosts::address).toList());
      Path log = work.resolve("listener.log");
      listener = hosts.start("b", List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
          "-Xmx64m", "-cp", System.getProperty("java.class.path"), TcpListen.class.getName(),
          hosts.address("b"), "7000"), log);
      long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      while (!Files.readString(log).contains("listening on")) {
        assertTrue(listener.isAlive(), "the listener exited:\n" + Files.readString(log));
        assertTrue(System.nanoTime() < deadline, "the listener did not listen within 20 s:\n" + Files.readString(log));
        Thread.sleep(50);
      }
      String b = hosts.address("b");
      assertEquals(0, connect(hosts, "a", b).exit(), "a cannot reach b before any cut: " + connect(hosts, "a", b));
      assertEquals(0, connect(hosts, "c", b).exit());
      assertNotEquals(0, connect(hosts, "a", "127.0.0.1").exit(), "b's listener is reachable on loopback from a");

      hosts.cut("a", "b");
      NetnsHosts.Result cut = connect(hosts, "a", b);
      assertNotEquals(0, cut.exit(), "a still reaches b after the cut: " + cut.output());
      assertEquals(0, connect(hosts, "c", b).exit(), "the cut between a and b broke c's link");
      assertTrue(hosts.runOrFail("b", List.of("ip", "route", "show"), CONNECT).contains("blackhole "
          + hosts.address("a")), "b keeps a route to a after the cut");

      hosts.heal("a", "b");
      NetnsHosts.Result healed = connect(hosts, "a", b);
      assertEquals(0, healed.exit(), "a does not reach b after heal: " + healed.output());
      assertFalse(hosts.runOrFail("b", List.of("ip", "route", "show"), CONNECT).contains("blackhole"));
    }
    assertFalse(listener.isAlive(), "the listener outlived the hosts");
    assertEquals(List.of(), NetnsHosts.ownedNames().stream().filter(n -> n.startsWith(prefix)).toList(),
        "namespaces or links of the run are left");
  }

  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void aRunInterruptedLikeCtrlCTearsItsHostsDownAndAKilledRunsLeftoversGoAtTheNextCreate() throws Exception {
    NetnsAvailability.require();
    // Ctrl-C: SIGINT to a JVM holding hosts; its shutdown hook removes them.
    Path log = work.resolve("holder.log");
    Process holder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx64m",
        "-cp", System.getProperty("java.class.path"), NetnsHostsHolder.class.getName())
        .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    try {
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (!Files.readString(log).contains("prefix ")) {
        assertTrue(holder.isAlive(), "the holder exited:\n" + Files.readString(log));
        assertTrue(System.nanoTime() < deadline, "no hosts within 30 s:\n" + Files.readString(log));
        Thread.sleep(50);
      }
      String prefix = Files.readString(log).lines().filter(l -> l.startsWith("prefix ")).findFirst().orElseThrow()
          .substring("prefix ".length()).strip();
      assertFalse(NetnsHosts.ownedNames().stream().filter(n -> n.startsWith(prefix)).toList().isEmpty());
      assertEquals(0, new ProcessBuilder("kill", "-INT", String.valueOf(holder.pid())).start().waitFor());
      // Generous: right after another test removed its hosts the teardown's 'ip' commands can be slow (a fresh-clone
      // CI waited more than 30 s here once, right after NetworkDrillTest; alone the test takes 3 s).
      assertTrue(holder.waitFor(90, TimeUnit.SECONDS), "the holder did not exit within 90 s of SIGINT:\n"
          + Files.readString(log));
      assertEquals(List.of(), NetnsHosts.ownedNames().stream().filter(n -> n.startsWith(prefix)).toList(),
          "SIGINT left the run's namespaces or links:\n" + Files.readString(log));
    } finally {
      holder.destroyForcibly();
    }

    // A run killed before any teardown: its JVM (PID 99999999, above any pid_max) is gone, so create removes them.
    String dead = NetnsHosts.FAMILY + "99999999a";
    NetnsHosts.exec(List.of("ip", "netns", "add", dead + "-left"), CONNECT);
    NetnsHosts.exec(List.of("ip", "link", "add", dead + "-br", "type", "bridge"), CONNECT);
    try (NetnsHosts hosts = NetnsHosts.create(List.of("a"))) {
      assertEquals(List.of(), NetnsHosts.ownedNames().stream().filter(n -> n.startsWith(dead)).toList());
      assertFalse(NetnsHosts.ownedNames().stream().filter(n -> n.startsWith(hosts.prefix())).toList().isEmpty());
    } finally {
      NetnsHosts.exec(List.of("ip", "netns", "del", dead + "-left"), CONNECT);
      NetnsHosts.exec(List.of("ip", "link", "del", dead + "-br"), CONNECT);
    }
  }

  /** A TCP connect from {@code host} to {@code address}:7000 (bash's /dev/tcp), within 3 s. */
  private static NetnsHosts.Result connect(NetnsHosts hosts, String host, String address) {
    return hosts.run(host, List.of("timeout", "3", "bash", "-c",
        "exec 3<>/dev/tcp/" + address + "/7000 && head -c1 <&3"), CONNECT);
  }
}
