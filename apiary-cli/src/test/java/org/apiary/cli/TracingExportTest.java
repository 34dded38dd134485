package org.apiary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Issue 43, item 5: {@code apiary frontend} and {@code start} install the SDK from the {@code OTEL_*} variables only
 * when {@code OTEL_TRACES_EXPORTER} asks for traces, and with {@code otlp} spans reach the collector's
 * {@code /v1/traces} (here a JDK HTTP server standing in for one).
 */
class TracingExportTest {
  @Test
  void withoutTheExporterVariableNothingIsInstalled() {
    assertTrue(Tracing.install(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1"), false).isEmpty());
    assertTrue(Tracing.install(Map.of("OTEL_TRACES_EXPORTER", "none"), false).isEmpty());
  }

  @Test
  void otlpExportReachesTheCollectorsTracesPath() throws Exception {
    record Received(String method, String path, String contentType, String body) {}
    List<Received> received = new CopyOnWriteArrayList<>();
    HttpServer collector = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    collector.createContext("/", exchange -> {
      byte[] body = exchange.getRequestBody().readAllBytes();
      received.add(new Received(exchange.getRequestMethod(), exchange.getRequestURI().getPath(),
          exchange.getRequestHeaders().getFirst("Content-Type"), new String(body, StandardCharsets.ISO_8859_1)));
      exchange.sendResponseHeaders(200, -1);
      exchange.close();
    });
    collector.start();
    try {
      String endpoint = "http://127.0.0.1:" + collector.getAddress().getPort();
      OpenTelemetrySdk sdk = Tracing.install(Map.of("OTEL_TRACES_EXPORTER", "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT",
          endpoint, "OTEL_SERVICE_NAME", "apiary-test"), false).orElseThrow();
      sdk.getTracer("test").spanBuilder("exported-span").startSpan().end();
      assertTrue(sdk.getSdkTracerProvider().forceFlush().join(10, TimeUnit.SECONDS).isSuccess(), "flushed");
      sdk.close();
      Received traces = received.stream().filter(r -> r.path().equals("/v1/traces")).findFirst()
          .orElseThrow(() -> new AssertionError("nothing reached /v1/traces: " + received));
      assertEquals("POST", traces.method());
      assertEquals("application/x-protobuf", traces.contentType());
      assertTrue(traces.body().contains("exported-span"), "the span's name is in the export");
      assertTrue(traces.body().contains("apiary-test"), "the service name is in the export");
      assertTrue(received.stream().allMatch(r -> r.path().equals("/v1/traces")), "only traces are exported: "
          + received);
    } finally {
      collector.stop(0);
    }
  }
}
