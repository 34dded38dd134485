package org.apiary.drills;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apiary.ApiaryException;
import org.apiary.DatabaseException;
import org.apiary.FunctionFailedException;
import org.apiary.InvalidRequestException;
import org.apiary.OutcomeUnknownException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.GraphResult;
import org.apiary.client.InvocationRequest;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.DatabaseConfig;
import org.apiary.database.Rows;
import org.apiary.drills.exactlyonce.DrillApp;
import org.apiary.frontend.Registrar;

/**
 * The randomized exactly-once checker behind {@code apiary drill exactly-once}, after Jepsen: generate invocations
 * concurrently with faults, record what the clients saw, then check that history and the data against a model.
 *
 * <p><b>Setup.</b> An embedded database, two frontend processes with a short lease and a short retention, and the
 * {@link DrillApp} application, whose every write names its invocation. The network drill ({@link NetworkDrill}) runs
 * the same load and check against a cluster and frontends on hosts of their own ({@link #runAgainst}), with its own
 * faults instead of these.
 *
 * <p><b>Load.</b> Client threads invoke the drill graphs under their own IDs (a quarter of them the graphs of one
 * writing function, which a frontend may run as one transaction without an invocation log; the rest the graphs of
 * several functions), sometimes the same ID on both frontends at once, sometimes the same ID again with a different
 * argument (which must be refused), sometimes a resend after the answer. Each ID's history keeps every request, every
 * answer ({@code ok}, {@code failed}, {@code refused}, {@code unknown}) and every {@code result(id)} observation, with
 * times since the drill started.
 *
 * <p><b>Faults</b>, at random from the seed: SIGKILL of a frontend and a replacement on the same port (sometimes one
 * that halts right after a given function; if that is the writer of a one-function graph, half the time an
 * invocation of that graph is sent to it at once), SIGSTOP for longer than the lease then SIGCONT, at most once a
 * SIGSTOP for longer than the retention, of a replacement that stops itself between the two writers of a graph
 * (so that the other frontend finishes what the stopped one was running and retention deletes its records before it
 * resumes; the count of attempts retention's fence refused is shown), and
 * keys whose flaky writer fails switched on and off (all off at the end, so a re-run after a failure would succeed).
 *
 * <p><b>Queued work</b> ({@link QueuedWork}, issue 42): meanwhile one more client enqueues items on a limited queue
 * (some delayed, some resent) and on a queue whose items the drill's stub cancels while their external step calls
 * it, and a schedule ticks every second; their counts are added to the summary line and judged by their own oracle.
 *
 * <p><b>Check.</b> After the faults stop and recovery had its bounded time, every ID is resolved through
 * {@code result(id)} (earlier observations count, since retention deletes ended invocations) and the effects are read
 * straight from the table. The model is the drill's own: which steps each graph writes, in which order, and what the
 * value must be given the rows. Per ID: {@code stuck} (no final outcome), {@code duplicates} (a step's row more than
 * once), {@code lost} (a step that must have committed has no row), {@code disagreed} (a client's definite answer,
 * a later observation or the data contradicts the stored outcome, {@code result(id)} did not know an invocation that
 * had ended before retention could have deleted it, or a conflicting request was not refused). An ID that
 * {@code result(id)} never knew, with no row and no definite answer to any client, never reached a committed
 * transaction: it agrees. An ID a client got a definite answer for is judged against that answer when no stored
 * outcome was ever seen, so a lost outcome cannot hide a lost or duplicated write.
 */
final class ExactlyOnceDrill {
  /**
   * What the drill runs with.
   *
   * @param recoverySeconds how long, after the faults stop, invocations may take to reach a final outcome
   * @param skip faults left out, among {@link #FAULTS}
   */
  record Settings(long seed, int seconds, int clients, int keys, long leaseMs, long heartbeatMs, long retentionMs,
                  int recoverySeconds, Set<String> skip) {}

  /**
   * Faults that can be left out: SIGKILL, SIGSTOP, the SIGSTOP longer than the retention, failing keys, the
   * wrong-key-type graph.
   */
  static final List<String> FAULTS = List.of("kill", "stop", "longstop", "flaky", "badkey");
  /** What a frontend logs when retention's fence refuses an attempt it resumed. */
  private static final Pattern FENCED = Pattern.compile("refused by retention's fence");

  private static final Duration ATTEMPT_TIMEOUT = Duration.ofMillis(1000);
  private static final int MAX_ATTEMPTS = 6;
  /**
   * The shortest retention under which the drill's claims hold: longer than its clients wait for a call
   * ({@link #MAX_ATTEMPTS} attempts of {@link #ATTEMPT_TIMEOUT}), plus a second (its frontends allow no clock skew:
   * they share this machine's clock). With less, a copy of a request delivered late may find its outcome deleted.
   */
  static final long MIN_RETENTION_MS = MAX_ATTEMPTS * ATTEMPT_TIMEOUT.toMillis() + 1000;
  private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
  private static final int SHOWN_PER_CATEGORY = 3;
  /** The share of invocations that go to the graphs of one writing function. */
  private static final double SINGLE_SHARE = 0.25;
  private static final List<String> CRASH_AFTER = List.of(DrillApp.WRITE, DrillApp.FLAKY, DrillApp.FLAKY_FIRST,
      DrillApp.OBSERVE);
  /** The line a frontend started with --crash-after prints when it halts: the function, then the graph. */
  private static final Pattern HALTED = Pattern.compile("halting after function '([^']+)' in graph '([^']+)'");
  /** Slack for clocks and cleanup rounds when deciding whether retention may have deleted an ended invocation. */
  private static final long RETENTION_SLACK_MS = 1000;

  private final Settings settings;
  private final PrintStream out;
  private final long startNanos = System.nanoTime();
  private final Map<String, Invocation> invocations = Collections.synchronizedMap(new LinkedHashMap<>());
  private final List<String> faults = Collections.synchronizedList(new ArrayList<>());
  private final Map<Long, List<String>> flagHistory = Collections.synchronizedMap(new LinkedHashMap<>());
  private final DelayQueue<Due> unresolved = new DelayQueue<>();
  private final AtomicInteger kills = new AtomicInteger();
  private final AtomicInteger pauses = new AtomicInteger();
  private final AtomicInteger longPauses = new AtomicInteger();
  private final AtomicInteger fenced = new AtomicInteger();
  private final java.util.concurrent.atomic.AtomicLong longestPauseMs = new java.util.concurrent.atomic.AtomicLong();
  private final AtomicInteger crashAfterStarts = new AtomicInteger();
  private final AtomicInteger baits = new AtomicInteger();
  /** Per frontend slot: the function its current process halts after, if it was started with --crash-after. */
  private final AtomicReferenceArray<String> crashAfterOf = new AtomicReferenceArray<>(2);
  /** Halts of such processes, by {@code graph:function}. */
  private final Map<String, AtomicInteger> halts = Collections.synchronizedMap(new LinkedHashMap<>());
  private final AtomicInteger flips = new AtomicInteger();
  private final List<String> crashes = Collections.synchronizedList(new ArrayList<>());
  private final Map<String, AtomicInteger> modes = Collections.synchronizedMap(new LinkedHashMap<>());
  /** The drill's own frontend processes; {@code null} when it runs against frontends it does not own. */
  private AtomicReferenceArray<FrontendProcess> frontends;
  private String[] endpoints;
  /** Returns once faults injected from outside are healed ({@link #runAgainst}); a no-op otherwise. */
  private Runnable faultsOver = () -> { };

