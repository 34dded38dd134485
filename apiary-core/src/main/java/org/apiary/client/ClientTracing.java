package org.apiary.client;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapSetter;
import java.util.HashMap;
import java.util.Map;
import org.apiary.internal.wire.WireReply;
import org.apiary.internal.wire.WireRequest;

/**
 * The client's traces (issue 43): a span per call, child of the caller's current span, and a span per attempt, whose
 * W3C context goes into the attempt's request frame ({@link WireRequest#withTraceContext}). Through the OpenTelemetry
 * API only: a no-op unless the application installed an SDK ({@link GlobalOpenTelemetry}).
 */
final class ClientTracing {
  private static final TextMapSetter<Map<String, String>> SETTER = (carrier, key, value) -> carrier.put(key, value);

  private final Tracer tracer = GlobalOpenTelemetry.getTracer("org.apiary.client");

  /** Starts a call's span under the caller's current context; ended when its reply completes. */
  void startCall(PendingCall call, String operation, String graph) {
    Span span = tracer.spanBuilder("apiary." + operation + (graph == null ? "" : " " + graph))
        .setSpanKind(SpanKind.INTERNAL).setAttribute("apiary.invocation.id", call.id)
        .setAttribute("apiary.graph", graph == null ? "" : graph).startSpan();
    if (!span.getSpanContext().isValid()) {
      return; // no SDK: nothing to record, nothing to propagate
    }
    call.callSpan = span;
    call.reply.whenComplete((reply, error) -> {
      if (error != null) {
        span.setStatus(StatusCode.ERROR, String.valueOf(error.getMessage()));
      } else if (WireReply.ERROR.equals(reply.status())) {
        span.setStatus(StatusCode.ERROR, reply.error() + ": " + reply.message());
      }
      span.end();
    });
  }

  /**
   * Starts the span of a call's next attempt (ending the previous one) and gives the frame it sends: the call's
   * request with the attempt's trace context. On the I/O thread.
   */
  void startAttempt(PendingCall call, String frontend) {
    endAttempt(call, call.history.isEmpty() ? null : call.history.get(call.history.size() - 1));
    if (call.callSpan == null || call.bytes == null) {
      return;
    }
    Span span = tracer.spanBuilder("apiary.attempt").setSpanKind(SpanKind.CLIENT)
        .setParent(Context.root().with(call.callSpan)).setAttribute("apiary.attempt", call.attempts)
        .setAttribute("apiary.frontend", frontend).startSpan();
    call.attemptSpan = span;
    Map<String, String> carrier = new HashMap<>(2);
    io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator.getInstance()
        .inject(Context.root().with(span), carrier, SETTER);
    call.attemptBytes = WireRequest.withTraceContext(call.bytes, carrier.get(WireRequest.TRACEPARENT_FIELD),
        carrier.get(WireRequest.TRACESTATE_FIELD));
  }

  /** Ends the current attempt's span, with error status if {@code problem} (what went wrong) is given. */
  static void endAttempt(PendingCall call, String problem) {
    Span span = call.attemptSpan;
    if (span == null) {
      return;
    }
    call.attemptSpan = null;
    call.attemptBytes = null;
    if (problem != null) {
      span.setStatus(StatusCode.ERROR, problem);
    }
    span.end();
  }
}
