package org.apiary.drills;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apiary.InvalidRequestException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.client.InvocationRequest;
import org.apiary.client.InvocationStatus;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.Rows;
import org.apiary.drills.exactlyonce.DrillApp;
import org.apiary.drills.exactlyonce.QueuedCall;

/**
 * The exactly-once drill's queued, scheduled, delayed, cancelled and external-step work (issue 42, item 6), run beside
 * its invocations under the same frontend kills and pauses. It owns a stub service the external step calls, which
 * counts every call per item and idempotency key; its oracle reads only what clients were told, the stub's counts
 * and the drill application's own rows ({@code drill_queued_effects}, {@code drill_queue_state},
 * {@code drill_ticks}), never Apiary's tables:
 *
 * <ul>
 *   <li><b>every enqueued item runs once</b>: an item whose enqueue was acknowledged has one {@code enter} and one
 *       {@code leave} row (not cancelled); no item has two of either;</li>
 *   <li><b>the queue's limit is never exceeded</b>: the high-water mark of the running count the items' first and
 *       last functions keep is at most the queue's concurrency;</li>
 *   <li><b>a delayed item does not start early</b>: its {@code enter} time is not before its send time plus its
 *       delay;</li>
 *   <li><b>every tick once</b>: the every-second schedule's ticks, between its first and its last but five, each
 *       have exactly one row;</li>
 *   <li><b>no function starts after a cancel is stored</b>: the stub cancels an item of the cancellable queue while
 *       its external step's call waits, and answers only after the cancel's answer; an item a client was told is
 *       cancelled must have no {@code leave} row; an item cancelled while it waits (delayed 2 s) no row at all;</li>
 *   <li><b>no external step is called again once it returned</b>: no call of an item starts at the stub after its
 *       last function ran (which is after the step's kept answer was recorded) unless it is the call whose answer was
 *       kept; other calls (cut off mid-flight, or concurrent attempts) are counted as {@code recalled_in_flight}; and
 *       every call of an item carries the same idempotency key.</li>
 * </ul>
 */
final class QueuedWork implements AutoCloseable {
  /** The summary the drill prints and judges. */
  record Summary(int queued, int once, int duplicates, int lost, int delayed, int early, long high, int limit,
                 int ticks, int tickDuplicates, int tickGaps, int cancelled, int startedAfterCancel, int calls,
                 int recalledAfterReturn, int recalledInFlight, List<String> problems) {
    boolean ok() {
      return duplicates == 0 && lost == 0 && early == 0 && high <= limit && tickDuplicates == 0 && tickGaps == 0
          && startedAfterCancel == 0 && recalledAfterReturn == 0;
    }

    String line() {
      return String.format(" queued=%d queued_once=%d queued_duplicates=%d queued_lost=%d delayed=%d delayed_early=%d"
          + " queue_high=%d queue_limit=%d ticks=%d tick_duplicates=%d tick_gaps=%d cancelled=%d"
          + " started_after_cancel=%d external_calls=%d recalled_after_return=%d recalled_in_flight=%d", queued, once,
          duplicates, lost, delayed, early, high, limit, ticks, tickDuplicates, tickGaps, cancelled, startedAfterCancel,
          calls, recalledAfterReturn, recalledInFlight);
    }
  }

  /** One item the drill put on a queue: what its client was told. */
  private static final class Item {
    final String name;
    final boolean cancel;
    /** Cancelled while it waits (delayed), not while its step runs. */
    final boolean cancelWaiting;
    final long delayMs;
    final long sentAtMillis;
    final long holdMs;
    volatile String invocation;
    volatile boolean acknowledged;
    volatile String cancelAnswer;

    Item(String name, boolean cancel, boolean cancelWaiting, long delayMs, long sentAtMillis, long holdMs) {
      this.name = name;
      this.cancelWaiting = cancelWaiting;
      this.holdMs = holdMs;
      this.cancel = cancel;
      this.delayMs = delayMs;
      this.sentAtMillis = sentAtMillis;
    }
  }

