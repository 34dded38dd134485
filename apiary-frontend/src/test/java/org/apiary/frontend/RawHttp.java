package org.apiary.frontend;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * HTTP/1.0 requests on a plain socket, for tests of the monitoring endpoint. Not {@code java.net.http.HttpClient}: in a
 * JVM that runs VoltDB embedded, VoltDB's OSGi framework (Felix) has taken the URL stream handlers, and the JDK's client
 * then fails to initialize ("Unknown protocol: http" from {@code JceSecurity}).
 */
public final class RawHttp {
  /** A response: status code, headers (names lower case), body as UTF-8. */
  public record Response(int status, Map<String, String> headers, String body) {
    /** The header {@code name} (lower case), or {@code null}. */
    public String header(String name) {
      return headers.get(name);
    }
  }

  private static final Pattern URL = Pattern.compile("http://([^:/]+):(\\d+)(/.*)");

  private RawHttp() {}

  public static Response get(String url) throws IOException {
    return send("GET", url, null);
  }

  /** Sends {@code method} with {@code body} (none if {@code null}), waits up to 10 s for the whole answer. */
  public static Response send(String method, String url, String body) throws IOException {
    return send(method, url, Map.of(), body, Duration.ofSeconds(10));
  }

  /**
   * Sends {@code method} to {@code url} (its path and query sent as they are, unchecked, so a test can send what no
   * client library would) with {@code headers} and {@code body} (none if {@code null}; then no Content-Length), and
   * waits up to {@code readTimeout} for the whole answer.
   */
  public static Response send(String method, String url, Map<String, String> headers, String body,
                              Duration readTimeout) throws IOException {
    Matcher m = URL.matcher(url);
    if (!m.matches()) {
      throw new IllegalArgumentException("not http://HOST:PORT/PATH: " + url);
    }
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(m.group(1), Integer.parseInt(m.group(2))), 5_000);
      s.setSoTimeout((int) readTimeout.toMillis());
      OutputStream out = s.getOutputStream();
      byte[] content = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
      StringBuilder head = new StringBuilder(method + " " + m.group(3) + " HTTP/1.0\r\nHost: " + m.group(1) + "\r\n");
      headers.forEach((name, value) -> head.append(name).append(": ").append(value).append("\r\n"));
      head.append(body == null ? "" : "Content-Length: " + content.length + "\r\n").append("\r\n");
      out.write(head.toString().getBytes(StandardCharsets.US_ASCII));
      out.write(content);
      out.flush();
      InputStream in = s.getInputStream();
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      in.transferTo(all);
      String text = all.toString(StandardCharsets.UTF_8);
      int end = text.indexOf("\r\n\r\n");
      if (end < 0) {
        throw new IOException("no complete HTTP answer: " + text);
      }
      String[] lines = text.substring(0, end).split("\r\n");
      Map<String, String> answered = new TreeMap<>();
      for (int i = 1; i < lines.length; i++) {
        int colon = lines[i].indexOf(':');
        answered.put(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
            lines[i].substring(colon + 1).trim());
      }
      return new Response(Integer.parseInt(lines[0].split(" ")[1]), answered, text.substring(end + 4));
    }
  }
}
