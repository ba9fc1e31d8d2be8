package io.storageengine.common.telemetry;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SpanProcessor;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes span starts and ends to the {@value Telemetry#TRACE_LOGGER} logger at DEBUG, so that
 * {@code SE_LOG=info,io.storageengine.trace=debug} shows every Flight call, batch, WAL flush,
 * reconcile pass, catalog and storage operation with its duration and fields, with or without
 * an OTLP exporter. Span attributes are already free of secrets (see {@link SpanFields}).
 */
public final class TraceLogSpanProcessor implements SpanProcessor {
  private final Logger log;

  public TraceLogSpanProcessor() {
    this(LoggerFactory.getLogger(Telemetry.TRACE_LOGGER));
  }

  TraceLogSpanProcessor(Logger log) {
    this.log = log;
  }

  @Override
  public void onStart(Context parentContext, ReadWriteSpan span) {
    if (log.isDebugEnabled()) {
      log.debug("span start {} trace={} span={} parent={}", span.getName(),
          span.getSpanContext().getTraceId(), span.getSpanContext().getSpanId(),
          span.getParentSpanContext().isValid() ? span.getParentSpanContext().getSpanId() : "-");
    }
  }

  @Override
  public boolean isStartRequired() {
    return true;
  }

  @Override
  public void onEnd(ReadableSpan span) {
    if (log.isDebugEnabled()) {
      log.debug("span end {} {} ms trace={} span={} {}", span.getName(),
          String.format("%.3f", span.getLatencyNanos() / 1e6),
          span.getSpanContext().getTraceId(), span.getSpanContext().getSpanId(),
          format(span.getAttributes()));
    }
  }

  @Override
  public boolean isEndRequired() {
    return true;
  }

  /** {@code {key=value, ...}} in the attributes' own order. */
  static String format(Attributes attributes) {
    StringBuilder out = new StringBuilder("{");
    for (Map.Entry<AttributeKey<?>, Object> e : attributes.asMap().entrySet()) {
      if (out.length() > 1) {
        out.append(", ");
      }
      out.append(e.getKey().getKey()).append('=').append(e.getValue());
    }
    return out.append('}').toString();
  }
}
