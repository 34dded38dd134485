package org.apiary.drills;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apiary.ApiaryException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.LocalCluster;
import org.apiary.database.Rows;
import org.apiary.drills.counter.CounterApp;
import org.apiary.frontend.Credentials;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.Registrar;
import org.apiary.internal.Json;
import org.apiary.internal.wire.SocketLoop;
import org.apiary.internal.wire.WireReply;
import org.apiary.internal.wire.WireRequest;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * {@code ./apiary drill garbage} (issue 45): {@code apiary start} as its own process, with API keys required, attacked
 * the way its findings were, while a separate client with a valid key calls a graph throughout:
 * <ul>
 *   <li>raw TCP speaking ZMTP badly ({@link RawAttacker}): partial greetings, greetings that stall before the
 *   handshake's READY, wrong signatures, versions and mechanisms, multi-frame messages never finished, frame headers
 *   declaring 2^62 bytes, frames declaring 8 MB whose bytes trickle in, random bytes; each connection must be closed
 *   by the frontend within its bound (at once, the handshake interval, or the wire timeout, plus a margin);</li>
 *   <li>a connection flood: thousands of connections that complete their handshake and then hold their place, from
 *   loopback addresses other than the valid client's, past the frontend's limits (in all and per address);</li>
 *   <li>refused-call floods through well-formed ZeroMQ: no key, a wrong secret, a revoked key, a key without the
 *   graph's role; and malformed requests. None may run anything;</li>
 *   <li>database snapshots taken through the administrator's login during the flood (the embedded database shares
 *   the process's file descriptors): every one must succeed.</li>
 * </ul>
 * The frontend process's resident memory ({@code VmRSS}) is sampled throughout; its peak over the value after the
 * warm-up is {@code rss_growth_mb}. Its heap is committed and touched whole at its start, so that growth is memory
 * outside the heap; the heap itself is judged by what a full collection leaves ({@code jcmd GC.run}, then
 * {@code GC.heap_info}) after the attacks against after the warm-up, {@code retained_heap_mb}: garbage a collector
 * has not yet had reason to reclaim is not a leak, state kept for attackers is. Last line: {@code drill garbage: ...
 * valid_ok=N valid_failed=0 frontend_up=yes snapshots_ok=yes rss_growth_mb=M retained_heap_mb=H}; the exit status is
 * non-zero if any check failed.
 */
final class GarbageDrill {
  /**
   * @param connections the connection flood's size
   * @param wireTimeoutMs the service's wire timeout ({@code apiary start --wire-timeout-ms})
   */
  record Settings(long seed, int seconds, int connections, long wireTimeoutMs, Set<String> skip) {}

  /** What {@code --skip} may leave out: each raw attack by its label, and these. */
  static final Set<String> FAMILIES = Set.of("refused", "malformed");

  static Set<String> skippable() {
    Set<String> all = new java.util.TreeSet<>(FAMILIES);
    for (RawAttacker.Attack a : RawAttacker.Attack.values()) {
      all.add(a.label());
    }
    return all;
  }

  /** Resident memory the attack may add to the frontend's process. */
  static final long MAX_RSS_GROWTH_MB = 100;
  private static final String ROLE = "counter";
  private static final int KEYS = 100;
  /** Valid calls use counters from here on; every attacker's request names one below it, and none may run. */
  private static final long FIRST_VALID_KEY = 1_000;
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(5);
  private static final Duration WARM_UP = Duration.ofSeconds(4);
  /** How much later than its bound the frontend may close an attacker's connection, on a loaded machine. */
  private static final Duration MARGIN = Duration.ofSeconds(5);
  /** The attackers' nice value (the frontend's is 0, the valid clients' too). */
  static final int ATTACKER_NICE = 10;
  /** Connections the flood opens from one address: more than the frontend's limit per address. */
  private static final int FLOOD_PER_ADDRESS = 300;
  /** Descriptors the drill keeps for itself beyond the flood's (its JVM, ZeroMQ, the clients). */
  private static final long OWN_DESCRIPTORS = 1_000;
  private static final Duration START = Duration.ofSeconds(180);
  /**
   * The service's young generation is fixed (64 MiB): G1 otherwise sizes it to the allocation rate, and under the
   * attacks' churn grew the heap by hundreds of MB that held nothing, which would drown what the attacks make the
   * frontend hold (the old generation and humongous frames) in what the collector chose to keep free.
   */
  // The whole heap committed and touched at the start: resident memory then grows only with what lives outside the
  // heap (threads, buffers, VoltDB's native memory), and the heap is judged by what a full collection leaves.
  static final List<String> SERVICE_JVM_FLAGS = List.of("-Xms1g", "-Xmn64m", "-XX:+AlwaysPreTouch");
  /** The most the heap may hold after a full collection at the end beyond what it held after the warm-up. */
  static final long MAX_RETAINED_HEAP_MB = 32;
  /** The service's bound on unfinished bytes over all connections (apiary start --max-unfinished-total-mib). */
  static final int MAX_UNFINISHED_TOTAL_MIB = 64;
  /** Each refused-call flood and the malformed requests: at most 1,000 a second each (a ZeroMQ client's pace is
   * the frontend's, and unpaced they took the machine's cores from the frontend they attack). */
  private static final long SEND_EVERY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
  private static final Pattern WIRE_LINE = Pattern.compile(
      "connections refused or closed on the wire in the last \\d+ s: ([^;\\n]+); (\\d+) open");