  /** One call the stub received. */
  private static final class Call {
    final String key;
    final int number;
    final long startedMs;
    /** The step's attempt within its execution, as the step sent it: a retry after a failed attempt is 2 or more. */
    final String attempt;
    volatile long answeredMs = -1;

    Call(String key, int number, long startedMs, String attempt) {
      this.key = key;
      this.number = number;
      this.startedMs = startedMs;
      this.attempt = attempt;
    }

    String key() {
      return key;
    }

    @Override
    public String toString() {
      return "call " + number + " (attempt " + attempt + ") [" + startedMs + ", " + (answeredMs < 0 ? "unanswered"
          : answeredMs + "") + "] ms";
    }
  }

  private static final Duration ATTEMPT_TIMEOUT = Duration.ofMillis(1000);
  /** Ticks this close to the last one may still be running when the rows are read. */
  private static final int TICK_TAIL_SECONDS = 5;

  private final String tag;
  private final java.io.PrintStream out;
  private final Map<String, Item> items = Collections.synchronizedMap(new LinkedHashMap<>());
  private final Map<String, List<Call>> calls = Collections.synchronizedMap(new LinkedHashMap<>());
  private final HttpServer stub;
  private final ExecutorService stubThreads = Executors.newFixedThreadPool(8);
  private final String url;
  private volatile ApiaryClient canceller;
  private final long startMillis = System.currentTimeMillis();

  QueuedWork(long seed, java.io.PrintStream out) throws IOException {
    this.tag = Long.toUnsignedString(seed, 36);
    this.out = out;
    stub = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    stub.setExecutor(stubThreads);
    stub.createContext("/call", exchange -> {
      try {
        String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");
        String item = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        Call call;
        synchronized (calls) {
          List<Call> list = calls.computeIfAbsent(item, k -> new ArrayList<>());
          call = new Call(key, list.size() + 1, System.currentTimeMillis() - startMillis,
              exchange.getRequestHeaders().getFirst(QueuedCall.ATTEMPT_HEADER));
          list.add(call);
        }
        int number = call.number;
        Item it = items.get(item);
        if (it != null && it.cancel && !it.cancelWaiting && it.cancelAnswer == null) {
          cancel(it); // answered only once the cancel's answer came: what runs after this step runs after it
        } else if (it != null) {
          sleep(it.holdMs); // the step takes a while, so the items run side by side up to the queue's limit
        }
        byte[] body = Integer.toString(number).getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(200, body.length);
        exchange.getResponseBody().write(body);
        call.answeredMs = System.currentTimeMillis() - startMillis;
      } finally {
        exchange.close();
      }
    });
    stub.start();
    url = "http://127.0.0.1:" + stub.getAddress().getPort() + "/call";
  }

  private void cancel(Item it) {
    ApiaryClient c = canceller;
    if (c == null) {
      it.cancelAnswer = "the load had ended";
      return;
    }
    try {
      InvocationStatus s = c.handle(it.invocation).cancel("drill: cancelled while its external step ran");
      it.cancelAnswer = s.name();
    } catch (RuntimeException e) {
      it.cancelAnswer = e.getClass().getSimpleName() + ": " + e.getMessage();
    }
  }

