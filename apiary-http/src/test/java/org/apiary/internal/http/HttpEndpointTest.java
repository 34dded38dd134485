package org.apiary.internal.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/** The HTTP serving base on raw sockets: GET only, 404, a failing route, HEAD, and which threads answer. */
class HttpEndpointTest {
  @Test
  void answersGetsOfItsPathsOnItsOwnThreadsAndNothingElse() throws Exception {
    Map<String, String> threads = new ConcurrentHashMap<>();
    try (HttpEndpoint http = HttpEndpoint.start("127.0.0.1", 0, Map.of(
        "/a", () -> {
          threads.put("a", Thread.currentThread().getName());
          return HttpEndpoint.Response.text(200, "hello\n");
        },
        "/boom", () -> {
          throw new IllegalStateException("secret detail");
        }), "test", 2)) {
      assertTrue(http.url().startsWith("http://127.0.0.1:"), http.url());
      String ok = send(http, "GET /a HTTP/1.0\r\n\r\n");
      assertTrue(ok.startsWith("HTTP/1.1 200"), ok);
      assertTrue(ok.endsWith("\r\n\r\nhello\n"), ok);
      assertTrue(ok.contains("Cache-control: no-store") || ok.contains("Cache-Control: no-store"), ok);
      assertTrue(threads.get("a").startsWith("test-http-"), threads.toString());
      String head = send(http, "HEAD /a HTTP/1.0\r\n\r\n");
      assertTrue(head.startsWith("HTTP/1.1 200") && head.endsWith("\r\n\r\n"), head);
      for (String method : new String[] {"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "BREW"}) {
        String refused = send(http, method + " /a HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc");
        assertTrue(refused.startsWith("HTTP/1.1 405"), method + ": " + refused);
        assertTrue(refused.contains("Allow: GET, HEAD"), refused);
      }
      assertTrue(send(http, "GET /nothing HTTP/1.0\r\n\r\n").startsWith("HTTP/1.1 404"));
      String failed = send(http, "GET /boom HTTP/1.0\r\n\r\n");
      assertTrue(failed.startsWith("HTTP/1.1 500"), failed);
      assertTrue(!failed.contains("secret detail") && failed.contains("IllegalStateException"), failed);
      send(http, "\u0000\u0001garbage\r\n\r\n");
      assertTrue(send(http, "GET /a HTTP/1.0\r\n\r\n").startsWith("HTTP/1.1 200"), "still serving");
    }
  }

  /** A handler sees every GET's path, raw query and headers; other methods are refused before it runs. */
  @Test
  void aHandlerSeesPathQueryAndHeadersAndSetsHeaders() throws Exception {
    Map<String, String> seen = new ConcurrentHashMap<>();
    try (HttpEndpoint http = HttpEndpoint.start("127.0.0.1", 0, request -> {
      seen.put("path", request.path());
      seen.put("query", String.valueOf(request.rawQuery()));
      seen.put("auth", String.valueOf(request.header("authorization")));
      assertTrue(!request.toString().contains("k3y"), "a request's text carries no header");
      return HttpEndpoint.Response.text(200, "ok\n").withHeader("X-Test", "yes");
    }, "handler", 2)) {
      String ok = send(http, "GET /api/x%2Fy?a=1&b=%3C HTTP/1.0\r\nAuthorization: Bearer k3y\r\n\r\n");
      assertTrue(ok.startsWith("HTTP/1.1 200") && (ok.contains("X-test: yes") || ok.contains("X-Test: yes")), ok);
      assertEquals("/api/x%2Fy", seen.get("path"));
      assertEquals("a=1&b=%3C", seen.get("query"));
      assertEquals("Bearer k3y", seen.get("auth"));
      seen.clear();
      String refused = send(http, "DELETE /api/x HTTP/1.0\r\n\r\n");
      assertTrue(refused.startsWith("HTTP/1.1 405") && refused.contains("Allow: GET, HEAD"), refused);
      assertTrue(seen.isEmpty(), "the handler did not run: " + seen);
    }
  }

  private static String send(HttpEndpoint http, String request) throws IOException {
    try (Socket s = new Socket(http.address().getAddress(), http.address().getPort())) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write(request.getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      try {
        s.getInputStream().transferTo(all);
      } catch (java.net.SocketException reset) {
        // a request the server cannot parse may be answered by a reset
      }
      return all.toString(StandardCharsets.ISO_8859_1);
    }
  }
}
