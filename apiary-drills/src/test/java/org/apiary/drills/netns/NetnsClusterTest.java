package org.apiary.drills.netns;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apiary.database.Deployments;
import org.apiary.database.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Apiary across hosts with real addresses: 3 VoltDB nodes (k=1), 2 frontends and a client, each in a network
 * namespace of its own ({@link NetnsHosts}), each bound to and advertising its 198.18 address; the test JVM stays in
 * the root namespace, which has no address on the bridge, and talks to none of them over the network.
 */
class NetnsClusterTest {
  private static final List<String> DATABASE_HOSTS = List.of("db0", "db1", "db2");
  private static final List<String> FRONTEND_HOSTS = List.of("fe0", "fe1");
  private static final String WILDCARD_FRONTEND = "fe1";
  private static final String CLIENT = "client";
  private static final int FRONTEND_PORT = 5555;
  private static final int CALLS_PER_FRONTEND = 3;
  private static final Duration START = Duration.ofSeconds(60);
  /** The frontends' and the client's JVMs live seconds on 2 shared cores: one GC thread, no C2 compilation. */
  private static final List<String> SHORT_LIVED_JVM = List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");

  @TempDir
  Path work;

  @Test
  @Timeout(value = 240, unit = TimeUnit.SECONDS)
  void threeNodesTwoFrontendsAndAClientOnHostsOfTheirOwnServeThroughBothFrontends() throws Exception {
    NetnsAvailability.require();
    List<String> hostNames = new ArrayList<>(DATABASE_HOSTS);
    hostNames.addAll(FRONTEND_HOSTS);
    hostNames.add(CLIENT);
    String prefix;
    List<Process> started = new ArrayList<>();
    try (NetnsHosts hosts = NetnsHosts.create(hostNames)) {
      prefix = hosts.prefix();
      String leader = hosts.address(DATABASE_HOSTS.get(0));
      String database = DATABASE_HOSTS.stream().map(h -> hosts.address(h) + ":" + LocalCluster.CLIENT_PORT)
          .collect(Collectors.joining(","));

      // The same deployment on every node; each root initialized (no network), in parallel.
      Path deployment = work.resolve("deployment.xml");
      Files.writeString(deployment, Deployments.cluster(DATABASE_HOSTS.size(), 2, 1, null, null));
      List<CompletableFuture<Void>> inits = new ArrayList<>();
      for (String h : DATABASE_HOSTS) {
        inits.add(CompletableFuture.runAsync(() -> LocalCluster.initialize(work.resolve(h), deployment,
            work.resolve(h + "-init.log"), START)));
      }
      CompletableFuture.allOf(inits.toArray(CompletableFuture[]::new)).get(START.toSeconds(), TimeUnit.SECONDS);

      // Each node in its own namespace, meshing with db0 at its address, every listener on its own address.
      for (String h : DATABASE_HOSTS) {
        started.add(hosts.start(h, LocalCluster.serverCommand(LocalCluster.hostArguments(work.resolve(h), leader,
            DATABASE_HOSTS.size(), hosts.address(h)), "384m"), log(h)));
      }
      try {
        for (int i = 0; i < DATABASE_HOSTS.size(); i++) {
          String h = DATABASE_HOSTS.get(i);
          awaitListening(hosts, h, started.get(i), hosts.address(h) + ":" + LocalCluster.CLIENT_PORT);
        }
      } catch (AssertionError e) {
        StringBuilder logs = new StringBuilder(e.getMessage());
        for (String h : DATABASE_HOSTS) {
          logs.append("\n--- ").append(h).append(" (").append(hosts.address(h)).append("), its output:\n")
              .append(tail(log(h)));
        }
        throw new AssertionError(logs.toString(), e);
      }

      phase("3 nodes accept clients");

      // The frontends start while the client deploys (each brings Apiary's system tables up to date, safely at once).
      List<String> endpoints = new ArrayList<>();
      for (String h : FRONTEND_HOSTS) {
        List<String> frontend = new ArrayList<>(List.of(java(), "-Xmx256m"));
        frontend.addAll(SHORT_LIVED_JVM);
        frontend.addAll(LocalCluster.VOLTDB_JVM_FLAGS);
        // fe0 binds its address; fe1 every interface, advertising its address (what its lease row records).
        List<String> bind = h.equals(WILDCARD_FRONTEND) ? List.of("--bind", "0.0.0.0", "--advertise", hosts.address(h))
            : List.of("--bind", hosts.address(h));
        frontend.addAll(List.of("-cp", System.getProperty("java.class.path"), "org.apiary.cli.Main", "frontend",
            "--database", database, "--port", String.valueOf(FRONTEND_PORT), "--no-credentials"));
        frontend.addAll(bind);
        started.add(hosts.start(h, frontend, log(h)));
        endpoints.add("tcp://" + hosts.address(h) + ":" + FRONTEND_PORT);
      }
      List<String> run = new ArrayList<>(client("run", database, String.valueOf(CALLS_PER_FRONTEND)));
      run.addAll(endpoints);
      String out;
      try {
        out = hosts.runOrFail(CLIENT, run, Duration.ofSeconds(90));
      } catch (IllegalStateException e) {
        StringBuilder logs = new StringBuilder(e.getMessage());
        for (String h : FRONTEND_HOSTS) {
          logs.append("\n--- ").append(h).append(" (").append(hosts.address(h)).append("), its output:\n")
              .append(tail(log(h)));
        }
        throw new AssertionError(logs.toString(), e);
      }
      phase("deployed and invoked through both frontends from the client host");
      for (int i = 0; i < FRONTEND_HOSTS.size(); i++) {
        String h = FRONTEND_HOSTS.get(i);
        // The line names the advertised endpoint, the one clients use (fe1 listens on 0.0.0.0: see the sockets below).
        assertTrue(Files.readString(log(h)).contains(" listening on " + endpoints.get(i)), h + " does not say "
            + endpoints.get(i) + ":\n" + Files.readString(log(h)));
      }

      // Each call's answer, and the rows as VoltDB holds them: key 1000 * f + i incremented once by i + 1.
      Map<Long, Long> expected = new TreeMap<>();
      for (int f = 0; f < endpoints.size(); f++) {
        for (int i = 0; i < CALLS_PER_FRONTEND; i++) {
          expected.put(1000L * f + i, (long) (i + 1));
        }
      }
      assertEquals(expected, pairs(out, "result "), out);
      assertEquals(expected, pairs(out, "row "), out);
      // Each frontend's lease row advertises the address clients reached it at.
      List<String> advertised = out.lines().filter(l -> l.startsWith("lease ")).map(l -> l.split(" ")[2]).sorted()
          .toList();
      assertEquals(endpoints, advertised, out);

      // No cluster traffic on loopback: every TCP socket of every host is on its 198.18 address.
      for (String h : hostNames) {
        String sockets = sockets(hosts, h, "-tanp");
        for (String line : sockets.lines().skip(1).toList()) {
          assertFalse(line.contains("127.0.0.1") || line.contains("[::1]") || line.contains("::ffff:127."),
              h + " has a socket on loopback:\n" + sockets);
          boolean wildcard = line.matches(".*\\s(0\\.0\\.0\\.0|\\*|\\[::\\]):\\d+\\s.*");
          assertFalse(wildcard && !(h.equals(WILDCARD_FRONTEND) && line.contains(":" + FRONTEND_PORT + " ")),
              h + " listens on every interface:\n" + sockets);
        }
      }
      assertTrue(sockets(hosts, WILDCARD_FRONTEND, "-tln").matches("(?s).*\\s(0\\.0\\.0\\.0|\\*|\\[::\\]):"
          + FRONTEND_PORT + "\\s.*"), WILDCARD_FRONTEND + " does not listen on every interface");
      String listening = sockets(hosts, DATABASE_HOSTS.get(1), "-tln");
      String db1 = hosts.address(DATABASE_HOSTS.get(1));
      for (int port : new int[] {LocalCluster.CLIENT_PORT, LocalCluster.ADMIN_PORT, LocalCluster.INTERNAL_PORT}) {
        assertTrue(listening.contains(db1 + ":" + port), "db1 does not listen on " + db1 + ":" + port + ":\n"
            + listening);
      }
    }
    for (Process p : started) {
      assertFalse(p.isAlive(), "process " + p.pid() + " outlived the hosts");
    }
    assertEquals(List.of(), NetnsHosts.ownedNames().stream().filter(n -> n.startsWith(prefix)).toList(),
        "namespaces or links of the run are left");
  }

