package org.apiary.frontend;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import java.util.List;
import org.apiary.internal.wire.WireReply;
import org.apiary.internal.wire.WireRequest;
import org.apiary.runtime.FunctionResult;

/**
 * A frontend's traces (issue 43): a span per graph execution, child of the client's attempt span named by the
 * request frame's {@code traceparent} (a new trace if it has none, or a malformed or oversized one), and a span per
 * function execution under it. An invocation taken over from another frontend gets a new trace whose graph span
 * links to the logged request's trace context. Nothing is traced inside the stored procedures. Through the
 * OpenTelemetry API only: a no-op unless an SDK is installed ({@link GlobalOpenTelemetry}; {@code ./apiary frontend}
 * and {@code start} install one from the {@code OTEL_*} variables).
 */
final class FrontendTracing {
  /**
   * The variable (or system property {@code apiary.trace.partitionKeys}) that, set to {@code true}, puts partition
   * keys on function spans; they are left out by default, as keys may be personal data.
   */
  static final String PARTITION_KEYS_VARIABLE = "APIARY_TRACE_PARTITION_KEYS";

  private static final TextMapGetter<WireRequest.TraceContext> GETTER = new TextMapGetter<>() {
    @Override
    public Iterable<String> keys(WireRequest.TraceContext carrier) {
      return List.of(WireRequest.TRACEPARENT_FIELD, WireRequest.TRACESTATE_FIELD);
    }

    @Override
    public String get(WireRequest.TraceContext carrier, String key) {
      if (carrier == null) {
        return null;
      }
      return WireRequest.TRACEPARENT_FIELD.equals(key) ? carrier.traceparent()
          : WireRequest.TRACESTATE_FIELD.equals(key) ? carrier.tracestate() : null;
    }
  };

  private final Tracer tracer = GlobalOpenTelemetry.getTracer("org.apiary.frontend");
  private final boolean partitionKeys = Boolean.parseBoolean(System.getProperty("apiary.trace.partitionKeys",
      System.getenv(PARTITION_KEYS_VARIABLE)));

  /** The client's context a request frame carries; the root context (a new trace) if none or malformed. */
  static Context clientContext(byte[] frame) {
    WireRequest.TraceContext tc = WireRequest.traceContext(frame);
    if (tc.validTraceparent() == null) {
      return Context.root();
    }
    return W3CTraceContextPropagator.getInstance().extract(Context.root(), tc, GETTER);
  }

  /** Starts the span of a graph execution a client's request started here. */
  Span startGraph(String graph, String invocation, byte[] frame) {
    return graphSpan(graph, invocation).setParent(clientContext(frame)).startSpan();
  }

  /**
   * Starts the span of a logged invocation this frontend took over (or recovered): a new trace, linked to the one
   * its request came with, if it came with one.
   */
  Span startTakenOver(String graph, String invocation, byte[] loggedFrame, int attempt) {
    SpanBuilder b = graphSpan(graph, invocation).setNoParent().setAttribute("apiary.taken_over", true)
        .setAttribute("apiary.attempt", attempt);
    SpanContext original = Span.fromContext(clientContext(loggedFrame)).getSpanContext();
    if (original.isValid()) {
      b.addLink(original);
    }
    return b.startSpan();
  }

  private SpanBuilder graphSpan(String graph, String invocation) {
    return tracer.spanBuilder("apiary.graph " + graph).setSpanKind(SpanKind.SERVER)
        .setAttribute("apiary.graph", graph).setAttribute("apiary.invocation.id", invocation);
  }

  /** Ends a graph span with the invocation's outcome. */
  static void endGraph(Span span, WireReply reply) {
    if (span == null || !span.isRecording()) {
      return;
    }
    span.setAttribute("apiary.outcome", WireReply.OK.equals(reply.status()) ? "ok" : String.valueOf(reply.error()));
    if (!WireReply.OK.equals(reply.status())) {
      span.setStatus(StatusCode.ERROR, reply.error() + ": " + reply.message());
    }
    span.end();
  }

  /** Starts the span of one function execution (one fan-out instance) under its graph's span. */
  Span startFunction(Context graph, String function, String kind, boolean recorded, String invocation,
                     Object partitionKey) {
    if (!Span.fromContext(graph).getSpanContext().isValid()) {
      return Span.getInvalid();
    }
    SpanBuilder b = tracer.spanBuilder("apiary.function " + function).setParent(graph)
        .setAttribute("apiary.function", function).setAttribute("apiary.function.kind", kind)
        .setAttribute("apiary.function.recorded", recorded).setAttribute("apiary.invocation.id", invocation);
    if (partitionKeys && partitionKey != null) {
      b.setAttribute("apiary.partition_key", String.valueOf(partitionKey));
    }
    return b.startSpan();
  }

  /** Ends a function span with its outcome: answered from its record or run, or failed (error status). */
  static void endFunction(Span span, FunctionResult result, Throwable error) {
    if (!span.isRecording()) {
      return;
    }
    if (error != null) {
      Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null
          ? error.getCause() : error;
      span.setAttribute("apiary.outcome", "failed");
      span.setStatus(StatusCode.ERROR, cause.getClass().getSimpleName() + ": " + cause.getMessage());
    } else {
      span.setAttribute("apiary.outcome", "ok");
      span.setAttribute("apiary.function.answered_from_record", result != null && result.replayed());
    }
    span.end();
  }
}
