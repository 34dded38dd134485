package org.apiary.drills;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.apiary.ApiaryException;
import org.apiary.client.ApiaryClient;
import org.apiary.client.ClientConfig;
import org.apiary.database.ApiaryDatabase;
import org.apiary.database.DatabaseConfig;
import org.apiary.drills.counter.CounterApp;
import org.apiary.frontend.FrontendConfig;
import org.apiary.frontend.FrontendServer;
import org.apiary.frontend.Registrar;
import org.apiary.internal.wire.SocketLoop;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * {@code ./apiary drill garbage} (issue 14): while valid clients increment counters through a frontend, other
 * connections send it thousands of malformed frames: random bytes, truncated and mangled requests, JSON of the wrong
 * shape and types, deep nesting, messages of several frames (each a request), frames over the size limit (up to 10x
 * it, answered with an error, and now and then over the frontend's hard cap, which drops that connection). The valid
 * clients must see every call succeed, the counters must hold exactly their increments (garbage ran nothing on their
 * keys), and the frontend must still serve at the end.
 */
final class GarbageDrill {
  private static final int KEYS = 100;
  /** Valid clients use keys from here on; garbage that happens to be a valid call uses small keys, not counted. */
  private static final long FIRST_VALID_KEY = 1_000;
  private static final int MAX_REQUEST_BYTES = 64 * 1024;
  private static final FrontendConfig CONFIG = FrontendConfig.defaults().withMaxRequestBytes(MAX_REQUEST_BYTES);
  /** Frames up to this get an error reply; larger ones drop their connection. */
  private static final long HARD_CAP = CONFIG.maxFrameBytes();

  record Settings(long seed, int seconds, int validClients, int garbageSenders) {}

  private final Settings settings;
  private final PrintStream out;
  private final AtomicLong frames = new AtomicLong();
  private final AtomicLong garbageReplies = new AtomicLong();
  private final AtomicLong validOk = new AtomicLong();
  private final AtomicLong validFailed = new AtomicLong();
  private final List<String> failures = new CopyOnWriteArrayList<>();
  /** How long each valid call took (µs): under the flood they must still be answered promptly, not just answered. */
  private final List<Long> validMicros = java.util.Collections.synchronizedList(new ArrayList<>());
  private String summary;

  GarbageDrill(Settings settings, PrintStream out) {
    this.settings = settings;
    this.out = out;
  }

  int run() throws InterruptedException {
    int code;
    out.println("-> seed " + settings.seed() + " (repeat this run with --seed " + settings.seed() + ")");
    try (ApiaryDatabase db = ApiaryDatabase.open(DatabaseConfig.embedded(2))) {
      Registrar.register(db, CounterApp.APP);
      try (FrontendServer frontend = FrontendServer.start(db, CONFIG)) {
        out.printf("-> frontend %s (requests up to %d bytes, frames up to %d answered); %d valid clients, %d garbage "
            + "connections, %d s%n", frontend.endpoint(), MAX_REQUEST_BYTES, HARD_CAP, settings.validClients(),
            settings.garbageSenders(), settings.seconds());
        code = load(db, frontend);
      }
    }
    out.println(summary);
    return code;
  }

  private int load(ApiaryDatabase db, FrontendServer frontend) throws InterruptedException {
    long start = System.nanoTime();
    long stopAt = start + Duration.ofSeconds(settings.seconds()).toNanos();
    List<String> crashes = new CopyOnWriteArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int c = 0; c < settings.validClients(); c++) {
      SplittableRandom random = new SplittableRandom(settings.seed() + c);
      threads.add(new Thread(DrillThreads.guarded(() -> valid(frontend.endpoint(), random, stopAt), crashes,
          out::println), "garbage-valid-client-" + c));
    }
    try (ZContext zmq = new ZContext()) {
      for (int g = 0; g < settings.garbageSenders(); g++) {
        SplittableRandom random = new SplittableRandom(settings.seed() * 31 + g);
        threads.add(new Thread(DrillThreads.guarded(() -> garbage(zmq, frontend.endpoint(), random, stopAt),
            crashes, out::println), "garbage-sender-" + g));
      }
      threads.forEach(Thread::start);
      DrillThreads.joinAll(threads, Duration.ofSeconds(settings.seconds() + 60));
    }
    boolean up = frontend.failure().isEmpty() && stillServes(frontend.endpoint());
    long applied = DrillCounters.sum(db, FIRST_VALID_KEY);
    out.printf("-> %.1f s: %d garbage frames sent, %d answered with an error; valid calls: %d ok, %d failed; the "
            + "counters hold %d increments%n", (System.nanoTime() - start) / 1e9, frames.get(),
        garbageReplies.get(), validOk.get(), validFailed.get(), applied);
    synchronized (validMicros) {
      List<Long> sorted = new ArrayList<>(validMicros);
      java.util.Collections.sort(sorted);
      if (!sorted.isEmpty()) {
        out.printf("-> valid call latency: p50 %.1f ms, p99 %.1f ms, max %.1f ms%n", sorted.get(sorted.size() / 2) / 1e3,
            sorted.get((int) (sorted.size() * 0.99)) / 1e3, sorted.get(sorted.size() - 1) / 1e3);
      }
    }
    failures.stream().limit(5).forEach(f -> out.println("-> failed: " + f));
    frontend.failure().ifPresent(e -> out.println("-> the frontend stopped itself: " + e));
    // stillServes adds one increment of its own.
    boolean countsAgree = applied == validOk.get() + (up ? 1 : 0);
    if (!countsAgree) {
      out.println("-> the counters hold " + applied + " increments, but the valid clients made " + validOk.get());
    }
    summary = String.format(java.util.Locale.ROOT, "drill garbage: frames=%d valid_ok=%d valid_failed=%d "
        + "frontend_up=%s", frames.get(), validOk.get(), validFailed.get(), up ? "yes" : "no");
    return up && countsAgree && crashes.isEmpty() && validFailed.get() == 0 && validOk.get() > 0
        && frames.get() > 0 ? 0 : 1;
  }

  private void valid(String endpoint, SplittableRandom random, long stopAt) {
    try (ApiaryClient client = ApiaryClient.connect(ClientConfig.of(endpoint)
        .withAttemptTimeout(Duration.ofSeconds(5)))) {
      while (System.nanoTime() < stopAt) {
        try {
          long t0 = System.nanoTime();
          client.invoke("increment", FIRST_VALID_KEY + random.nextInt(KEYS), 1L);
          validMicros.add((System.nanoTime() - t0) / 1000);
          validOk.incrementAndGet();
        } catch (ApiaryException e) {
          validFailed.incrementAndGet();
          failures.add(e.toString());
        }
      }
    }
  }

  private boolean stillServes(String endpoint) {
    try (ApiaryClient client = ApiaryClient.connect(ClientConfig.of(endpoint)
        .withAttemptTimeout(Duration.ofSeconds(5)))) {
      client.invoke("increment", FIRST_VALID_KEY, 1L);
      return true;
    } catch (ApiaryException e) {
      out.println("-> the frontend did not serve a valid call after the garbage: " + e.getMessage());
      return false;
    }
  }

  /** Sends malformed frames as fast as the frontend answers them; reads (and counts) whatever comes back. */
  private void garbage(ZContext zmq, String endpoint, SplittableRandom random, long stopAt) {
    ZMQ.Socket socket = zmq.createSocket(SocketType.DEALER);
    socket.setLinger(0);
    socket.setHandshakeIvl(SocketLoop.HANDSHAKE_MILLIS); // a connection JeroMQ leaves silent is remade, not kept 30 s
    socket.setSndHWM(1_000);
    socket.setSendTimeOut(1_000);
    socket.connect(endpoint);
    try {
      while (System.nanoTime() < stopAt) {
        byte[][] message = nextGarbage(random);
        boolean sent = true;
        for (int i = 0; i < message.length && sent; i++) {
          sent = socket.send(message[i], i < message.length - 1 ? ZMQ.SNDMORE : 0);
        }
        if (sent) {
          frames.incrementAndGet();
        }
        for (byte[] reply = socket.recv(ZMQ.DONTWAIT); reply != null; reply = socket.recv(ZMQ.DONTWAIT)) {
          garbageReplies.incrementAndGet();
        }
      }
    } finally {
      socket.close();
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

  private static byte[][] nextGarbage(SplittableRandom random) {
    int kind = random.nextInt(10);
    return switch (kind) {
      case 0 -> new byte[][] {randomBytes(random, random.nextInt(2_000))};
      case 1 -> { // a valid request cut short
        byte[] whole = shaped(random, 0);
        yield new byte[][] {java.util.Arrays.copyOf(whole, random.nextInt(whole.length))};
      }
      case 2 -> { // a valid-looking request with bytes flipped
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
      case 5 -> { // several frames in one message, each a request of its own: well-formed and malformed mixed
        byte[][] parts = new byte[2 + random.nextInt(4)][];
        for (int i = 0; i < parts.length; i++) {
          parts[i] = random.nextBoolean() ? shaped(random, 0) : randomBytes(random, random.nextInt(200));
        }
        yield parts;
      }
      case 6 -> new byte[][] {new byte[0]};
      case 7 -> { // over the limit: up to 10x it answered with a "too large" error on a connection that stays up;
        // now and then one over the frontend's hard cap, which makes ZeroMQ drop that connection (it reconnects)
        int size = random.nextInt(64) == 0 ? (int) HARD_CAP + 1 + random.nextInt(1_000)
            : MAX_REQUEST_BYTES + 1 + random.nextInt(random.nextInt(8) == 0 ? 9 * MAX_REQUEST_BYTES : 1_000);
        yield new byte[][] {randomBytes(random, size)};
      }
      case 8 -> new byte[][] {("{\"type\":\"invoke\",\"id\":\"" + "z".repeat(1 + random.nextInt(400))
          + "\",\"graph\":\"increment\",\"key\":1,\"args\":[1]}").getBytes(StandardCharsets.UTF_8)};
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
    return String.format(java.util.Locale.ROOT, template, values).getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] randomBytes(SplittableRandom random, int n) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) random.nextInt(256);
    }
    return b;
  }

}