  /**
   * {@code ss OPTIONS} inside {@code host}, with IPv4-mapped addresses ({@code [::ffff:198.18.0.1]:21212}, as Java's
   * dual-stack sockets show) written as IPv4 ({@code 198.18.0.1:21212}).
   */
  private static String sockets(NetnsHosts hosts, String host, String options) {
    return hosts.runOrFail(host, List.of("ss", options), Duration.ofSeconds(10))
        .replaceAll("\\[::ffff:([0-9.]+)\\]", "$1");
  }

  private final long began = System.nanoTime();

  private void phase(String what) {
    System.out.printf("netns cluster: %s after %.1f s%n", what, (System.nanoTime() - began) / 1e9);
  }

  private String tail(Path log) throws IOException {
    if (!Files.exists(log)) {
      return "(no " + log + ")";
    }
    List<String> lines = Files.readAllLines(log);
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
  }

  private Path log(String host) {
    return work.resolve(host + ".log");
  }

  private static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  private static List<String> client(String... args) {
    List<String> cmd = new ArrayList<>(List.of(java(), "-Xmx256m"));
    cmd.addAll(SHORT_LIVED_JVM);
    cmd.addAll(LocalCluster.VOLTDB_JVM_FLAGS);
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), NetnsClient.class.getName()));
    cmd.addAll(List.of(args));
    return cmd;
  }

  private static Map<Long, Long> pairs(String out, String tag) {
    Map<Long, Long> m = new TreeMap<>();
    out.lines().filter(l -> l.startsWith(tag)).map(l -> l.split(" "))
        .forEach(p -> m.put(Long.parseLong(p[1]), Long.parseLong(p[2])));
    return m;
  }

  /**
   * Waits until a socket of {@code host} listens on {@code address} (a VoltDB node opens its client port once the
   * whole cluster is initialized); fails with the process's output if it exits or {@link #START} passes.
   */
  private void awaitListening(NetnsHosts hosts, String host, Process p, String address)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + START.toNanos();
    while (!sockets(hosts, host, "-tln").contains(address + " ")) {
      if (!p.isAlive()) {
        throw new AssertionError(host + " exited " + p.exitValue() + " before it listened on " + address + ":\n"
            + Files.readString(log(host)));
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(host + " did not listen on " + address + " within " + START + ":\n"
            + Files.readString(log(host)));
      }
      Thread.sleep(200);
    }
  }
}
