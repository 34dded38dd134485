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
