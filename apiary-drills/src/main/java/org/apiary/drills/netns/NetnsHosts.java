package org.apiary.drills.netns;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Hosts with addresses of their own on this machine: one Linux network namespace per host, each joined to one bridge
 * by a veth pair, each with an address from 198.18.0.0/15 (RFC 2544's range for network benchmarks; nothing else is
 * ever addressed, and the root namespace gets no address). Processes run inside a host with
 * {@code ip netns exec NAME}; {@link #cut} and {@link #heal} break and mend the link between two hosts with blackhole
 * routes. Needs root.
 *
 * <p>Every object a run creates is named with its prefix {@code apn<PID><letter>} (the JVM's process ID and a counter):
 * parallel runs never collide, and a run's leftovers are recognisable. {@link #create} first removes the leftovers of
 * runs whose JVM is gone (their processes killed, namespaces and links deleted). {@link #close()} tears everything
 * down: every process inside the namespaces killed (those {@link #start}ed and any they left), the namespaces, veths
 * and bridge deleted; it runs also from a JVM shutdown hook (Ctrl-C) and when {@link #create} fails half-way.
 *
 * <p>Every external command runs with a timeout; a failure carries its output.
 */
public final class NetnsHosts implements AutoCloseable {
  /** The prefix family: every object's name is {@code apn<PID><letter>...}. */
  static final String FAMILY = "apn";
  private static final Pattern OWNED = Pattern.compile("^" + FAMILY + "(\\d+)([a-z])(?:-.*)?$");
  private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(20);
  private static final Duration KILL_TIMEOUT = Duration.ofSeconds(10);
  private static final AtomicInteger RUNS = new AtomicInteger();
  private static final System.Logger LOG = System.getLogger(NetnsHosts.class.getName());

  /** The subnet every host's address is in: 198.18.0.0/24, host {@code i} (from 0) at 198.18.0.(i + 1). */
  public static final String SUBNET_PREFIX = "198.18.0.";
  private static final int PREFIX_LENGTH = 24;

  private final String prefix;
  private final Map<String, String> addresses = new LinkedHashMap<>();
  private final Map<String, String> namespaces = new LinkedHashMap<>();
  private final List<Process> processes = Collections.synchronizedList(new ArrayList<>());
  private final Thread hook;
  private boolean closed;

  private NetnsHosts(String prefix) {
    this.prefix = prefix;
    this.hook = new Thread(this::closeQuietlyFromHook, prefix + "-teardown");
  }

  /**
   * Why hosts cannot be made here ({@code ip netns} missing or refused, not root), or empty if they can: tried by
   * adding and deleting a namespace.
   */
  public static Optional<String> unavailableReason() {
    String probe = FAMILY + ProcessHandle.current().pid() + "z-probe";
    try {
      Result add = exec(List.of("ip", "netns", "add", probe), COMMAND_TIMEOUT);
      if (add.exit() != 0) {
        return Optional.of("`ip netns add` is not allowed here (exit " + add.exit() + "): " + add.output().strip());
      }
      Result del = exec(List.of("ip", "netns", "del", probe), COMMAND_TIMEOUT);
      if (del.exit() != 0) {
        return Optional.of("`ip netns del` failed (exit " + del.exit() + "): " + del.output().strip());
      }
      return Optional.empty();
    } catch (IOException e) {
      return Optional.of("cannot run `ip`: " + e.getMessage());
    }
  }

  /**
   * Creates one namespace per name in {@code hosts} (in that order, at 198.18.0.1, .2, ...), joined by a bridge;
   * loopback and links up. Leftovers of earlier runs whose JVM is gone are removed first.
   *
   * @param hosts short names (letters, digits), at most 99 hosts
   * @throws IllegalStateException with the failing command's output; what was made is torn down
   */
  public static NetnsHosts create(List<String> hosts) {
    if (hosts.isEmpty() || hosts.size() > 99) {
      throw new IllegalArgumentException("need 1 to 99 hosts, not " + hosts.size());
    }
    Set<String> distinct = new TreeSet<>();
    for (String h : hosts) {
      if (!h.matches("[a-z][a-z0-9]{0,9}") || !distinct.add(h)) {
        throw new IllegalArgumentException("host names are distinct, lower-case letters and digits (at most 10), "
            + "not '" + h + "' in " + hosts);
      }
    }
    removeLeftovers();
    int run = RUNS.getAndIncrement();
    String prefix = FAMILY + ProcessHandle.current().pid() + (char) ('a' + run % 26);
    NetnsHosts net = new NetnsHosts(prefix);
    Runtime.getRuntime().addShutdownHook(net.hook);
    try {
      net.build(hosts);
      return net;
    } catch (RuntimeException e) {
      try {
        net.close();
      } catch (RuntimeException teardown) {
        e.addSuppressed(teardown);
      }
      throw e;
    }
  }

  private void build(List<String> hosts) {
    String bridge = bridge();
    ip("link", "add", bridge, "type", "bridge");
    ip("link", "set", bridge, "up");
    for (int i = 0; i < hosts.size(); i++) {
      String host = hosts.get(i);
      String ns = prefix + "-" + host;
      String outside = prefix + "-" + i;
      String inside = prefix + "-" + i + "p";
      String address = SUBNET_PREFIX + (i + 1);
      ip("netns", "add", ns);
      namespaces.put(host, ns);
      addresses.put(host, address);
      ip("link", "add", outside, "type", "veth", "peer", "name", inside);
      ip("link", "set", outside, "master", bridge);
      ip("link", "set", outside, "up");
      ip("link", "set", inside, "netns", ns);
      ip("-n", ns, "link", "set", inside, "name", "eth0");
      ip("-n", ns, "addr", "add", address + "/" + PREFIX_LENGTH, "dev", "eth0");
      ip("-n", ns, "link", "set", "lo", "up");
      ip("-n", ns, "link", "set", "eth0", "up");
    }
  }

  /** This run's prefix: every namespace and link it made starts with it. */
  public String prefix() {
    return prefix;
  }

  /** The bridge's name. */
  public String bridge() {
    return prefix + "-br";
  }

  /** The hosts' names, in the order given to {@link #create}. */
  public List<String> hosts() {
    return List.copyOf(addresses.keySet());
  }

  /** A host's address, 198.18.0.N. */
  public String address(String host) {
    String a = addresses.get(host);
    if (a == null) {
      throw new IllegalArgumentException("no host '" + host + "'; the hosts are " + addresses.keySet());
    }
    return a;
  }

  /** A host's namespace name (for {@code ip netns exec}). */
  public String namespace(String host) {
    address(host);
    return namespaces.get(host);
  }

  /** The command that runs {@code command} inside {@code host}: {@code ip netns exec NAMESPACE command...}. */
  public List<String> inside(String host, List<String> command) {
    List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", namespace(host)));
    cmd.addAll(command);
    return cmd;
  }

  /**
   * Starts {@code command} inside {@code host}, its output (stdout and stderr) into {@code log}; returns at once.
   * {@link #close()} kills it.
   */
  public Process start(String host, List<String> command, Path log) {
    synchronized (this) {
      if (closed) {
        throw new IllegalStateException("the hosts of " + prefix + " are torn down");
      }
    }
    try {
      Process p = new ProcessBuilder(inside(host, command)).redirectErrorStream(true)
          .redirectOutput(log.toFile()).start();
      processes.add(p);
      return p;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + command + " in " + host + ": " + e.getMessage(), e);
    }
  }

  /** Runs {@code command} inside {@code host} to completion within {@code timeout}; its exit status and output. */
  public Result run(String host, List<String> command, Duration timeout) {
    try {
      return exec(inside(host, command), timeout);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run " + command + " in " + host + ": " + e.getMessage(), e);
    }
  }

  /** Like {@link #run}, failing with the output unless the command exits 0. */
  public String runOrFail(String host, List<String> command, Duration timeout) {
    Result r = run(host, command, timeout);
    if (r.exit() != 0) {
      throw new IllegalStateException(String.join(" ", command) + " in " + host + " exited " + r.exit() + ":\n"
          + r.output());
    }
    return r.output();
  }

  /**
   * Cuts the link between hosts {@code a} and {@code b} both ways: each gets a blackhole route to the other's
   * address, so packets between them are dropped at the sender (a connect fails, an open connection stalls); every
   * other link stays up.
   */
  public void cut(String a, String b) {
    ip("-n", namespace(a), "route", "add", "blackhole", address(b) + "/32");
    ip("-n", namespace(b), "route", "add", "blackhole", address(a) + "/32");
  }

  /** Mends what {@link #cut} broke between {@code a} and {@code b}. */
  public void heal(String a, String b) {
    ip("-n", namespace(a), "route", "del", "blackhole", address(b) + "/32");
    ip("-n", namespace(b), "route", "del", "blackhole", address(a) + "/32");
  }

  /**
   * Degrades what {@code host} sends: a token-bucket filter ({@code tc qdisc tbf}) on its {@code eth0} limits it to
   * {@code rateKbit} kbit/s, queues a burst for at most
   * {@code latencyMs} (the delay its packets see) and drops what would wait longer (the loss). What the kernel offers
   * when {@code sch_netem} (fixed delay, random loss) is not there. {@link #restore} removes it.
   */
  public void degrade(String host, int rateKbit, int latencyMs) {
    if (rateKbit < 8 || latencyMs < 1) {
      throw new IllegalArgumentException("a rate of at least 8 kbit/s and a latency of at least 1 ms, not "
          + rateKbit + " and " + latencyMs);
    }
    tc(host, "qdisc", "add", "dev", "eth0", "root", "tbf", "rate", rateKbit + "kbit", "burst", "16kb", "latency",
        latencyMs + "ms");
  }

  /** Removes what {@link #degrade} put on {@code host}'s link. */
  public void restore(String host) {
    tc(host, "qdisc", "del", "dev", "eth0", "root");
  }

  private void tc(String host, String... args) {
    List<String> cmd = new ArrayList<>(List.of("tc"));
    cmd.addAll(List.of(args));
    runOrFail(host, cmd, COMMAND_TIMEOUT);
  }

  /** Whether a socket inside {@code host} listens on {@code address} ({@code HOST:PORT}), by {@code ss -tln}. */
  public boolean listens(String host, String address) {
    return runOrFail(host, List.of("ss", "-tln"), COMMAND_TIMEOUT).replaceAll("\\[::ffff:([0-9.]+)\\]", "$1")
        .contains(address + " ");
  }

  /** The process IDs inside {@code host}'s namespace ({@code ip netns pids}). */
  public List<Long> pids(String host) {
    return pidsIn(namespace(host));
  }

  /**
   * Tears everything down: kills every process inside the namespaces (SIGKILL), deletes the namespaces (their veth
   * ends go with them, and the peers with those) and the bridge, then checks that nothing of this run is left.
   *
   * @throws IllegalStateException naming what could not be removed
   */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException shuttingDown) {
      // Called from the hook itself, or while the JVM exits: the hook runs (or ran) this teardown.
      LOG.log(System.Logger.Level.DEBUG, "tearing down " + prefix + " while the JVM shuts down");
    }
    List<String> problems = new ArrayList<>();
    synchronized (processes) {
      for (Process p : processes) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
      }
    }
    for (String ns : namespaces.values()) {
      killAll(ns, problems);
    }
    synchronized (processes) {
      for (Process p : processes) {
        try {
          if (!p.waitFor(KILL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            problems.add("process " + p.pid() + " did not die within " + KILL_TIMEOUT + " of SIGKILL");
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          problems.add("interrupted while waiting for process " + p.pid() + " to die");
        }
      }
    }
    removeOwned(prefix, problems);
    if (!problems.isEmpty()) {
      throw new IllegalStateException("the hosts of " + prefix + " were not torn down completely:\n  "
          + String.join("\n  ", problems));
    }
  }

  private void closeQuietlyFromHook() {
    try {
      close();
    } catch (RuntimeException e) {
      // A shutdown hook has no caller to throw to: say what was left, on the error stream the user sees.
      System.err.println("netns teardown of " + prefix + " on exit: " + e.getMessage());
    }
  }

  /**
   * Removes every namespace and link of the family whose run's JVM is gone (its PID no longer alive): the leftovers
   * of a run killed before its teardown ran. Runs of live JVMs, this one's included, are left alone.
   */
  static void removeLeftovers() {
    List<String> problems = new ArrayList<>();
    Set<String> stale = new TreeSet<>();
    for (String name : ownedNames()) {
      Matcher m = OWNED.matcher(name);
      if (m.matches()) {
        long pid = Long.parseLong(m.group(1));
        if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
          continue;
        }
        stale.add(FAMILY + m.group(1) + m.group(2));
      }
    }
    for (String p : stale) {
      LOG.log(System.Logger.Level.WARNING, "removing the leftovers of netns run " + p + " (its JVM is gone)");
      for (String ns : namespaceNames()) {
        if (ns.startsWith(p + "-")) {
          killAll(ns, problems);
        }
      }
      removeOwned(p, problems);
    }
    if (!problems.isEmpty()) {
      throw new IllegalStateException("leftovers of earlier netns runs could not be removed:\n  "
          + String.join("\n  ", problems));
    }
  }

  /** The namespaces and links of this family on the machine now. */
  static List<String> ownedNames() {
    List<String> names = new ArrayList<>(namespaceNames());
    names.addAll(linkNames());
    return names.stream().filter(n -> n.startsWith(FAMILY)).toList();
  }

  /** Every namespace named by {@code ip netns list}. */
  static List<String> namespaceNames() {
    String out = ipOutput("netns", "list");
    return out.lines().map(String::strip).filter(l -> !l.isEmpty()).map(l -> l.split("\\s+")[0]).toList();
  }

  /** Every link in the root namespace, by name (without the {@code @peer} suffix). */
  static List<String> linkNames() {
    String out = ipOutput("-o", "link", "show");
    List<String> names = new ArrayList<>();
    for (String line : out.lines().toList()) {
      String[] parts = line.split(":\\s+", 3);
      if (parts.length >= 2) {
        names.add(parts[1].split("@")[0].strip());
      }
    }
    return names;
  }

  private static void killAll(String ns, List<String> problems) {
    for (int round = 0; round < 3; round++) {
      List<Long> pids;
      try {
        pids = pidsIn(ns);
      } catch (IllegalStateException e) {
        problems.add(e.getMessage());
        return;
      }
      if (pids.isEmpty()) {
        return;
      }
      for (long pid : pids) {
        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
      }
      for (long pid : pids) {
        ProcessHandle.of(pid).ifPresent(h -> {
          try {
            h.onExit().get(KILL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            problems.add("process " + pid + " in " + ns + " did not die within " + KILL_TIMEOUT + " of SIGKILL");
          }
        });
      }
    }
    List<Long> left = pidsIn(ns);
    if (!left.isEmpty()) {
      problems.add("processes " + left + " still run in " + ns);
    }
  }

  private static List<Long> pidsIn(String ns) {
    return ipOutput("netns", "pids", ns).lines().map(String::strip).filter(l -> !l.isEmpty()).map(Long::parseLong)
        .toList();
  }

  /** Deletes the namespaces and links whose names start with {@code prefix + "-"}, then checks none is left. */
  private static void removeOwned(String prefix, List<String> problems) {
    String start = prefix + "-";
    for (String ns : namespaceNames()) {
      if (ns.startsWith(start)) {
        tryIp(problems, "netns", "del", ns);
      }
    }
    for (String link : linkNames()) {
      if (link.startsWith(start) && !link.endsWith("p")) {
        tryIp(problems, "link", "del", link); // a veth's peer goes with it; the bridge last, by name order
      }
    }
    // The kernel removes a deleted namespace's devices once its last user is gone, a moment later: wait for that.
    long deadline = System.nanoTime() + KILL_TIMEOUT.toNanos();
    List<String> left = ownedNames().stream().filter(n -> n.startsWith(start)).toList();
    while (!left.isEmpty() && System.nanoTime() < deadline) {
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
      left = ownedNames().stream().filter(n -> n.startsWith(start)).toList();
    }
    for (String name : left) {
      problems.add(name + " is still there " + KILL_TIMEOUT + " after its deletion");
    }
  }

  private static void tryIp(List<String> problems, String... args) {
    try {
      Result r = exec(ipCommand(args), COMMAND_TIMEOUT);
      // Already gone (its namespace took it along) is what we wanted.
      if (r.exit() != 0 && !r.output().contains("Cannot find device") && !r.output().contains("No such file")) {
        problems.add("ip " + String.join(" ", args) + " exited " + r.exit() + ": " + r.output().strip());
      }
    } catch (IOException e) {
      problems.add("ip " + String.join(" ", args) + ": " + e.getMessage());
    }
  }

  private static void ip(String... args) {
    ipOutput(args);
  }

  private static String ipOutput(String... args) {
    try {
      Result r = exec(ipCommand(args), COMMAND_TIMEOUT);
      if (r.exit() != 0) {
        throw new IllegalStateException("ip " + String.join(" ", args) + " exited " + r.exit() + ": "
            + r.output().strip());
      }
      return r.output();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run ip " + String.join(" ", args) + ": " + e.getMessage(), e);
    }
  }

  private static List<String> ipCommand(String... args) {
    List<String> cmd = new ArrayList<>(List.of("ip"));
    cmd.addAll(List.of(args));
    return cmd;
  }

  /** What a command did: its exit status and its output (stdout and stderr together). */
  public record Result(int exit, String output) {}

  /** Runs {@code command} within {@code timeout} (killed and failed beyond it, with what it printed). */
  static Result exec(List<String> command, Duration timeout) throws IOException {
    Path out = Files.createTempFile("apiary-netns-cmd-", ".out");
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
      boolean done;
      try {
        done = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        p.destroyForcibly();
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted while running " + String.join(" ", command));
      }
      if (!done) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        throw new IllegalStateException(String.join(" ", command) + " did not finish within " + timeout + ":\n"
            + Files.readString(out, StandardCharsets.UTF_8));
      }
      return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(out);
    }
  }
}
