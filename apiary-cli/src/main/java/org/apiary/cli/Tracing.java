package org.apiary.cli;

import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Traces for {@code ./apiary frontend} and {@code start} (issue 43): installs the OpenTelemetry SDK, configured from
 * the standard {@code OTEL_*} variables, as the global one that Apiary's frontend traces through. Off unless
 * {@code OTEL_TRACES_EXPORTER} is set (and not {@code none}): then nothing is installed and tracing costs nothing.
 * Only traces are exported (metrics and logs exporters default to {@code none}; Apiary's metrics are Prometheus
 * text at {@code /metrics}); OTLP defaults to {@code http/protobuf}, sent with the JDK's HTTP client.
 */
final class Tracing {
  /** The variable that turns tracing on. */
  static final String EXPORTER_VARIABLE = "OTEL_TRACES_EXPORTER";

  private Tracing() {}

  /**
   * Installs the SDK from {@code environment} (the process's variables in production) if it asks for traces; the SDK
   * is flushed and closed when the JVM exits.
   *
   * @param global whether to make it the global OpenTelemetry (what the frontend uses); tests may not
   * @return the installed SDK, or empty if tracing is off
   */
  static Optional<OpenTelemetrySdk> install(Map<String, String> environment, boolean global) {
    String exporter = environment.get(EXPORTER_VARIABLE);
    if (exporter == null || exporter.isBlank() || exporter.trim().equalsIgnoreCase("none")
        || "true".equalsIgnoreCase(environment.get("OTEL_SDK_DISABLED"))) {
      return Optional.empty();
    }
    Map<String, String> defaults = Map.of("otel.metrics.exporter", "none", "otel.logs.exporter", "none",
        "otel.exporter.otlp.protocol", "http/protobuf", "otel.service.name", "apiary");
    Map<String, String> given = new HashMap<>();
    environment.forEach((name, value) -> {
      if (name.startsWith("OTEL_")) {
        given.put(name.toLowerCase(Locale.ROOT).replace('_', '.'), value);
      }
    });
    io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdkBuilder builder = AutoConfiguredOpenTelemetrySdk.builder()
        .addPropertiesSupplier(() -> defaults).addPropertiesCustomizer(config -> given);
    if (global) {
      builder.setResultAsGlobal();
    }
    OpenTelemetrySdk sdk;
    try {
      sdk = builder.build().getOpenTelemetrySdk();
    } catch (RuntimeException e) {
      throw new CliException("tracing could not be set up from the OTEL_* variables (" + EXPORTER_VARIABLE + "="
          + exporter + "): " + e.getMessage(), 2, e);
    }
    return Optional.of(sdk);
  }

  /** {@link #install} from the process's variables, as the global SDK, closed (flushing spans) at exit. */
  static void installFromEnvironment(java.io.PrintStream out) {
    install(System.getenv(), true).ifPresent(sdk -> {
      Runtime.getRuntime().addShutdownHook(new Thread(sdk::close, "apiary-tracing-shutdown"));
      out.println("apiary: traces exported (" + EXPORTER_VARIABLE + "=" + System.getenv(EXPORTER_VARIABLE) + ")");
    });
  }
}