  ExactlyOnceDrill(Settings settings, PrintStream out) {
    this.settings = settings;
    this.out = out;
  }

  /** Runs the drill; 0 if every invocation agreed, 1 otherwise. */
  int run() throws Exception {
    out.println("-> seed " + settings.seed() + " (repeat this run with --seed " + settings.seed() + ")");
    try (ApiaryDatabase db = ApiaryDatabase.open(DatabaseConfig.embedded(2))) {
      out.println("-> embedded database on " + db.clientAddresses() + "; registering the drill application");
      Registrar.register(db, DrillApp.APP);
      List<String> options = List.of("--lease-ms", Long.toString(settings.leaseMs()),
          "--heartbeat-ms", Long.toString(settings.heartbeatMs()),
          "--retention-ms", Long.toString(settings.retentionMs()), "--cleanup-ms", "1000", "--clock-skew-ms", "0");
      CompletableFuture<FrontendProcess> first = CompletableFuture.supplyAsync(
          () -> FrontendProcess.start(db.clientAddresses(), options, START_TIMEOUT));
      CompletableFuture<FrontendProcess> second = CompletableFuture.supplyAsync(
          () -> FrontendProcess.start(db.clientAddresses(), options, START_TIMEOUT));
      frontends = new AtomicReferenceArray<>(2);
      try {
        frontends.set(0, await(first, START_TIMEOUT.plusSeconds(10)));
        frontends.set(1, await(second, START_TIMEOUT.plusSeconds(10)));
        endpoints = new String[] {frontends.get(0).endpoint(), frontends.get(1).endpoint()};
        out.println("-> frontends " + endpoints[0] + " and " + endpoints[1] + ": lease " + settings.leaseMs()
            + " ms, heartbeat " + settings.heartbeatMs() + " ms, retention " + settings.retentionMs() + " ms");
        try (QueuedWork queued = new QueuedWork(settings.seed(), out)) {
          return drive(db, queued);
        }
      } finally {
        closeIfAbandoned(first);
        closeIfAbandoned(second);
        for (int i = 0; i < 2; i++) {
          FrontendProcess f = frontends.get(i);
          if (f != null) {
            f.close();
          }
        }
      }
    }
  }

  /**
   * Runs the load and the check against a database and frontends someone else runs and injects faults into (the
   * network drill's hosts): no frontend of the drill's own, so none of its SIGKILL and SIGSTOP faults; failing keys
   * only if not skipped. {@code faultsOver} is called when the load has stopped and before any invocation is resolved:
   * it returns once the faults are healed. 0 if every invocation agreed, 1 otherwise.
   */
  int runAgainst(ApiaryDatabase db, List<String> frontendEndpoints, Runnable faultsOver) throws InterruptedException {
    if (frontendEndpoints.size() != 2) {
      throw new IllegalArgumentException("the drill's clients use two frontends, not " + frontendEndpoints);
    }
    out.println("-> seed " + settings.seed() + "; database " + db.clientAddresses() + ", frontends "
        + frontendEndpoints);
    endpoints = frontendEndpoints.toArray(String[]::new);
    this.faultsOver = faultsOver;
    // No queued work here: its stub server listens in this process, which the frontends' hosts cannot reach.
    return drive(db, null);
  }

  private static FrontendProcess await(CompletableFuture<FrontendProcess> f, Duration timeout) throws Exception {
    try {
      return f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof Exception cause ? cause : e;
    }
  }

  /** Closes a frontend whose start finished after the drill gave up on it. */
  private void closeIfAbandoned(CompletableFuture<FrontendProcess> f) {
    f.whenComplete((p, e) -> {
      if (p != null && p != frontends.get(0) && p != frontends.get(1)) {
        p.close();
      }
    });
  }

  private long now() {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
  }

  private void fault(String what) {
    String line = String.format("+%6d ms  %s", now(), what);
    faults.add(line);
    out.println("   " + line);
  }

  // ------------------------------------------------------------------------------------------------- the run

  /** The load, faults and check; {@code queued}, if not {@code null}, runs beside them and is checked too. */
  private int drive(ApiaryDatabase db, QueuedWork queued) throws InterruptedException {
    SplittableRandom master = new SplittableRandom(settings.seed());
    long loadStart = System.nanoTime();
    long stopAt = loadStart + Duration.ofSeconds(settings.seconds()).toNanos();
    AtomicBoolean stopResolver = new AtomicBoolean();
    List<Thread> workers = new ArrayList<>();
    for (int c = 0; c < settings.clients(); c++) {
      int client = c;
      SplittableRandom random = master.split();
      workers.add(new Thread(guarded(() -> worker(client, random, stopAt)), "drill-client-" + c));
    }
    SplittableRandom nemesisRandom = master.split();
    SplittableRandom flagRandom = master.split();
    Thread nemesis = new Thread(guarded(() -> nemesis(nemesisRandom, stopAt)), "drill-nemesis");
    Thread flipper = new Thread(guarded(() -> flipper(db, flagRandom, stopAt)), "drill-flags");
    Thread resolver = new Thread(guarded(() -> resolver(stopResolver)), "drill-resolver");
    SplittableRandom queuedRandom = master.split();
    if (queued != null) {
      workers.add(new Thread(guarded(() -> queued.load(endpoints, queuedRandom, stopAt)), "drill-queued"));
    }
    out.println("-> " + settings.clients() + " clients for " + settings.seconds() + " s over " + settings.keys()
        + " keys; faults" + (settings.skip().isEmpty() ? "" : " (skipping " + settings.skip() + ")") + ":");
    workers.forEach(Thread::start);
    if (frontends != null) {
      nemesis.start();
    }
    flipper.start();
    resolver.start();

    Duration callBound = ATTEMPT_TIMEOUT.multipliedBy(MAX_ATTEMPTS * 3L).plusSeconds(10);
    DrillThreads.joinAll(workers, Duration.ofSeconds(settings.seconds()).plus(callBound));
    DrillThreads.joinAll(List.of(flipper), Duration.ofSeconds(10));
    if (frontends != null) {
      DrillThreads.joinAll(List.of(nemesis), START_TIMEOUT.multipliedBy(2));
    }
    faultsOver.run();
    db.callAdmin("clearing failing keys", "@AdHoc", "DELETE FROM drill_failing");
    fault("every failing key cleared; faults stopped");
    ensureFrontendsUp();
    stopResolver.set(true);
    DrillThreads.joinAll(List.of(resolver), callBound);
    out.printf("-> load over at %.1f s: %d invocations; resolving every ID (at most %d s)%n", now() / 1e3,
        invocations.size(), settings.recoverySeconds());
    resolveAll();
    QueuedWork.Summary queuedSummary = queued == null ? null : queued.settleAndCheck(db, System.nanoTime()
        + Duration.ofSeconds(settings.recoverySeconds()).toNanos());
    Map<String, List<Effect>> effects = readEffects(db);
    return check(effects, queuedSummary);
  }

