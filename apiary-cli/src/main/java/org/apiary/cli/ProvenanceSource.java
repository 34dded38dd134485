package org.apiary.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;
import org.apiary.internal.Json;
import org.apiary.provenance.ProvenanceQueries;
import org.apiary.provenance.ProvenanceReports;
import org.apiary.provenance.ProvenanceReports.Report;
import org.apiary.provenance.ProvenanceSink;

/**
 * Where the commands' provenance queries ({@link ProvenanceReports}) are answered: by the running service of a data
 * directory, through its console's {@code /api/provenance/{query}} (the service's process holds its DuckDB sink,
 * which one process at a time may open), or on a sink opened here (a service that is stopped, a database server's
 * sink, a cluster's). Either way the same layer answers, so the commands print the same rows.
 */
abstract class ProvenanceSource {
  /** How long a remote answer may take: the query's own bound and a margin for the hop. */
  static final Duration REMOTE_TIMEOUT = ProvenanceQueries.DEFAULT_QUERY_TIMEOUT.plusSeconds(10);

  /** Answers {@code query}; a bad parameter is an {@link IllegalArgumentException} naming it. */
  abstract Report answer(String query, Map<String, String> parameters) throws SQLException;

  /** What answers, for messages ("the running service in DIR", "jdbc:duckdb:..."), without secrets. */
  abstract String describe();

  /** A sink opened here, with {@code properties} (credentials); a DuckDB file read-only. */
  static ProvenanceSource sink(String url, Properties properties) {
    return new ProvenanceSource() {
      @Override
      Report answer(String query, Map<String, String> parameters) throws SQLException {
        Properties props = new Properties();
        props.putAll(properties);
        if (ProvenanceSink.isDuckDb(url)) {
          props.setProperty("duckdb.read_only", "true");
        }
        // Its network timeout outlasts the longest query the commands wait for.
        try (ProvenanceSink opened = ProvenanceSink.open(url, props,
            ProvenanceQueries.DEFAULT_QUERY_TIMEOUT.plusSeconds(10))) {
          return ProvenanceReports.runRolledBack(opened.connection(), query, parameters);
        }
      }

      @Override
      String describe() {
        return ProvenanceSink.redact(url);
      }
    };
  }

  /**
   * The provenance of {@code apiary start --data data} (or of the cluster there): asked of the service while it
   * runs, read from its sink file when it is stopped.
   *
   * @throws CliException if the directory captures no provenance, or its running service serves no console
   */
  static ProvenanceSource data(Path data) {
    if (ClusterDirectory.isCluster(data)) {
      String url = new ClusterDirectory(data).readSettings().map(ClusterDirectory.Settings::provenance).orElse(null);
      if (url == null) {
        throw new CliException("the cluster in " + data + " captures no provenance", 1, null);
      }
      return sink(url, new Properties());
    }
    ServiceDirectory dir = new ServiceDirectory(data);
    if (dir.holder().isPresent()) {
      ServiceDirectory.State state = dir.runningState();
      if (state.provenance() == null) {
        throw new CliException("Apiary in " + dir.root() + " captures no provenance", 1, null);
      }
      if (state.console() == null) {
        throw new CliException("Apiary in " + dir.root() + " runs without its console (started with --no-console, "
            + "or by an older version), so its provenance, which that process holds open, cannot be asked of it: "
            + "restart it without --no-console, or query after `apiary stop --data " + dir.root() + "`", 1, null);
      }
      return remote(state.console(), ServiceTarget.credential(null, data), "the running Apiary in " + dir.root());
    }
    boolean captures = dir.readSettings().map(ServiceDirectory.Settings::provenance).orElse(false);
    if (!captures) {
      throw new CliException("Apiary in " + dir.root() + " captures no provenance (or was never started there)", 1,
          null);
    }
    return sink("jdbc:duckdb:" + dir.provenance(), new Properties());
  }

  /** Queries answered by a service's console at {@code consoleUrl}, with {@code apiKey} (an admin's). */
  static ProvenanceSource remote(String consoleUrl, String apiKey, String description) {
    return new ProvenanceSource() {
      @Override
      Report answer(String query, Map<String, String> parameters) throws SQLException {
        String encoded = parameters.entrySet().stream().filter(e -> e.getValue() != null)
            .map(e -> encode(e.getKey()) + "=" + encode(e.getValue())).collect(Collectors.joining("&"));
        URI uri = URI.create(consoleUrl + "/api/provenance/" + encode(query) + (encoded.isEmpty() ? "" : "?" + encoded));
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(REMOTE_TIMEOUT).GET();
        if (apiKey != null) {
          request.header("Authorization", "Bearer " + apiKey);
        }
        HttpResponse<String> response;
        try {
          response = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()
              .send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (IOException e) {
          throw new SQLException(description + " did not answer at " + consoleUrl + ": " + e, e);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new SQLException("interrupted while asking " + description, e);
        }
        JsonNode body;
        try {
          body = Json.MAPPER.readTree(response.body());
        } catch (IOException e) {
          throw new SQLException(description + " answered " + response.statusCode() + " with what is not JSON", e);
        }
        String error = body.path("error").asText(null);
        if (response.statusCode() == 400) {
          throw new IllegalArgumentException(error);
        }
        if (response.statusCode() == 401 || response.statusCode() == 403) {
          throw new CliException(description + " refused the query: " + error + " (the admin key is read from "
              + "the data directory, or give one in " + ServiceTarget.API_KEY_VARIABLE + ")", 1, null);
        }
        if (response.statusCode() == 500 && "sink".equals(body.path("source").asText(null))) {
          throw new SQLException(error); // the query's own failure, in the words a sink opened here would give
        }
        if (response.statusCode() != 200) {
          throw new SQLException(description + ": " + (error == null ? "status " + response.statusCode() : error));
        }
        List<String> columns = new ArrayList<>();
        body.path("columns").forEach(c -> columns.add(c.asText()));
        List<List<String>> rows = new ArrayList<>();
        for (JsonNode row : body.path("rows")) {
          List<String> cells = new ArrayList<>();
          row.forEach(c -> cells.add(c.asText()));
          rows.add(cells);
        }
        return new Report(columns, rows, body.path("message").asText(null));
      }

      @Override
      String describe() {
        return description;
      }
    };
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
