package org.apiary.internal.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A read-only HTTP server: exact paths answered by {@link Route}s, GET only ({@code 405} with {@code Allow: GET}
 * otherwise; a {@code HEAD} is answered as a GET without its body), {@code 404} for other paths. Requests are handled
 * on a pool of its own of at most {@code threads} threads and {@link #QUEUE} queued requests; beyond that the
 * server's own dispatcher thread handles the request (so it stops accepting while it does), never a thread of the
 * caller's. A route that throws answers {@code 500} with the exception's class only, and the error is logged.
 *
 * <p>What it does not bound: the JDK's server reads request headers without a time limit unless the process sets
 * {@code sun.net.httpserver.maxReqTime}, so a client that sends its headers slowly holds a pool thread. It is meant to
 * listen on loopback, or behind a proxy that bounds that.
 */
public final class HttpEndpoint implements AutoCloseable {
  private static final Logger LOG = System.getLogger(HttpEndpoint.class.getName());

  /** Requests queued for the pool before the server's dispatcher thread handles them itself. */
  public static final int QUEUE = 64;

  /** What a route answers; {@code headers} are set on the answer besides its content type. */
  public record Response(int status, String contentType, byte[] body, Map<String, String> headers) {
    public Response {
      Objects.requireNonNull(contentType, "contentType");
      Objects.requireNonNull(body, "body");
      headers = Map.copyOf(headers);
    }

    /** An answer with no headers of its own. */
    public Response(int status, String contentType, byte[] body) {
      this(status, contentType, body, Map.of());
    }

    /** This answer with one more header. */
    public Response withHeader(String name, String value) {
      Map<String, String> more = new java.util.HashMap<>(headers);
      more.put(name, value);
      return new Response(status, contentType, body, more);
    }

    /** A UTF-8 plain-text answer. */
    public static Response text(int status, String body) {
      return new Response(status, "text/plain; charset=utf-8", body.getBytes(StandardCharsets.UTF_8));
    }
  }

  /** Answers GETs of one path; runs on the endpoint's pool. */
  @FunctionalInterface
  public interface Route {
    Response get() throws Exception;
  }

  /**
   * A GET (or HEAD) as a {@link Handler} sees it: the path, the raw (still percent-encoded) query or {@code null}, and
   * the request headers by lower-case name (the first value of each).
   */
  public record Request(String path, String rawQuery, Map<String, String> headers) {
    public Request {
      headers = Map.copyOf(headers);
    }

    /** The header's first value, or {@code null}; {@code name} in lower case. */
    public String header(String name) {
      return headers.get(name);
    }

    @Override
    public String toString() {
      return "Request[" + path + "]"; // never the headers: they carry credentials
    }
  }

  /** Answers every GET under the server's paths; runs on the endpoint's pool. */
  @FunctionalInterface
  public interface Handler {
    Response handle(Request request) throws Exception;
  }

  private final HttpServer server;
  private final ThreadPoolExecutor pool;

  private HttpEndpoint(HttpServer server, ThreadPoolExecutor pool) {
    this.server = server;
    this.pool = pool;
  }

  /**
   * Starts serving {@code routes} (exact paths, such as {@code /metrics}) on {@code bindAddress:port} (port 0: a free
   * one).
   *
   * @param name names the pool's threads ({@code name-http-N})
   * @param threads the most requests handled at once
   * @throws IOException if the address cannot be bound
   */
  public static HttpEndpoint start(String bindAddress, int port, Map<String, Route> routes, String name, int threads)
      throws IOException {
    Map<String, Route> paths = Map.copyOf(routes);
    return start(bindAddress, port, name, threads, exchange -> handle(exchange, paths));
  }

  /**
   * Starts serving every path with {@code handler} on {@code bindAddress:port} (port 0: a free one): GET and HEAD
   * reach it, other methods are answered {@code 405} before it sees them; a handler that throws answers {@code 500}
   * with the exception's class only.
   *
   * @param name names the pool's threads ({@code name-http-N})
   * @param threads the most requests handled at once
   * @throws IOException if the address cannot be bound
   */
  public static HttpEndpoint start(String bindAddress, int port, Handler handler, String name, int threads)
      throws IOException {
    Objects.requireNonNull(handler, "handler");
    return start(bindAddress, port, name, threads, exchange -> handle(exchange, handler));
  }

  private static HttpEndpoint start(String bindAddress, int port, String name, int threads,
      com.sun.net.httpserver.HttpHandler each) throws IOException {
    AtomicInteger n = new AtomicInteger();
    ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS,
        new ArrayBlockingQueue<>(QUEUE), r -> {
          Thread t = new Thread(r, name + "-http-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        }, new ThreadPoolExecutor.CallerRunsPolicy());
    pool.allowCoreThreadTimeOut(true);
    HttpServer server = HttpServer.create(new InetSocketAddress(bindAddress, port), 0);
    server.createContext("/", each);
    server.setExecutor(pool);
    server.start();
    return new HttpEndpoint(server, pool);
  }

  private static void handle(HttpExchange exchange, Map<String, Route> paths) throws IOException {
    // A request body is never read: closing the exchange drains a little of it (the JDK's default, 64 KiB) and
    // closes the connection if more is left, so a large body costs nothing here.
    try (exchange) {
      String method = exchange.getRequestMethod();
      Route route = paths.get(exchange.getRequestURI().getPath());
      Response response;
      if (route == null) {
        response = Response.text(404, "no such path; this server answers " + new java.util.TreeSet<>(paths.keySet())
            + "\n");
      } else if (!"GET".equals(method) && !"HEAD".equals(method)) {
        exchange.getResponseHeaders().set("Allow", "GET, HEAD");
        response = Response.text(405, "only GET is allowed here\n");
      } else {
        try {
          response = route.get();
        } catch (Exception e) {
          LOG.log(Level.WARNING, "HTTP " + exchange.getRequestURI().getPath() + " failed", e);
          response = Response.text(500, "internal error: " + e.getClass().getSimpleName() + "\n");
        }
      }
      send(exchange, method, response);
    }
  }

  private static void handle(HttpExchange exchange, Handler handler) throws IOException {
    try (exchange) {
      String method = exchange.getRequestMethod();
      Response response;
      if (!"GET".equals(method) && !"HEAD".equals(method)) {
        exchange.getResponseHeaders().set("Allow", "GET, HEAD");
        response = Response.text(405, "only GET is allowed here\n");
      } else {
        Map<String, String> headers = new java.util.HashMap<>();
        exchange.getRequestHeaders().forEach((k, v) -> {
          if (!v.isEmpty()) {
            headers.put(k.toLowerCase(java.util.Locale.ROOT), v.get(0));
          }
        });
        Request request = new Request(exchange.getRequestURI().getRawPath(), exchange.getRequestURI().getRawQuery(),
            headers);
        try {
          response = handler.handle(request);
        } catch (Exception e) {
          LOG.log(Level.WARNING, "HTTP " + request.path() + " failed", e);
          response = Response.text(500, "internal error: " + e.getClass().getSimpleName() + "\n");
        }
      }
      send(exchange, method, response);
    }
  }

  private static void send(HttpExchange exchange, String method, Response response) throws IOException {
    { // the exchange is closed by the caller
      response.headers().forEach((k, v) -> exchange.getResponseHeaders().set(k, v));
      exchange.getResponseHeaders().set("Content-Type", response.contentType());
      exchange.getResponseHeaders().set("Cache-Control", "no-store");
      exchange.getResponseHeaders().set("X-Content-Type-Options", "nosniff");
      if ("HEAD".equals(method)) {
        exchange.sendResponseHeaders(response.status(), -1);
        return;
      }
      exchange.sendResponseHeaders(response.status(), response.body().length == 0 ? -1 : response.body().length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(response.body());
      }
    }
  }

  /** The address it listens on (with the port chosen, if 0 was asked). */
  public InetSocketAddress address() {
    return server.getAddress();
  }

  /** {@code http://host:port}, the address as a URL base. */
  public String url() {
    InetSocketAddress a = address();
    String host = a.getAddress().getHostAddress();
    return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort();
  }

  /** Stops accepting, gives requests being answered up to a second, and stops the pool. */
  @Override
  public void close() {
    server.stop(1);
    pool.shutdownNow();
    try {
      if (!pool.awaitTermination(5, TimeUnit.SECONDS)) {
        LOG.log(Level.WARNING, "HTTP endpoint " + url() + ": its threads did not stop within 5 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