  /** A thread body whose failure is reported and fails the drill instead of vanishing. */
  private Runnable guarded(Runnable body) {
    return DrillThreads.guarded(body, crashes, out::println);
  }

  private void ensureFrontendsUp() {
    if (frontends == null) {
      return;
    }
    for (int i = 0; i < 2; i++) {
      FrontendProcess f = frontends.get(i);
      if (f.isPaused()) {
        f.resume();
        fault("SIGCONT frontend " + i + " (end of faults)");
      }
      if (!f.isAlive()) {
        replace(i, List.of(), "exited");
      }
    }
  }

  // ------------------------------------------------------------------------------------------------- clients

  private void worker(int c, SplittableRandom random, long stopAt) {
    ClientConfig all = ClientConfig.of(endpoints).withAttemptTimeout(ATTEMPT_TIMEOUT).withMaxAttempts(MAX_ATTEMPTS);
    try (ApiaryClient viaAll = ApiaryClient.connect(all);
         ApiaryClient via0 = ApiaryClient.connect(single(0));
         ApiaryClient via1 = ApiaryClient.connect(single(1))) {
      ApiaryClient[] via = {via0, via1};
      int n = 0;
      while (System.nanoTime() < stopAt) {
        String graph = pickGraph(random.nextDouble());
        String id = "s" + Long.toUnsignedString(settings.seed(), 36) + "-c" + c + "-" + n++;
        Invocation inv = new Invocation(id, graph, random.nextInt(settings.keys()));
        invocations.put(id, inv);
        double m = random.nextDouble();
        if (m < 0.55) {
          mode(inv, "plain");
          Outcome o = send(viaAll, "client(both)", inv, "a");
          if (!o.definite() && o.kind() != Kind.REFUSED && !graph.equals("drill_badkey")) {
            send(viaAll, "client(both), retrying the same ID", inv, "a");
          }
        } else if (m < 0.72) {
          mode(inv, "same ID on both frontends at once");
          CompletableFuture<GraphResult> f0 = sendAsync(via[0], inv, "a");
          CompletableFuture<GraphResult> f1 = sendAsync(via[1], inv, "a");
          Outcome o0 = answer(inv, "a", "frontend 0", f0);
          Outcome o1 = answer(inv, "a", "frontend 1", f1);
          if (!o0.definite() && !o1.definite()) {
            send(viaAll, "client(both), retrying the same ID", inv, "a");
          }
        } else if (m < 0.86) {
          mode(inv, "same ID, different request");
          CompletableFuture<GraphResult> fa = sendAsync(viaAll, inv, "a");
          sleep(random.nextInt(40));
          int j = random.nextInt(2);
          inv.conflictSent = true;
          send(via[j], "frontend " + j, inv, "b");
          answer(inv, "a", "client(both)", fa);
        } else {
          mode(inv, "resent after its answer");
          send(viaAll, "client(both)", inv, "a");
          int j = random.nextInt(2);
          send(via[j], "frontend " + j + " (resend)", inv, "a");
        }
        observe(viaAll, inv, "result(id) after the calls");
        if (!inv.hasFinal()) {
          unresolved.add(new Due(inv, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300)));
        }
      }
    }
  }

  /**
   * The graph of an invocation, from a uniform draw {@code g}: {@link #SINGLE_SHARE} of them one of the graphs of one
   * writing function, the rest the graphs of several functions in their usual mix (30% one writer, 44% two, 24% a
   * flaky writer, 2% the wrong key type).
   */
  private String pickGraph(double g) {
    if (g < SINGLE_SHARE) {
      return g < SINGLE_SHARE / 2 ? "drill_single" : "drill_single_flaky";
    }
    double rest = (g - SINGLE_SHARE) / (1 - SINGLE_SHARE);
    if (rest < 0.3) {
      return "drill_one";
    }
    if (rest < 0.74) {
      return "drill_two";
    }
    return rest >= 0.98 && !settings.skip().contains("badkey") ? "drill_badkey" : "drill_flaky";
  }

  private void mode(Invocation inv, String mode) {
    inv.mode = mode;
    modes.computeIfAbsent(mode, k -> new AtomicInteger()).incrementAndGet();
  }

  private ClientConfig single(int i) {
    return ClientConfig.of(endpoints[i]).withAttemptTimeout(ATTEMPT_TIMEOUT).withMaxAttempts(1);
  }

  private Outcome send(ApiaryClient client, String via, Invocation inv, String variant) {
    inv.event(now(), "send " + variant + " via " + via);
    Outcome o;
    try {
      o = Outcome.of(client.invoke(inv.request(variant)));
    } catch (RuntimeException e) {
      o = Outcome.of(e, false);
    }
    inv.answer(now(), variant, via, o);
    return o;
  }

  private CompletableFuture<GraphResult> sendAsync(ApiaryClient client, Invocation inv, String variant) {
    inv.event(now(), "send " + variant + " (async) via " + (client.config().frontends().size() > 1 ? "client(both)"
        : client.config().frontends().get(0)));
    return client.invokeAsync(inv.request(variant));
  }

  private Outcome answer(Invocation inv, String variant, String via, CompletableFuture<GraphResult> f) {
    Duration bound = ATTEMPT_TIMEOUT.multipliedBy(MAX_ATTEMPTS).plusSeconds(3);
    Outcome o;
    try {
      o = Outcome.of(f.get(bound.toMillis(), TimeUnit.MILLISECONDS));
    } catch (ExecutionException e) {
      o = Outcome.of(e.getCause(), false);
    } catch (TimeoutException e) {
      o = new Outcome(Kind.UNKNOWN, null, "the drill stopped waiting after " + bound.toMillis() + " ms");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      o = new Outcome(Kind.UNKNOWN, null, "interrupted");
    }
    inv.answer(now(), variant, via, o);
    return o;
  }

  private void observe(ApiaryClient client, Invocation inv, String who) {
    long asked = now();
    Outcome o;
    try {
      Optional<GraphResult> r = client.result(inv.id);
      o = r.map(Outcome::of).orElse(new Outcome(Kind.RUNNING, null, ""));
    } catch (RuntimeException e) {
      o = Outcome.of(e, true);
    }
    inv.observe(asked, now(), who, o);
  }

  /** Polls result(id) for invocations that had no final outcome yet, before retention could delete them. */
  private void resolver(AtomicBoolean stop) {
    ClientConfig all = ClientConfig.of(endpoints).withAttemptTimeout(ATTEMPT_TIMEOUT).withMaxAttempts(4);
    try (ApiaryClient client = ApiaryClient.connect(all)) {
      while (!stop.get()) {
        Due due = unresolved.poll(100, TimeUnit.MILLISECONDS);
        if (due == null) {
          continue;
        }
        observe(client, due.inv(), "resolver");
        if (!due.inv().hasFinal()) {
          unresolved.add(new Due(due.inv(), System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300)));
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // ------------------------------------------------------------------------------------------------- faults

  private void nemesis(SplittableRandom random, long stopAt) {
    while (true) {
      long wake = Math.min(stopAt, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(700 + random.nextInt(1500)));
      sleep(Math.max(0, TimeUnit.NANOSECONDS.toMillis(wake - System.nanoTime())));
      if (System.nanoTime() >= stopAt || Thread.currentThread().isInterrupted()) {
        return;
      }
      for (int i = 0; i < 2; i++) {
        if (!frontends.get(i).isAlive()) {
          replace(i, List.of(), "exited (it was started with --crash-after)");
        }
      }
      int i = random.nextInt(2);
      FrontendProcess victim = frontends.get(i);
      boolean kill = settings.skip().contains("stop") || random.nextDouble() < 0.4;
      if (kill && settings.skip().contains("kill")) {
        continue;
      }
      if (!victim.isAlive()) {
        continue; // a --crash-after replacement that just halted; replaced on the next round
      }
      if (kill) {
        victim.kill();
        kills.incrementAndGet();
        fault("SIGKILL frontend " + i + " (" + victim.id() + ")");
        sleep(random.nextLong(settings.leaseMs()));
        List<String> extra = List.of();
        String crashAfter = null;
        if (random.nextDouble() < 0.3) {
          crashAfter = CRASH_AFTER.get(random.nextInt(CRASH_AFTER.size()));
          extra = List.of("--crash-after", crashAfter);
          crashAfterStarts.incrementAndGet();
        }
        replace(i, extra, "killed");
        if (crashAfter != null && random.nextBoolean()) { // else the halt is left to the load, mostly multi-function
          baitSingle(i, crashAfter, random.nextInt(settings.keys()));
        }
      } else {
        // Long enough for the other frontend to take over (a lease and a heartbeat or two) and for retention to
        // delete what it finished (the retention and a cleanup round) before this one resumes.
        long longMs = settings.retentionMs() + 2 * settings.leaseMs() + 3_000;
        boolean longStop = !settings.skip().contains("longstop") && longPauses.get() == 0
            && random.nextDouble() < 0.3 && stopAt - System.nanoTime() > TimeUnit.MILLISECONDS.toNanos(longMs);
        if (longStop) {
          stopLong(i, longMs);
          continue;
        }
        long ms = settings.leaseMs() + 300 + random.nextLong(settings.leaseMs());
        longestPauseMs.accumulateAndGet(ms, Math::max);
        victim.pause();
        pauses.incrementAndGet();
        fault("SIGSTOP frontend " + i + " (" + victim.id() + ") for " + ms + " ms");
        sleep(ms);
        victim.resume();
        fault("SIGCONT frontend " + i);
      }
    }
  }

  /**
   * The long stop: replaces frontend {@code i} with one that stops itself (SIGSTOP) between the two writers of a graph,
   * mid-graph, as soon as the load reaches it, and keeps it stopped for {@code ms}: long enough for the other frontend
   * to take its invocation over and finish it, and for retention to delete the records, before it resumes into
   * retention's fence. If the load does not reach it in time, the process is stopped from outside wherever it is.
   */
  private void stopLong(int i, long ms) {
    // In drill_two the writer is followed by another recorded writer, which the resumed attempt would run next.
    replace(i, List.of("--stop-after", DrillApp.TWO.name() + ":" + DrillApp.WRITE), "replaced for the long stop");
    FrontendProcess victim = frontends.get(i);
    int fencedBefore = count(FENCED, victim.output());
    longestPauseMs.accumulateAndGet(ms, Math::max);
    longPauses.incrementAndGet();
    boolean stoppedItself = victim.awaitStoppedItself(Duration.ofSeconds(10));
    if (stoppedItself) {
      fault("frontend " + i + " (" + victim.id() + ") stopped itself after '" + DrillApp.WRITE + "' returned in "
          + DrillApp.TWO.name() + ", before its second writer; held for " + ms + " ms, longer than the retention");
    } else {
      victim.pause();
      fault("SIGSTOP frontend " + i + " (" + victim.id() + ") for " + ms + " ms, longer than the retention (the load "
          + "did not reach it mid-graph)");
    }
    sleep(ms);
    victim.resume();
    fault("SIGCONT frontend " + i);
    sleep(1_000); // what it resumes runs into the fence at once
    int refused = count(FENCED, victim.output()) - fencedBefore;
    fenced.addAndGet(refused);
    fault("frontend " + i + " resumed; retention's fence refused " + refused + " of its attempts");
    if (!stoppedItself) { // its fault is still armed: it would stop itself later, with no one to continue it
      replace(i, List.of(), "replaced, its stop-after fault unused");
    }
  }

  private static int count(Pattern pattern, String text) {
    Matcher m = pattern.matcher(text);
    int n = 0;
    while (m.find()) {
      n++;
    }
    return n;
  }

  /**
   * Right after a replacement that halts after the writer of a one-function graph started, sends it an invocation of
   * that graph (then retries through both frontends, as a client would), so that the halt can hit a graph of one
   * function and not only the multi-function graphs that make most of the load. Checked like any other invocation.
   */
  private void baitSingle(int i, String function, long key) {
    String graph = function.equals(DrillApp.WRITE) ? "drill_single"
        : function.equals(DrillApp.FLAKY_FIRST) ? "drill_single_flaky" : null;
    if (graph == null) {
      return;
    }
    String id = "s" + Long.toUnsignedString(settings.seed(), 36) + "-bait-" + baits.getAndIncrement();
    Invocation inv = new Invocation(id, graph, key);
    invocations.put(id, inv);
    mode(inv, "sent to a --crash-after replacement");
    ClientConfig all = ClientConfig.of(endpoints).withAttemptTimeout(ATTEMPT_TIMEOUT).withMaxAttempts(MAX_ATTEMPTS);
    try (ApiaryClient direct = ApiaryClient.connect(single(i)); ApiaryClient viaAll = ApiaryClient.connect(all)) {
      Outcome o = send(direct, "frontend " + i + " (--crash-after " + function + ")", inv, "a");
      if (!o.definite() && o.kind() != Kind.REFUSED) {
        send(viaAll, "client(both), retrying the same ID", inv, "a");
      }
      observe(viaAll, inv, "result(id) after the calls");
    }
    if (!inv.hasFinal()) {
      unresolved.add(new Due(inv, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300)));
    }
  }

  private void replace(int i, List<String> extra, String why) {
    countHalt(i);
    FrontendProcess next = frontends.get(i).restart(extra, START_TIMEOUT);
    frontends.set(i, next);
    crashAfterOf.set(i, extra.contains("--crash-after") ? extra.get(extra.indexOf("--crash-after") + 1) : null);
    fault("frontend " + i + " " + why + "; replacement " + next.id() + " on the same port"
        + (extra.isEmpty() ? "" : " with " + String.join(" ", extra)));
  }

  /**
   * Counts the halt of a frontend started with --crash-after that exited on its own, by the graph and function it
   * halted after (from the line it printed), so the summary shows which graphs the fault reached.
   */
  private void countHalt(int i) {
    FrontendProcess f = frontends.get(i);
    if (crashAfterOf.get(i) == null || f.isAlive()) {
      return;
    }
    Matcher m = HALTED.matcher(f.output());
    if (m.find()) {
      halts.computeIfAbsent(m.group(2) + ":" + m.group(1), k -> new AtomicInteger()).incrementAndGet();
    }
  }

  private void flipper(ApiaryDatabase db, SplittableRandom random, long stopAt) {
    Set<Long> failing = new LinkedHashSet<>();
    boolean on = !settings.skip().contains("flaky");
    while (on && System.nanoTime() < stopAt && !Thread.currentThread().isInterrupted()) {
      sleep(150 + random.nextInt(450));
      long key = random.nextInt(settings.keys());
      if (!failing.contains(key) && failing.size() >= Math.max(1, settings.keys() / 3)) {
        key = failing.iterator().next();
      }
      if (failing.remove(key)) {
        db.callAdmin("clearing a failing key", "@AdHoc", "DELETE FROM drill_failing WHERE k = " + key);
        flag(key, "cleared");
      } else {
        db.callAdmin("marking a key failing", "@AdHoc", "UPSERT INTO drill_failing (k) VALUES (" + key + ")");
        failing.add(key);
        flag(key, "set");
      }
      flips.incrementAndGet();
    }
  }

  private void flag(long key, String what) {
    flagHistory.computeIfAbsent(key, k -> Collections.synchronizedList(new ArrayList<>()))
        .add("+" + now() + " ms " + what);
  }

  // ------------------------------------------------------------------------------------------------- the check

  /** After the faults: polls every ID without a final outcome until it has one or the recovery bound passes. */
  private void resolveAll() {
    long deadline = System.nanoTime() + Duration.ofSeconds(settings.recoverySeconds()).toNanos();
    List<Invocation> all;
    synchronized (invocations) {
      all = new ArrayList<>(invocations.values());
    }
    ClientConfig config = ClientConfig.of(endpoints).withAttemptTimeout(ATTEMPT_TIMEOUT).withMaxAttempts(4);
    try (ApiaryClient client = ApiaryClient.connect(config)) {
      for (Invocation inv : all) {
        if (inv.hasFinal()) {
          observe(client, inv, "final check"); // a stored outcome must not change (it may be gone by retention)
        }
      }
      List<Invocation> open = all.stream().filter(i -> !i.hasFinal()).collect(Collectors.toList());
      Map<Invocation, Integer> notFound = new LinkedHashMap<>();
      while (!open.isEmpty() && System.nanoTime() < deadline) {
        List<Invocation> still = new ArrayList<>();
        for (Invocation inv : open) {
          observe(client, inv, "final check");
          Outcome last = inv.lastObservation();
          boolean gone = last != null && last.kind() == Kind.NOT_FOUND
              && notFound.merge(inv, 1, Integer::sum) >= 3; // never arrived: asked three times to be sure
          if (!inv.hasFinal() && !gone) {
            still.add(inv);
          }
        }
        open = still;
        if (!open.isEmpty()) {
          sleep(300);
        }
      }
    }
  }

  private static Map<String, List<Effect>> readEffects(ApiaryDatabase db) {
    Rows t = db.query("reading the drill's effects",
        "SELECT invocation, step, payload, token, upstream, k FROM drill_effects ORDER BY invocation, token");
    Map<String, List<Effect>> byId = new LinkedHashMap<>();
    for (Rows.Row r : t) {
      Effect e = new Effect(r.getString(0), r.getString(1), r.getString(2), r.getLong(3), r.getLong(4), r.getLong(5));
      byId.computeIfAbsent(e.invocation(), k -> new ArrayList<>()).add(e);
    }
    return byId;
  }

  private int check(Map<String, List<Effect>> effects, QueuedWork.Summary queued) {
    Map<String, List<Invocation>> bad = new LinkedHashMap<>();
    for (String category : List.of("stuck", "duplicates", "lost", "disagreed")) {
      bad.put(category, new ArrayList<>());
    }
    int agreed = 0;
    int neverArrived = 0;
    Map<String, Integer> stored = new LinkedHashMap<>();
    List<Invocation> all;
    synchronized (invocations) {
      all = new ArrayList<>(invocations.values());
    }
    for (Invocation inv : all) {
      List<Effect> rows = effects.getOrDefault(inv.id, List.of());
      Outcome s = inv.firstFinal();
      stored.merge(s == null ? (inv.lastObservation() == null ? "none" : inv.lastObservation().kind().name())
          : s.kind().name(), 1, Integer::sum);
      Map<String, List<String>> problems = Verdict.of(inv, rows, knownForMs());
      inv.problems = problems;
      problems.keySet().forEach(category -> bad.get(category).add(inv));
      if (problems.isEmpty()) {
        agreed++;
        if (s == null) {
          neverArrived++;
        }
      }
    }
    Set<String> stray = new LinkedHashSet<>(effects.keySet());
    stray.removeAll(invocations.keySet());

    out.println("-> invocations by mode: " + modes + "; by graph: " + all.stream().collect(Collectors.groupingBy(
        i -> i.graph, LinkedHashMap::new, Collectors.counting())));
    out.println("-> stored outcomes (first final result(id)): " + stored + "; agreed without ever arriving: "
        + neverArrived);
    if (frontends != null) { // else the faults were someone else's, who reports them
      out.println("-> faults: " + kills + " SIGKILL, " + pauses + " SIGSTOP longer than the lease, " + longPauses
          + " SIGSTOP longer than the retention (attempts refused by retention's fence on resuming: " + fenced
          + "), " + crashAfterStarts + " replacements with --crash-after (halted after " + halts + "), " + flips
          + " failing-key flips");
    }
    Set<Invocation> shown = new LinkedHashSet<>();
    for (Map.Entry<String, List<Invocation>> e : bad.entrySet()) {
      List<Invocation> list = e.getValue();
      if (list.isEmpty()) {
        continue;
      }
      Map<String, Long> byGraph = list.stream().collect(Collectors.groupingBy(i -> i.graph, LinkedHashMap::new,
          Collectors.counting()));
      Map<String, Long> byMode = list.stream().collect(Collectors.groupingBy(i -> i.mode, LinkedHashMap::new,
          Collectors.counting()));
      out.println();
      out.println("== " + e.getKey() + ": " + list.size() + " invocation(s), by graph " + byGraph + ", by mode "
          + byMode + "; IDs " + list.stream().limit(10).map(i -> i.id).collect(Collectors.joining(" "))
          + (list.size() > 10 ? " ..." : ""));
      int n = 0;
      for (Invocation inv : list) {
        if (n == SHOWN_PER_CATEGORY) {
          break;
        }
        if (shown.add(inv)) {
          print(inv, effects.getOrDefault(inv.id, List.of()));
          n++;
        }
      }
    }
    if (!stray.isEmpty()) {
      out.println("== effects of IDs the drill never sent: " + stray);
    }
    if (bad.values().stream().anyMatch(l -> !l.isEmpty()) || !stray.isEmpty()) {
      out.println();
      out.println("-> fault timeline:");
      faults.forEach(f -> out.println("   " + f));
    }
    int disagreed = bad.get("disagreed").size() + stray.size();
    int duplicates = bad.get("duplicates").size();
    int lost = bad.get("lost").size();
    int stuck = bad.get("stuck").size();
    out.printf("drill exactly-once: invocations=%d agreed=%d duplicates=%d lost=%d stuck=%d disagreed=%d%s%n",
        all.size(), agreed, duplicates, lost, stuck, disagreed, queued == null ? "" : queued.line());
    if (!crashes.isEmpty()) {
      out.println("-> the drill itself failed, so this run proves nothing: " + crashes);
    }
    boolean ok = duplicates == 0 && lost == 0 && stuck == 0 && disagreed == 0 && agreed == all.size()
        && !all.isEmpty() && crashes.isEmpty() && (queued == null || queued.ok());
    return ok ? 0 : 1;
  }

  /**
   * How long after an invocation was seen to have ended {@code result(id)} must still know it: the retention, less
   * the longest a paused frontend can hold back an answer it already had (the longest SIGSTOP, but no longer than a
   * client waits for a call: a later answer finds nobody listening) and some slack. 0 if the settings leave no such
   * time, and then the drill does not check it.
   */
  private long knownForMs() {
    long longestPause = Math.max(2 * settings.leaseMs() + 300, longestPauseMs.get());
    long holdBack = Math.min(longestPause, MAX_ATTEMPTS * ATTEMPT_TIMEOUT.toMillis());
    return Math.max(0, settings.retentionMs() - holdBack - RETENTION_SLACK_MS);
  }

  private void print(Invocation inv, List<Effect> rows) {
    out.println("  " + inv.id + "  graph " + inv.graph + ", key " + inv.key + ", " + inv.mode);
    inv.problems.forEach((category, reasons) -> reasons.forEach(r -> out.println("    ! " + category + ": " + r)));
    synchronized (inv) {
      inv.events.forEach(ev -> out.println("    " + ev));
    }
    if (rows.isEmpty()) {
      out.println("    effects: none");
    }
    rows.forEach(r -> out.println("    effect: step " + r.step() + " token " + r.token() + " upstream " + r.upstream()
        + " payload " + r.payload()));
    List<String> flags = flagHistory.get(inv.key);
    out.println("    key " + inv.key + " failing flag: " + (flags == null ? "never set" : flags));
  }

  // ------------------------------------------------------------------------------------------------- the model

  /** What a client or {@code result(id)} saw. */
  enum Kind {
    OK, FAILED, ERROR, REFUSED, NOT_FOUND, RUNNING, UNKNOWN
  }

  /**
   * One answer.
   *
   * @param function the failed function, for {@link Kind#FAILED}
   * @param detail the value for {@link Kind#OK}, the error otherwise
   */
  record Outcome(Kind kind, String function, String detail) {
    /** What a frontend's refusal of result(id) says when it knows no invocation with that ID. */
    static final String UNKNOWN_ID = "no invocation with ID ";

    static Outcome of(GraphResult r) {
      return new Outcome(Kind.OK, null, r.values(JsonNode.class).stream().map(Outcome::text)
          .collect(Collectors.joining(", ")));
    }

    private static String text(JsonNode value) {
      return value != null && value.isTextual() ? value.textValue() : String.valueOf(value);
    }

    /**
     * An exception from a call; {@code lookup} for result(id), where only "no invocation with ID ... is known" means
     * an unknown ID (any other refusal of a lookup is no answer about the invocation).
     */
    static Outcome of(Throwable e, boolean lookup) {
      Throwable t = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
      if (t instanceof FunctionFailedException f) {
        return new Outcome(Kind.FAILED, f.functionName(), f.errorType() + ": " + f.errorMessage());
      }
      if (t instanceof InvalidRequestException) {
        boolean unknown = lookup && t.getMessage() != null && t.getMessage().contains(UNKNOWN_ID);
        return new Outcome(unknown ? Kind.NOT_FOUND : Kind.REFUSED, null, t.getMessage());
      }
      if (t instanceof org.apiary.InvocationFailedException || t instanceof org.apiary.InvocationCancelledException) {
        // The invocation ended with that error (its stored outcome).
        return new Outcome(Kind.ERROR, null, t.getMessage());
      }
      if (t instanceof OutcomeUnknownException || t instanceof DatabaseException || t instanceof ApiaryException) {
        return new Outcome(Kind.UNKNOWN, null, t.getClass().getSimpleName() + ": " + t.getMessage());
      }
      return new Outcome(Kind.UNKNOWN, null, t.toString());
    }

    /** A final outcome: the invocation ended with it. */
    boolean definite() {
      return kind == Kind.OK || kind == Kind.FAILED || kind == Kind.ERROR;
    }

    @Override
    public String toString() {
      String d = detail == null ? "" : detail.length() > 200 ? detail.substring(0, 200) + "..." : detail;
      return switch (kind) {
        case OK -> "ok(" + d + ")";
        case FAILED -> "failed(" + function + ": " + d + ")";
        case RUNNING -> "running";
        default -> kind.name().toLowerCase() + "(" + d + ")";
      };
    }
  }

  /** One row of {@code drill_effects}. */
  record Effect(String invocation, String step, String payload, long token, long upstream, long key) {}

  /** An answer the client got for one variant of the request, {@code at} ms into the drill. */
  record Answer(long at, String variant, String via, Outcome outcome) {}

  /** A {@code result(id)} answer: asked {@code asked} ms into the drill, answered {@code answered} ms into it. */
  record Observation(long asked, long answered, Outcome outcome) {}

  /** The client-side history of one invocation ID. */
  static final class Invocation {
    final String id;
    final String graph;
    final long key;
    volatile String mode = "";
    volatile boolean conflictSent;
    final List<String> events = new ArrayList<>();
    final List<Answer> answers = new ArrayList<>();
    final List<Observation> observations = new ArrayList<>();
    Map<String, List<String>> problems = Map.of();

    Invocation(String id, String graph, long key) {
      this.id = id;
      this.graph = graph;
      this.key = key;
    }

    String payload(String variant) {
      return id + "|" + variant;
    }

    InvocationRequest request(String variant) {
      return InvocationRequest.of(graph, key, payload(variant)).withId(id);
    }

    synchronized void event(long at, String what) {
      events.add(String.format("+%6d ms  %s", at, what));
    }

    synchronized void answer(long at, String variant, String via, Outcome o) {
      answers.add(new Answer(at, variant, via, o));
      event(at, variant + " via " + via + " answered " + o);
    }

    synchronized void observe(long asked, long at, String who, Outcome o) {
      Outcome previous = lastObservation();
      observations.add(new Observation(asked, at, o));
      if (previous == null || !previous.equals(o)) {
        event(at, who + ": result(id) = " + o);
      }
    }

    synchronized Outcome lastObservation() {
      return observations.isEmpty() ? null : observations.get(observations.size() - 1).outcome();
    }

    synchronized Outcome firstFinal() {
      return observations.stream().map(Observation::outcome).filter(Outcome::definite).findFirst().orElse(null);
    }

    synchronized boolean hasFinal() {
      return firstFinal() != null;
    }

    synchronized List<Answer> answers() {
      return List.copyOf(answers);
    }

    synchronized List<Outcome> observations() {
      return observations.stream().map(Observation::outcome).toList();
    }

    synchronized List<Observation> timedObservations() {
      return List.copyOf(observations);
    }
  }

  /**
   * The drill's model of one invocation: what its stored outcome (or, if none was ever seen, the definite answer a
   * client got) implies for the data and the answers.
   */
  static final class Verdict {
    private final Map<String, List<String>> problems = new LinkedHashMap<>();
    private final long knownForMs;

    private Verdict(long knownForMs) {
      this.knownForMs = knownForMs;
    }

    private void add(String category, String reason) {
      problems.computeIfAbsent(category, k -> new ArrayList<>()).add(reason);
    }

    /**
     * The problems of one invocation, by category.
     *
     * @param knownForMs how long after it was seen to have ended {@code result(id)} must still know it; 0: unchecked
     */
    static Map<String, List<String>> of(Invocation inv, List<Effect> rows, long knownForMs) {
      Verdict v = new Verdict(knownForMs);
      v.judge(inv, rows);
      return v.problems;
    }

    private void judge(Invocation inv, List<Effect> rows) {
      List<Answer> answers = inv.answers();
      Outcome stored = inv.firstFinal();
      String variant = acceptedVariant(inv, answers, rows, stored);
      String payload = inv.payload(variant);

      // A conflicting request (the other variant) must be refused, and must leave nothing.
      for (Answer a : answers) {
        if (!a.variant().equals(variant) && a.outcome().definite()) {
          add("disagreed", "a different request under the same ID (variant " + a.variant() + ", via " + a.via()
              + ") was not refused: " + a.outcome());
        }
      }
      for (Effect e : rows) {
        if (!e.payload().equals(payload)) {
          add("disagreed", "step " + e.step() + " wrote payload " + e.payload() + ", but the accepted request is "
              + payload);
        }
      }
      for (Outcome o : inv.observations()) {
        if (stored != null && o.definite() && !o.equals(stored)) {
          add("disagreed", "the stored outcome changed from " + stored + " to " + o);
        }
      }
      checkKnownAfterEnd(inv, answers);

      List<String> steps = DrillApp.writers(inv.graph);
      Map<String, List<Effect>> byStep = new LinkedHashMap<>();
      steps.forEach(s -> byStep.put(s, new ArrayList<>()));
      for (Effect e : rows) {
        byStep.computeIfAbsent(e.step(), k -> new ArrayList<>()).add(e);
      }
      for (Map.Entry<String, List<Effect>> e : byStep.entrySet()) {
        if (e.getValue().size() > 1) {
          add("duplicates", "step " + e.getKey() + " took effect " + e.getValue().size() + " times");
        }
      }

      Outcome outcome = stored;
      String basis = "stored outcome ";
      if (stored == null) {
        checkNeverArrived(inv, answers, rows);
        outcome = toldOutcome(answers, variant);
        if (outcome == null) {
          return; // never arrived (or stuck, reported above): no outcome to hold the data to
        }
        basis = "outcome told to the client (none stored was seen) ";
      }
      judgeEffects(inv, payload, steps, byStep, outcome, basis);

      for (Answer a : answers) {
        if (!a.variant().equals(variant)) {
          continue;
        }
        if (a.outcome().definite() && !a.outcome().equals(outcome)) {
          add("disagreed", "the client (via " + a.via() + ") was told " + a.outcome() + " but the " + basis
              + "is " + outcome);
        }
        if (a.outcome().kind() == Kind.REFUSED) {
          add("disagreed", "the accepted request (via " + a.via() + ") was refused: " + a.outcome());
        }
      }
    }

    /**
     * Without a stored outcome, the invocation is fine only if it never reached a committed transaction: Apiary does
     * not know its ID, it left no row, and no client was told a definite outcome. Anything else is stuck.
     */
    private void checkNeverArrived(Invocation inv, List<Answer> answers, List<Effect> rows) {
      Outcome last = inv.lastObservation();
      boolean toldDefinite = answers.stream().anyMatch(a -> a.outcome().definite());
      if (last == null || last.kind() != Kind.NOT_FOUND || !rows.isEmpty() || toldDefinite) {
        add("stuck", "no final outcome after recovery; last result(id) = " + last + ", " + rows.size()
            + " effect row(s), client " + (toldDefinite ? "was told a definite outcome" : "had no definite answer"));
      }
    }

    /** The first definite answer a client got for the accepted request, or null. */
    private static Outcome toldOutcome(List<Answer> answers, String variant) {
      return answers.stream().filter(a -> a.variant().equals(variant) && a.outcome().definite())
          .map(Answer::outcome).findFirst().orElse(null);
    }

    /**
     * Once an invocation was seen to have ended (a definite answer or {@code result(id)}), {@code result(id)} must
     * know it until retention may have deleted it: "no invocation with this ID is known" before then would let a
     * resend run it again.
     */
    private void checkKnownAfterEnd(Invocation inv, List<Answer> answers) {
      if (knownForMs <= 0) {
        return;
      }
      List<Observation> seen = inv.timedObservations();
      long endedAt = Math.min(
          answers.stream().filter(a -> a.outcome().definite()).mapToLong(Answer::at).min().orElse(Long.MAX_VALUE),
          seen.stream().filter(o -> o.outcome().definite()).mapToLong(Observation::answered).min()
              .orElse(Long.MAX_VALUE));
      for (Observation o : seen) {
        long after = o.asked() - endedAt;
        if (o.outcome().kind() == Kind.NOT_FOUND && after >= 0 && after < knownForMs) {
          add("disagreed", "result(id) asked at +" + o.asked() + " ms said " + o.outcome() + ", " + after
              + " ms after the invocation was seen to have ended (retention may delete it only after " + knownForMs
              + " ms)");
          return;
        }
      }
    }

    /** What an outcome implies for the effect rows of the accepted request, and for the value it returned. */
    private void judgeEffects(Invocation inv, String payload, List<String> steps, Map<String, List<Effect>> byStep,
                              Outcome outcome, String basis) {
      boolean badKey = inv.graph.equals("drill_badkey");
      if (badKey && outcome.kind() == Kind.OK) {
        add("disagreed", basis + outcome + ", but observe can never receive write_badkey's output");
      }
      int mustHaveRun = steps.size();
      if (outcome.kind() == Kind.ERROR && !badKey) {
        mustHaveRun = 0; // some error, at some step: nothing the model can require, beyond "no duplicates" above
      } else if (outcome.kind() == Kind.FAILED) {
        int failedAt = steps.indexOf(outcome.function());
        mustHaveRun = failedAt < 0 ? steps.size() : failedAt;
        for (int i = mustHaveRun; i < steps.size(); i++) {
          if (!byStep.get(steps.get(i)).isEmpty()) {
            add("disagreed", basis + outcome + ", yet step " + steps.get(i) + " took effect");
          }
        }
      }
      for (int i = 0; i < mustHaveRun; i++) {
        if (byStep.get(steps.get(i)).isEmpty()) {
          add("lost", basis + outcome + ", yet step " + steps.get(i) + " has no effect");
        }
      }
      boolean exactlyOnce = steps.subList(0, mustHaveRun).stream().allMatch(s -> byStep.get(s).size() == 1);
      if (!exactlyOnce) {
        return;
      }
      for (int i = 1; i < mustHaveRun; i++) {
        Effect before = byStep.get(steps.get(i - 1)).get(0);
        Effect after = byStep.get(steps.get(i)).get(0);
        if (after.upstream() != before.token()) {
          add("disagreed", "step " + after.step() + " received token " + after.upstream() + " from "
              + before.step() + ", whose effect has token " + before.token()
              + " (a replay returned something else than the run that wrote)");
        }
      }
      if (outcome.kind() == Kind.OK && mustHaveRun == steps.size() && !badKey) {
        String expected = expectedValue(inv.graph, payload, steps, byStep);
        if (!expected.equals(outcome.detail())) {
          add("disagreed", basis + "value '" + outcome.detail() + "' but the data implies '" + expected + "'");
        }
      }
    }

    /**
     * The value a graph returns given its rows: the payload, each writer's {@code ;step=token} in order, then
     * {@code |seen=<rows>} if the graph ends in {@code observe}.
     */
    static String expectedValue(String graph, String payload, List<String> steps, Map<String, List<Effect>> byStep) {
      StringBuilder expected = new StringBuilder(payload);
      for (String s : steps) {
        expected.append(';').append(s).append('=').append(byStep.get(s).get(0).token());
      }
      if (DrillApp.observes(graph)) {
        expected.append("|seen=").append(steps.size());
      }
      return expected.toString();
    }

    /** Which variant of the request the invocation is, judged from the client's answers, then the data. */
    private static String acceptedVariant(Invocation inv, List<Answer> answers, List<Effect> rows, Outcome stored) {
      Set<String> definite = answers.stream().filter(a -> a.outcome().definite()).map(Answer::variant)
          .collect(Collectors.toCollection(LinkedHashSet::new));
      if (definite.size() == 1) {
        return definite.iterator().next();
      }
      if (definite.isEmpty()) {
        Set<String> written = rows.stream().map(e -> e.payload().substring(e.payload().lastIndexOf('|') + 1))
            .collect(Collectors.toCollection(LinkedHashSet::new));
        if (written.size() == 1) {
          return written.iterator().next();
        }
        if (stored != null && stored.kind() == Kind.OK && stored.detail().startsWith(inv.payload("b") + ";")) {
          return "b";
        }
        boolean aRefused = answers.stream().anyMatch(a -> a.variant().equals("a")
            && a.outcome().kind() == Kind.REFUSED);
        boolean bRefused = answers.stream().anyMatch(a -> a.variant().equals("b")
            && a.outcome().kind() == Kind.REFUSED);
        if (inv.conflictSent && aRefused && !bRefused) {
          return "b";
        }
      }
      return "a";
    }
  }

  /** An invocation to ask about again, not before {@code dueNanos}. */
  private record Due(Invocation inv, long dueNanos) implements Delayed {
    @Override
    public long getDelay(TimeUnit unit) {
      return unit.convert(dueNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
    }

    @Override
    public int compareTo(Delayed o) {
      return Long.compare(dueNanos, ((Due) o).dueNanos);
    }
  }
}
