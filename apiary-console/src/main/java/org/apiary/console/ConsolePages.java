package org.apiary.console;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import org.apiary.internal.http.HttpEndpoint.Response;

/**
 * The console's browser pages: static HTML, CSS and JavaScript from this jar ({@code org/apiary/console/web/}), the
 * same for every caller and holding no data (the pages fetch it from {@code /api/} with the key the user gives), so
 * they are served without a key. Only the files named in {@link #FILES} are served; {@code /} is the executions
 * page. Each answer carries {@code Content-Security-Policy: default-src 'self'}: nothing is loaded from elsewhere,
 * no inline script or style runs.
 */
final class ConsolePages {
  /** The CSP of every answer, pages and API alike. */
  static final String CSP = "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

  /** The files served, by path, with their content types. */
  static final Map<String, String> FILES = Map.ofEntries(
      Map.entry("executions.html", "text/html; charset=utf-8"),
      Map.entry("execution.html", "text/html; charset=utf-8"),
      Map.entry("record.html", "text/html; charset=utf-8"),
      Map.entry("graphs.html", "text/html; charset=utf-8"),
      Map.entry("cluster.html", "text/html; charset=utf-8"),
      Map.entry("sql.html", "text/html; charset=utf-8"),
      Map.entry("console.css", "text/css; charset=utf-8"),
      Map.entry("console.js", "text/javascript; charset=utf-8"),
      Map.entry("favicon.svg", "image/svg+xml"));

  private ConsolePages() {}

  /** The page or file at {@code path}, or {@code 404} naming the pages. */
  static Response page(String path) {
    String name = path.equals("/") ? "executions.html" : path.substring(1);
    String type = FILES.get(name);
    if (type == null) {
      return Response.text(404, "no such page: the console's pages are /, /execution.html, /record.html, "
          + "/graphs.html, /cluster.html and /sql.html; its JSON is under /api/\n").withHeader(
          "Content-Security-Policy", CSP);
    }
    try (InputStream in = ConsolePages.class.getResourceAsStream("web/" + name)) {
      if (in == null) {
        throw new IllegalStateException("the console's jar lacks its page " + name);
      }
      return new Response(200, type, in.readAllBytes()).withHeader("Content-Security-Policy", CSP)
          .withHeader("Referrer-Policy", "no-referrer");
    } catch (IOException e) {
      throw new UncheckedIOException("reading the console's page " + name, e);
    }
  }
}