  private final Settings settings;
  private final PrintStream out;
  private final List<String> problems = new CopyOnWriteArrayList<>();
  private final List<String> crashes = new CopyOnWriteArrayList<>();
  private final AtomicLong validOk = new AtomicLong();
  private final AtomicLong validFailed = new AtomicLong();
  private final List<String> validFailures = new CopyOnWriteArrayList<>();
  private final List<Long> validMicros = Collections.synchronizedList(new ArrayList<>());
  private final AtomicLong snapshotsTaken = new AtomicLong();
  private final AtomicLong snapshotsFailed = new AtomicLong();
  private final AtomicLong rssPeakKb = new AtomicLong();
  private final AtomicLong garbageFrames = new AtomicLong();
  /** Refused-call floods: replies by kind and outcome ("unauthenticated", "forbidden", "ok", ...). */
  private final Map<String, Map<String, AtomicLong>> refusedCalls = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> refusedSent = new ConcurrentHashMap<>();

  GarbageDrill(Settings settings, PrintStream out) {
    this.settings = settings;
    this.out = out;
  }

  /** The largest flood this process can hold: its file-descriptor limit less what it needs besides. */
  static long maxConnections() {
    if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean unix) {
      return unix.getMaxFileDescriptorCount() - OWN_DESCRIPTORS;
    }
    return 4_096 - OWN_DESCRIPTORS;
  }

  int run() throws Exception {
    out.println("-> drill garbage, seed " + settings.seed() + " (repeat with --seed " + settings.seed() + "): "
        + settings.seconds() + " s of attacks, a flood of " + settings.connections() + " connections, wire timeout "
        + settings.wireTimeoutMs() + " ms");
    Path dir = Files.createTempDirectory("apiary-garbage-drill-");
    Path snapshots = Files.createDirectories(dir.resolve("drill-snapshots"));
    int port = LocalCluster.freePorts(1)[0];
    ServiceProcess service = ServiceProcess.launch(dir, List.of("--port", String.valueOf(port),
        "--snapshot-interval-s", "3600", "--wire-timeout-ms", String.valueOf(settings.wireTimeoutMs()),
        // The operations guide's advice where untrusted peers connect: a total bound on unfinished bytes well under
        // the RSS growth the drill allows (the default, 256 MiB, lets the heap grow by that much, and it does).
        "--max-unfinished-total-mib", String.valueOf(MAX_UNFINISHED_TOTAL_MIB)),
        SERVICE_JVM_FLAGS);
    try {
      service.awaitReady(START);
      out.println("-> apiary start (pid " + service.pid() + ") serves tcp://127.0.0.1:" + port + " with API keys "
          + "required; its journal checkpoints are left to this drill's snapshots");
      try (ApiaryDatabase admin = service.admin(dir)) {
        return attack(service, admin, "tcp://127.0.0.1:" + port, snapshots);
      }
    } finally {
      service.stop(Duration.ofSeconds(60));
      report(service.output());
      Path log = Files.createTempFile("apiary-garbage-drill-service-", ".log");
      Files.writeString(log, service.output());
      service.deleteLog();
      deleteTree(dir);
      out.println("-> the service's output: " + log);
    }
  }

  private int attack(ServiceProcess service, ApiaryDatabase admin, String endpoint, Path snapshots) throws Exception {
    Registrar.register(admin, CounterApp.guarded(ROLE));
    String valid = Credentials.create(admin, "garbage-valid", Set.of(ROLE)).apiKey();
    String wrongRole = Credentials.create(admin, "garbage-reader", Set.of("reader")).apiKey();
    Credentials.Issued revokedKey = Credentials.create(admin, "garbage-revoked", Set.of(ROLE));
    Credentials.revoke(admin, revokedKey.keyId());
    String wrongSecret = valid.substring(0, valid.lastIndexOf('_') + 1) + "A".repeat(43);
    Thread.sleep(1_500); // a new or revoked key takes effect on every frontend within a second
    SplittableRandom seeds = new SplittableRandom(settings.seed());
    AtomicBoolean stopValid = new AtomicBoolean();
    List<Thread> threads = new ArrayList<>();
    List<Thread> validThreads = new ArrayList<>();
    for (int c = 0; c < 2; c++) {
      SplittableRandom r = new SplittableRandom(seeds.nextLong());
      Thread t = new Thread(DrillThreads.guarded(() -> valid(endpoint, valid, r, stopValid), crashes, out::println),
          "garbage-valid-" + c);
      validThreads.add(t);
      t.start();
    }
    Thread sampler = null;
    AtomicBoolean stopSampling = new AtomicBoolean();
    try (ZContext zmq = new ZContext()) {
      // Warm-up: the valid clients run, a snapshot is taken; then the baseline.
      Thread.sleep(WARM_UP.toMillis());
      snapshot(admin, snapshots, "warm-up");
      long baselineHeapKb = heapAfterFullGcKb(service.pid());
      long baselineKb = rssKb(service.pid());
      rssPeakKb.set(baselineKb);
      sampler = new Thread(DrillThreads.guarded(() -> sample(service.pid(), stopSampling), crashes, out::println),
          "garbage-rss");
      sampler.start();
      long okBefore = validOk.get();
      long start = System.nanoTime();
      long stopAt = start + TimeUnit.SECONDS.toNanos(settings.seconds());
      out.printf("-> warm-up over: %d valid calls, resident memory %d MB, heap after a full collection %d MB; "
          + "attacking%n", okBefore, baselineKb / 1024, baselineHeapKb / 1024);

      InetSocketAddress target = new InetSocketAddress("127.0.0.1", Integer.parseInt(
          endpoint.substring(endpoint.lastIndexOf(':') + 1)));
      Duration wireTimeout = Duration.ofMillis(settings.wireTimeoutMs());
      List<RawAttacker> attackers = new ArrayList<>();
      int a = 0;
      for (RawAttacker.Attack kind : RawAttacker.Attack.values()) {
        if (kind == RawAttacker.Attack.FLOOD || settings.skip().contains(kind.label())) {
          continue;
        }
        int parallel = switch (kind) {
          case TRICKLE_FRAME -> 30; // the 30 connections of issue 45's finding 4, 8 MB declared each
          case PARTIAL_GREETING, GREETING_STALL -> 20;
          default -> 4;
        };
        // Each opens up to 20 connections a second; those that send up to 32 MiB each, 2.
        int opens = kind == RawAttacker.Attack.UNFINISHED_MORE ? 2 : 20;
        attackers.add(new RawAttacker(kind, target, List.of("127.0.3." + (++a)), parallel, opens, stopAt,
            wireTimeout, MARGIN, new SplittableRandom(seeds.nextLong())));
      }
      List<String> floodSources = new ArrayList<>();
      for (int i = 0; i < (settings.connections() + FLOOD_PER_ADDRESS - 1) / FLOOD_PER_ADDRESS; i++) {
        floodSources.add("127.0.2." + (i + 1));
      }
      // The flood starts a quarter into the attack, so the other attacks have the frontend's connections to
      // themselves first, and runs to the end.
      long floodAt = start + (stopAt - start) / 4;
      RawAttacker flood = new RawAttacker(RawAttacker.Attack.FLOOD, target, floodSources, settings.connections(),
          2_000, stopAt, wireTimeout, MARGIN, new SplittableRandom(seeds.nextLong()));
      for (RawAttacker attacker : attackers) {
        threads.add(new Thread(DrillThreads.guarded(attacking(attacker), crashes, out::println),
            "garbage-" + attacker.attack().label()));
      }
      if (!settings.skip().contains(flood.attack().label())) {
        threads.add(new Thread(DrillThreads.guarded(attacking(() -> {
          sleepUntil(floodAt);
          flood.run();
        }), crashes, out::println), "garbage-flood"));
      }
      String[][] refusers = {{"no_key", null}, {"wrong_secret", wrongSecret}, {"revoked_key", revokedKey.apiKey()},
          {"wrong_role", wrongRole}};
      for (String[] r : settings.skip().contains("refused") ? new String[0][] : refusers) {
        SplittableRandom rr = new SplittableRandom(seeds.nextLong());
        threads.add(new Thread(DrillThreads.guarded(attacking(() -> refusedCalls(zmq, endpoint, r[0], r[1], rr,
            stopAt)), crashes, out::println), "garbage-refused-" + r[0]));
      }
      SplittableRandom gr = new SplittableRandom(seeds.nextLong());
      if (!settings.skip().contains("malformed")) {
        threads.add(new Thread(DrillThreads.guarded(attacking(() -> malformed(zmq, endpoint, gr, stopAt)), crashes,
            out::println), "garbage-malformed"));
      }
      threads.forEach(Thread::start);

      // Snapshots throughout, at least three during the flood.
      long every = Math.max(1_000, TimeUnit.NANOSECONDS.toMillis(stopAt - floodAt) / 4);
      for (int i = 0; System.nanoTime() < stopAt; i++) {
        sleepUntil(Math.min(stopAt, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(every)));
        if (System.nanoTime() < stopAt) {
          snapshot(admin, snapshots, System.nanoTime() >= floodAt ? "flood-" + i : "attack-" + i);
        }
      }
      DrillThreads.joinAll(threads, Duration.ofSeconds(60));
      stopValid.set(true);
      DrillThreads.joinAll(validThreads, CALL_TIMEOUT.plusSeconds(30));
      stopSampling.set(true);
      sampler.join(TimeUnit.SECONDS.toMillis(10));
      long seconds = Math.round((System.nanoTime() - start) / 1e9);
      if (!settings.skip().contains(flood.attack().label())) {
        attackers.add(flood);
      }
      return verdict(service, admin, endpoint, valid, attackers, baselineKb, baselineHeapKb, seconds);
    } finally {
      stopValid.set(true);
      stopSampling.set(true);
      for (Thread t : validThreads) {
        t.join(CALL_TIMEOUT.plusSeconds(30).toMillis());
      }
    }
  }

  /**
   * An attacker's thread body, at {@link #ATTACKER_NICE}: the attackers share the frontend's two cores here, and at
   * the frontend's priority their own CPU (about one core) delayed the frontend's closes past their bound.
   */
  private Runnable attacking(Runnable body) {
    return DrillThreads.niced(ATTACKER_NICE, body, out::println);
  }

  private int verdict(ServiceProcess service, ApiaryDatabase admin, String endpoint, String valid,
                      List<RawAttacker> attackers, long baselineKb, long baselineHeapKb, long seconds)
      throws Exception {
    out.printf("-> %d s of attacks; per attack: connections opened, closed by the frontend (of those, before it sent "
        + "a byte), still open past their bound, open at the end (not yet due)%n", seconds);
    long opened = 0;
    long lingering = 0;
    for (RawAttacker attacker : attackers) {
      RawAttacker.Stats s = attacker.stats;
      opened += s.opened.get();
      lingering += s.lingering.get();
      out.printf("   %-16s opened=%d closed=%d silently=%d lingering=%d held_at_end=%d connect_failed=%d peak_open=%d "
              + "sent_mb=%.1f%n", attacker.attack().label(), s.opened.get(), s.closed.get(), s.closedSilently.get(),
          s.lingering.get(), s.heldAtEnd.get(), s.connectFailed.get(), s.peakOpen.get(), s.bytesSent.get() / 1e6);
      if (s.firstLingering != null) {
        problems.add("the frontend left " + s.lingering.get() + " " + attacker.attack().label() + " connection(s) open "
            + "past their bound, e.g. " + s.firstLingering);
      }
      if (attacker.attack() != RawAttacker.Attack.FLOOD && s.closed.get() == 0) {
        problems.add("no " + attacker.attack().label() + " connection was closed by the frontend: the attack was not "
            + "tried");
      }
    }
    long refusedTotal = 0;
    for (Map.Entry<String, Map<String, AtomicLong>> e : new TreeMap<>(refusedCalls).entrySet()) {
      Map<String, Long> outcomes = new TreeMap<>();
      e.getValue().forEach((k, v) -> outcomes.put(k, v.get()));
      long answered = outcomes.values().stream().mapToLong(Long::longValue).sum();
      refusedTotal += answered;
      out.printf("   refused calls, %-13s sent=%d answered=%s%n", e.getKey(), refusedSent.get(e.getKey()).get(),
          outcomes);
      if (outcomes.getOrDefault(WireReply.OK, 0L) > 0) {
        problems.add(outcomes.get(WireReply.OK) + " " + e.getKey() + " call(s) ran");
      }
      if (answered == 0) {
        problems.add("no " + e.getKey() + " call was answered: the refused-call flood was not tried");
      }
    }
    synchronized (validMicros) {
      List<Long> sorted = new ArrayList<>(validMicros);
      Collections.sort(sorted);
      if (!sorted.isEmpty()) {
        out.printf("-> valid calls: %d ok, %d failed; latency p50 %.1f ms, p99 %.1f ms, max %.1f ms%n", validOk.get(),
            validFailed.get(), sorted.get(sorted.size() / 2) / 1e3, sorted.get((int) (sorted.size() * 0.99)) / 1e3,
            sorted.get(sorted.size() - 1) / 1e3);
      }
    }
    validFailures.stream().limit(5).forEach(f -> out.println("-> a valid call failed: " + f));

    boolean up = service.isAlive() && stillServes(endpoint, valid);
    long rssGrowthMb = Math.max(0, rssPeakKb.get() - baselineKb) / 1024;
    out.printf("-> resident memory: %d MB after the warm-up, %d MB at its peak%n", baselineKb / 1024,
        rssPeakKb.get() / 1024);
    long heapKb = up ? heapAfterFullGcKb(service.pid()) : baselineHeapKb;
    long retainedHeapMb = Math.max(0, heapKb - baselineHeapKb) / 1024;
    out.printf("-> heap after a full collection: %d MB after the warm-up, %d MB after the attacks%n",
        baselineHeapKb / 1024, heapKb / 1024);
    Rows.Row t = admin.query("reading the counters", "SELECT COALESCE(SUM(CASE WHEN k < "
        + FIRST_VALID_KEY + " THEN v ELSE 0 END), 0), COALESCE(SUM(CASE WHEN k >= " + FIRST_VALID_KEY
        + " THEN v ELSE 0 END), 0) FROM counters").rows().get(0);
    long attackersApplied = t.getLong(0);
    long validApplied = t.getLong(1);
    if (attackersApplied != 0) {
      problems.add("attackers' calls incremented counters " + attackersApplied + " times");
    }
    if (validApplied != validOk.get() + (up ? 1 : 0)) {
      problems.add("the counters hold " + validApplied + " valid increments, but the valid client made "
          + validOk.get() + (up ? " and the final check 1" : ""));
    }
    boolean snapshotsOk = snapshotsFailed.get() == 0 && snapshotsTaken.get() >= 2;
    if (!up) {
      problems.add("the frontend did not serve a valid call after the attacks (process "
          + (service.isAlive() ? "alive" : "gone") + ")");
    }
    if (validOk.get() == 0 || validFailed.get() > 0) {
      problems.add(validFailed.get() + " valid call(s) failed, " + validOk.get() + " succeeded");
    }
    if (!snapshotsOk) {
      problems.add(snapshotsFailed.get() + " of " + (snapshotsTaken.get() + snapshotsFailed.get())
          + " snapshots failed");
    }
    if (rssGrowthMb >= MAX_RSS_GROWTH_MB) {
      problems.add("the frontend's resident memory grew by " + rssGrowthMb + " MB, " + MAX_RSS_GROWTH_MB
          + " MB allowed");
    }
    if (retainedHeapMb >= MAX_RETAINED_HEAP_MB) {
      problems.add("the frontend's heap holds " + retainedHeapMb + " MB more after a full collection than after the "
          + "warm-up (attackers' state kept), " + MAX_RETAINED_HEAP_MB + " MB allowed");
    }
    problems.addAll(crashes);
    problems.forEach(p -> out.println("-> FAILED: " + p));
    out.printf(Locale.ROOT, "drill garbage: connections=%d lingering=%d refused_calls=%d garbage_frames=%d "
            + "snapshots=%d valid_ok=%d valid_failed=%d frontend_up=%s snapshots_ok=%s rss_growth_mb=%d "
            + "retained_heap_mb=%d%n", opened, lingering, refusedTotal, garbageFrames.get(),
        snapshotsTaken.get() + snapshotsFailed.get(), validOk.get(), validFailed.get(), up ? "yes" : "no",
        snapshotsOk ? "yes" : "no", rssGrowthMb, retainedHeapMb);
    return problems.isEmpty() ? 0 : 1;
  }

  /** The frontend's own counts of what it refused or closed on the wire, from its log lines (one per 10 s). */
  private void report(String serviceOutput) {
    Map<String, Long> reasons = new TreeMap<>();
    Matcher m = WIRE_LINE.matcher(serviceOutput);
    while (m.find()) {
      for (String part : m.group(1).split(",\\s*")) {
        String[] kv = part.split("=");
        if (kv.length == 2) {
          reasons.merge(kv[0].strip(), Long.parseLong(kv[1].strip()), Long::sum);
        }
      }
    }
    out.println("-> the frontend's log counts connections refused or closed on the wire: " + (reasons.isEmpty()
        ? "none" : reasons));
  }

  private void valid(String endpoint, String key, SplittableRandom random, AtomicBoolean stop) {
    try (ApiaryClient client = ApiaryClient.connect(ClientConfig.of(endpoint).withCredential(key)
        .withAttemptTimeout(CALL_TIMEOUT).withMaxAttempts(1))) {
      while (!stop.get()) {
        long t0 = System.nanoTime();
        try {
          client.invoke("increment", FIRST_VALID_KEY + random.nextInt(KEYS), 1L);
          validMicros.add((System.nanoTime() - t0) / 1000);
          validOk.incrementAndGet();
        } catch (ApiaryException e) {
          validFailed.incrementAndGet();
          validFailures.add(String.format(Locale.ROOT, "after %.1f s: %s", (System.nanoTime() - t0) / 1e9, e));
        }
      }
    }
  }

  /** Whether a new client (a new connection) with the valid key gets a call through once the attacks are over. */
  private boolean stillServes(String endpoint, String key) {
    try (ApiaryClient client = ApiaryClient.connect(ClientConfig.of(endpoint).withCredential(key)
        .withAttemptTimeout(CALL_TIMEOUT).withMaxAttempts(1))) {
      client.invoke("increment", FIRST_VALID_KEY, 1L);
      return true;
    } catch (ApiaryException e) {
      out.println("-> the frontend did not serve a valid call after the attacks: " + e.getMessage());
      return false;
    }
  }

  /**
   * Invoke requests the frontend must refuse, as fast as it answers them (up to 200 unanswered), through a DEALER
   * socket of its own: what each was answered is counted; an "ok" is a call that ran.
   */
  private void refusedCalls(ZContext zmq, String endpoint, String kind, String credential, SplittableRandom random,
                            long stopAt) {
    Map<String, AtomicLong> outcomes = refusedCalls.computeIfAbsent(kind, k -> new ConcurrentHashMap<>());
    AtomicLong sent = refusedSent.computeIfAbsent(kind, k -> new AtomicLong());
    ZMQ.Socket socket = zmq.createSocket(SocketType.DEALER);
    try {
      socket.setLinger(0);
      socket.setHandshakeIvl(SocketLoop.HANDSHAKE_MILLIS);
      socket.setReceiveTimeOut(10);
      socket.connect(endpoint);
      long answered = 0;
      long grace = stopAt + TimeUnit.SECONDS.toNanos(5);
      long nextSend = System.nanoTime();
      while (System.nanoTime() < stopAt || (sent.get() > answered && System.nanoTime() < grace)) {
        if (System.nanoTime() < stopAt && sent.get() - answered < 200 && System.nanoTime() >= nextSend) {
          nextSend = Math.max(nextSend + SEND_EVERY_NANOS, System.nanoTime() - 100 * SEND_EVERY_NANOS);
          WireRequest request = WireRequest.invoke("r-" + Long.toHexString(random.nextLong()), "increment",
              Json.MAPPER.valueToTree(random.nextInt((int) FIRST_VALID_KEY)), List.of(Json.MAPPER.valueToTree(1L)),
              null);
          if (socket.send(credential == null ? request.toBytes() : request.withCredential(credential).toBytes(),
              ZMQ.DONTWAIT)) {
            sent.incrementAndGet();
          }
        }
        for (byte[] reply = socket.recv(sent.get() - answered >= 200 ? 0 : ZMQ.DONTWAIT); reply != null;
             reply = socket.recv(ZMQ.DONTWAIT)) {
          answered++;
          WireReply r = WireReply.fromBytes(reply);
          outcomes.computeIfAbsent(WireReply.OK.equals(r.status()) ? WireReply.OK : r.error(), k -> new AtomicLong())
              .incrementAndGet();
        }
      }
    } finally {
      socket.close();
    }
  }

  /** Malformed requests (random bytes, bad JSON, oversized frames) through a DEALER socket; replies are read. */
  private void malformed(ZContext zmq, String endpoint, SplittableRandom random, long stopAt) {
    ZMQ.Socket socket = zmq.createSocket(SocketType.DEALER);
    try {
      socket.setLinger(0);
      socket.setHandshakeIvl(SocketLoop.HANDSHAKE_MILLIS);
      socket.setSndHWM(1_000);
      socket.setSendTimeOut(1_000);
      socket.connect(endpoint);
      long nextSend = System.nanoTime();
      while (System.nanoTime() < stopAt) {
        sleepUntil(nextSend);
        nextSend = Math.max(nextSend + SEND_EVERY_NANOS, System.nanoTime() - 100 * SEND_EVERY_NANOS);
        byte[][] message = nextGarbage(random);
        boolean sent = true;
        for (int i = 0; i < message.length && sent; i++) {
          sent = socket.send(message[i], i < message.length - 1 ? ZMQ.SNDMORE : 0);
        }
        if (sent) {
          garbageFrames.addAndGet(message.length);
        }
        while (socket.recv(ZMQ.DONTWAIT) != null) {
          // replies to garbage are errors; reading them keeps the frontend's queue to this socket short
        }
      }
    } finally {
      socket.close();
    }
  }

  /** Takes a blocking snapshot into {@code dir} through the administrator's login; counts it taken or failed. */
  private void snapshot(ApiaryDatabase admin, Path dir, String name) {
    String nonce = "garbage_drill_" + name.replace('-', '_'); // VoltDB refuses '-' and ',' in a nonce
    try {
      Rows result = admin.callAdminForRows("a snapshot during the garbage drill", "@SnapshotSave", dir.toString(),
          nonce, 1);
      List<String> failed = new ArrayList<>();
      int rows = result.size();
      for (Rows.Row row : result) {
        if (!"SUCCESS".equals(row.getString("RESULT"))) {
          failed.add(row.getString("RESULT") + " " + row.getString("ERR_MSG"));
        }
      }
      if (failed.isEmpty() && rows > 0) {
        snapshotsTaken.incrementAndGet();
      } else {
        snapshotsFailed.incrementAndGet();
        out.println("-> snapshot " + nonce + " failed: " + (rows == 0 ? "no result rows" : failed));
      }
    } catch (RuntimeException e) {
      snapshotsFailed.incrementAndGet();
      out.println("-> snapshot " + nonce + " failed: " + e.getMessage());
    }
    try (var files = Files.list(dir)) {
      for (Path f : files.toList()) {
        Files.delete(f);
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("cannot delete the drill's snapshot files in " + dir, e);
    }
  }

  private void sample(long pid, AtomicBoolean stop) {
    while (!stop.get()) {
      long kb = rssKb(pid);
      if (kb > 0) {
        rssPeakKb.accumulateAndGet(kb, Math::max);
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /**
   * The heap process {@code pid} uses right after a full collection, in KiB, by the JDK's {@code jcmd}: what the
   * process still references, without the garbage a collector has not yet had reason to reclaim.
   */
  static long heapAfterFullGcKb(long pid) throws IOException, InterruptedException {
    jcmd(pid, "GC.run");
    String info = jcmd(pid, "GC.heap_info");
    Matcher m = Pattern.compile("total \\d+K, used (\\d+)K").matcher(info);
    if (!m.find()) {
      throw new IllegalStateException("jcmd " + pid + " GC.heap_info said nothing of the heap's use: " + info);
    }
    return Long.parseLong(m.group(1));
  }

  private static String jcmd(long pid, String command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
        String.valueOf(pid), command).redirectErrorStream(true).start();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException("jcmd " + pid + " " + command + " did not finish within 60 s");
    }
    String output = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    if (p.exitValue() != 0) {
      throw new IllegalStateException("jcmd " + pid + " " + command + " failed (" + p.exitValue() + "): " + output);
    }
    return output;
  }

  /** {@code VmRSS} of process {@code pid} in KiB, or 0 once it is gone. */
  static long rssKb(long pid) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
      }
      return 0;
    } catch (IOException e) {
      return 0; // the process has ended: frontend_up says so
    }
  }

  private static void sleepUntil(long nanos) {
    try {
      long left;
      while ((left = nanos - System.nanoTime()) > 0) {
        Thread.sleep(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static final String[] SHAPES = {
      "{\"type\":\"invoke\",\"id\":\"%s\",\"graph\":\"increment\",\"key\":%s,\"args\":[%s]}",
      "{\"type\":\"invoke\",\"id\":%s,\"graph\":%s,\"key\":%s}",
      "{\"type\":\"result\",\"id\":\"%s\",\"junk\":%s,\"more\":%s}",
      "{\"type\":%s,\"id\":\"%s\",\"graph\":\"increment\",\"key\":1,\"args\":%s}",
      "[%s,%s,%s]",
      "{\"type\":\"invoke\",\"id\":\"%s\",\"graph\":\"no_such_graph_%s\",\"key\":%s,\"args\":[]}",
  };
  private static final String[] VALUES = {"null", "1", "-1", "1e309", "9223372036854775808", "\"x\"", "true",
      "[]", "{}", "[1,2,3]", "{\"a\":{\"b\":[null]}}", "\"\\u0000\"", "\"\\ud800\"", "0.5", "\"" + "y".repeat(300) + "\""};
  private static final int MAX_REQUEST_BYTES = FrontendConfig.defaults().maxRequestBytes();

  private static byte[][] nextGarbage(SplittableRandom random) {
    int kind = random.nextInt(9);
    return switch (kind) {
      case 0 -> new byte[][] {randomBytes(random, random.nextInt(2_000))};
      case 1 -> { // a request cut short
        byte[] whole = shaped(random, 0);
        yield new byte[][] {java.util.Arrays.copyOf(whole, random.nextInt(whole.length))};
      }
      case 2 -> { // a request with bytes flipped
        byte[] b = shaped(random, random.nextInt(SHAPES.length));
        for (int i = 0; i < 3; i++) {
          b[random.nextInt(b.length)] = (byte) random.nextInt(256);
        }
        yield new byte[][] {b};
      }
      case 3 -> new byte[][] {shaped(random, random.nextInt(SHAPES.length))};
      case 4 -> { // deep nesting
        int depth = 500 + random.nextInt(5_000);
        yield new byte[][] {("{\"type\":\"invoke\",\"id\":\"deep\",\"graph\":\"increment\",\"key\":1,\"args\":"
            + "[".repeat(depth) + "]".repeat(depth) + "}").getBytes(StandardCharsets.UTF_8)};
      }
      case 5 -> { // several frames in one message, each a request of its own
        byte[][] parts = new byte[2 + random.nextInt(4)][];
        for (int i = 0; i < parts.length; i++) {
          parts[i] = random.nextBoolean() ? shaped(random, 0) : randomBytes(random, random.nextInt(200));
        }
        yield parts;
      }
      case 6 -> new byte[][] {new byte[0]};
      case 7 -> new byte[][] {randomBytes(random, MAX_REQUEST_BYTES + 1 + random.nextInt(1_000))}; // too large
      default -> new byte[][] {("\"" + "\\".repeat(random.nextInt(50)) + "\"").getBytes(StandardCharsets.UTF_8)};
    };
  }

  private static byte[] shaped(SplittableRandom random, int shape) {
    String template = SHAPES[shape];
    int holes = template.split("%s", -1).length - 1;
    Object[] values = new Object[holes];
    for (int i = 0; i < holes; i++) {
      values[i] = i == 0 && template.startsWith("{\"type\":\"invoke\",\"id\":\"%s\"")
          ? "g" + random.nextLong() : VALUES[random.nextInt(VALUES.length)];
    }
    return String.format(Locale.ROOT, template, values).getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] randomBytes(SplittableRandom random, int n) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) random.nextInt(256);
    }
    return b;
  }

  private static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (var paths = Files.walk(root)) {
      for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
