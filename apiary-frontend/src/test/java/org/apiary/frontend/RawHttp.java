package org.apiary.frontend;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * HTTP/1.0 requests on a plain socket, for tests of the monitoring endpoint. Not {@code java.net.http.HttpClient}: in a
 * JVM that runs VoltDB embedded, VoltDB's OSGi framework (Felix) has taken the URL stream handlers, and the JDK's client
 * then fails to initialize ("Unknown protocol: http" from {@code JceSecurity}).
 */
public final class RawHttp {
  /** A response: status code, headers (names lower case), body as UTF-8. */
  public record Response(int status, Map<String, String> headers, String body) {}

  private RawHttp() {}

  public static Response get(String url) throws IOException {
    return send("GET", url, null);
  }

  /** Sends {@code method} with {@code body} (none if {@code null}), waits up to 10 s for the whole answer. */
  public static Response send(String method, String url, String body) throws IOException {
    URI uri = URI.create(url);
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), 5_000);
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      byte[] content = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
      String head = method + " " + uri.getRawPath() + " HTTP/1.0\r\nHost: " + uri.getHost() + "\r\n"
          + (body == null ? "" : "Content-Length: " + content.length + "\r\n") + "\r\n";
      out.write(head.getBytes(StandardCharsets.US_ASCII));
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
      Map<String, String> headers = new TreeMap<>();
      for (int i = 1; i < lines.length; i++) {
        int colon = lines[i].indexOf(':');
        headers.put(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), lines[i].substring(colon + 1).trim());
      }
      return new Response(Integer.parseInt(lines[0].split(" ")[1]), headers, text.substring(end + 4));
    }
  }
}