  /** The load: enqueues items until {@code stopAt} (nanoTime), through both frontends. */
  void load(String[] endpoints, SplittableRandom random, long stopAt) {
    ClientConfig all = ClientConfig.of(endpoints).withAttemptTimeout(ATTEMPT_TIMEOUT).withMaxAttempts(6);
    try (ApiaryClient client = ApiaryClient.connect(all); ApiaryClient cancels = ApiaryClient.connect(all)) {
      canceller = cancels;
      int n = 0;
      while (System.nanoTime() < stopAt) {
        sleep(60 + random.nextInt(120));
        double kind = random.nextDouble();
        boolean cancel = kind < 0.2;
        boolean cancelWaiting = kind < 0.07;
        long key = cancel ? DrillApp.CANCEL_KEY : DrillApp.LIMITED_KEY;
        long delay = cancelWaiting ? 2_000 : !cancel && random.nextDouble() < 0.25 ? 300 + random.nextInt(1200) : 0;
        Item it = new Item(key + "-" + tag + "-" + n++, cancel, cancelWaiting, delay, System.currentTimeMillis(),
            100 + random.nextInt(500));
        items.put(it.name, it);
        String queue = cancel ? DrillApp.CANCELLABLE.name() : DrillApp.LIMITED.name();
        InvocationRequest request = InvocationRequest.of("drill_queued", key, it.name + "|" + url);
        it.invocation = request.id(); // a new item runs under its request's ID, which every resend keeps
        int sends = random.nextDouble() < 0.1 ? 2 : 1; // sometimes resent after its answer: the same item
        for (int s = 0; s < sends; s++) {
          for (int attempt = 0; attempt < 3; attempt++) {
            try {
              String id = client.enqueue(queue, it.name, request, Duration.ofMillis(delay)).id();
              if (!it.invocation.equals(id)) {
                throw new IllegalStateException("item " + it.name + " was sent as invocation " + it.invocation
                    + " and answered with " + id);
              }
              it.acknowledged = true;
              break;
            } catch (InvalidRequestException e) {
              throw new IllegalStateException("enqueuing item " + it.name + " was refused: " + e.getMessage(), e);
            } catch (RuntimeException e) {
              // no answer: send it again under the same deduplication ID
            }
          }
        }
        if (it.cancelWaiting && it.acknowledged) {
          try {
            it.cancelAnswer = cancels.handle(it.invocation).cancel("drill: cancelled while it waited").name();
          } catch (RuntimeException e) {
            it.cancelAnswer = e.getClass().getSimpleName() + ": " + e.getMessage();
          }
        }
      }
    } finally {
      canceller = null;
    }
  }

