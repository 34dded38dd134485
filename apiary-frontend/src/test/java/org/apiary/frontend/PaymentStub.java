package org.apiary.frontend;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A payment service stub on the loopback interface for external-step tests: counts the calls it receives and the
 * idempotency keys they carry; can fail the first calls (HTTP 500) or answer slowly. Closing stops it.
 */
public final class PaymentStub implements AutoCloseable {
  private final HttpServer server;
  private final ExecutorService threads = Executors.newFixedThreadPool(4);
  private final AtomicInteger calls = new AtomicInteger();
  private final List<String> keys = new CopyOnWriteArrayList<>();
  private volatile int failFirst;
  private volatile long delayMs;
  private volatile java.util.function.IntConsumer onCall = n -> { };

  private PaymentStub() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
    server.setExecutor(threads);
    server.createContext("/charge", exchange -> {
      int n = calls.incrementAndGet();
      keys.add(String.valueOf(exchange.getRequestHeaders().getFirst("Idempotency-Key")));
      exchange.getRequestBody().readAllBytes();
      onCall.accept(n);
      try {
        if (delayMs > 0) {
          Thread.sleep(delayMs);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      byte[] body = (n <= failFirst ? "unavailable" : "receipt-" + n).getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(n <= failFirst ? 500 : 200, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    });
    server.start();
  }

  /** A stub that answers every call at once. */
  public static PaymentStub start() {
    try {
      return new PaymentStub();
    } catch (IOException e) {
      throw new IllegalStateException("cannot start the payment stub: " + e.getMessage(), e);
    }
  }

  /** Fails the first {@code n} calls with HTTP 500. */
  public PaymentStub failingFirst(int n) {
    failFirst = n;
    return this;
  }

  /** Runs {@code action} with each call's number as it arrives, before the call is answered. */
  public PaymentStub onCall(java.util.function.IntConsumer action) {
    onCall = action;
    return this;
  }

  /** Answers each call after {@code ms}. */
  public PaymentStub delaying(long ms) {
    delayMs = ms;
    return this;
  }

  public String url() {
    return "http://" + server.getAddress().getHostString() + ":" + server.getAddress().getPort() + "/charge";
  }

  public int calls() {
    return calls.get();
  }

  /** The idempotency keys of the calls, in arrival order. */
  public List<String> keys() {
    return List.copyOf(keys);
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
  }
}