  /**
   * After the load: waits (until {@code deadline}, nanoTime) for every acknowledged item to end, then checks. Cancels
   * that come after the load ended find no canceller and are not counted.
   */
  Summary settleAndCheck(ApiaryDatabase db, long deadline) {
    List<Item> all;
    synchronized (items) {
      all = new ArrayList<>(items.values());
    }
    long expected = all.stream().filter(i -> i.acknowledged && !i.cancel).count();
    while (System.nanoTime() < deadline && rows(db, "SELECT COUNT(DISTINCT item) FROM drill_queued_effects WHERE k = "
        + DrillApp.LIMITED_KEY + " AND step = 'leave'") < expected) {
      sleep(200);
    }
    Map<String, long[]> effects = new LinkedHashMap<>(); // item -> enters, leaves, enter time (ms), token
    for (Rows.Row t : db.query("reading queued effects", "SELECT item, step, token, "
        + "SINCE_EPOCH(MILLISECOND, ran_at) FROM drill_queued_effects")) {
      long[] e = effects.computeIfAbsent(t.getString(0), k -> new long[] {0, 0, Long.MAX_VALUE, 0, 0});
      if ("enter".equals(t.getString(1))) {
        e[0]++;
        e[2] = Math.min(e[2], t.getLong(3));
      } else {
        e[1]++;
        e[3] = t.getLong(2);
        e[4] = t.getLong(3);
      }
    }
    List<String> problems = new ArrayList<>();
    int queued = 0;
    int once = 0;
    int duplicates = 0;
    int lost = 0;
    int delayed = 0;
    int early = 0;
    int cancelled = 0;
    int startedAfterCancel = 0;
    int recalled = 0;
    int inFlight = 0;
    for (Item it : all) {
      long[] e = effects.getOrDefault(it.name, new long[] {0, 0, Long.MAX_VALUE, 0, 0});
      if (e[0] > 1 || e[1] > 1) {
        duplicates++;
        problems.add("item " + it.name + " entered " + e[0] + " and left " + e[1] + " times");
      }
      if (it.cancel) {
        if (InvocationStatus.CANCELLED.name().equals(it.cancelAnswer)) {
          cancelled++;
          if (it.cancelWaiting ? e[0] > 0 : e[1] > 0) {
            startedAfterCancel++;
            problems.add("item " + it.name + " (" + it.invocation + ") was cancelled " + (it.cancelWaiting
                ? "while it waited, yet its first function ran" : "while its external step ran, yet its last "
                + "function ran"));
          }
        }
      } else if (it.acknowledged) {
        queued++;
        if (e[0] == 1 && e[1] == 1) {
          once++;
        } else if (e[0] == 0 || e[1] == 0) {
          lost++;
          problems.add("item " + it.name + " (" + it.invocation + ") was acknowledged but entered " + e[0]
              + " and left " + e[1] + " times");
        }
        if (it.delayMs > 0) {
          delayed++;
          if (e[0] > 0 && e[2] < it.sentAtMillis + it.delayMs) {
            early++;
            problems.add("item " + it.name + " delayed " + it.delayMs + " ms started " + (e[2] - it.sentAtMillis)
                + " ms after it was sent");
          }
        }
      }
      List<Call> cs;
      synchronized (calls) {
        cs = new ArrayList<>(calls.getOrDefault(it.name, List.of()));
      }
      if (cs.stream().map(Call::key).distinct().count() > 1) {
        recalled++;
        problems.add("item " + it.name + " called the stub under several idempotency keys: " + cs);
      } else if (e[1] == 1 && e[3] < cs.size()) {
        // The kept answer was recorded before the last function ran (its time, e[4]): a later call that started after
        // that is a call after the step returned; one that started before is a concurrent attempt (in flight).
        long keptAt = e[4];
        boolean after = cs.stream().anyMatch(c -> c.number > e[3] && startMillis + c.startedMs > keptAt);
        if (after) {
          recalled++;
          problems.add("item " + it.name + " kept the answer of call " + e[3] + " (its last function ran at +"
              + (keptAt - startMillis) + " ms) but the stub was called again after that: " + cs);
        } else {
          inFlight++;
          out.println("   (queued work: item " + it.name + " kept the answer of call " + e[3] + " of " + cs.size()
              + "; the others started before its last function ran at +" + (keptAt - startMillis) + " ms: " + cs
              + ")");
        }
      }
    }
    int totalCalls;
    synchronized (calls) {
      totalCalls = calls.values().stream().mapToInt(List::size).sum();
    }
    long high = rows(db, "SELECT COALESCE(MAX(high), 0) FROM drill_queue_state WHERE k = " + DrillApp.LIMITED_KEY);

    TreeMap<Instant, Integer> ticks = new TreeMap<>();
    for (Rows.Row tk : db.query("reading ticks", "SELECT tick FROM drill_ticks")) {
      ticks.merge(Instant.parse(tk.getString(0)), 1, Integer::sum);
    }
    int tickDuplicates = 0;
    int tickGaps = 0;
    if (!ticks.isEmpty()) {
      Instant last = ticks.lastKey().minusSeconds(TICK_TAIL_SECONDS);
      for (Instant at = ticks.firstKey(); !at.isAfter(last); at = at.plusSeconds(1)) {
        int n = ticks.getOrDefault(at, 0);
        if (n > 1) {
          tickDuplicates++;
          problems.add("tick " + at + " ran " + n + " times");
        } else if (n == 0) {
          tickGaps++;
          problems.add("tick " + at + " never ran");
        }
      }
    }
    problems.stream().limit(10).forEach(p -> out.println("   ! queued work: " + p));
    return new Summary(queued, once, duplicates, lost, delayed, early, high, DrillApp.LIMITED.concurrency(),
        ticks.size(), tickDuplicates, tickGaps, cancelled, startedAfterCancel, totalCalls, recalled, inFlight,
        problems);
  }

  private static long rows(ApiaryDatabase db, String sql) {
    return db.query("reading the drill's queued work", sql).scalarLong();
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    stub.stop(0);
    stubThreads.shutdownNow();
    try {
      stubThreads.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
