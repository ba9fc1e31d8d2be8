package io.storageengine.common.telemetry;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.SdkTracerProviderBuilder;
import io.opentelemetry.sdk.trace.SpanProcessor;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A process's tracer and metrics.
 *
 * <p>Tracing is on when {@code OTEL_SDK_DISABLED=false} (the OpenTelemetry SDK, configured by
 * the standard {@code OTEL_*} variables, exporting over OTLP by default) or when the
 * {@value #TRACE_LOGGER} logger is at DEBUG (spans written to the log). Otherwise the tracer is
 * OpenTelemetry's no-op one: spans cost an allocation-free call and record nothing.
 * {@link Metrics} are always on: they feed {@code /metrics}.
 *
 * <p>There is no process-global instance: the composition root (se-server's
 * {@code ServerObservability}, owned by the process's engine context) builds one and hands it to
 * every component that reports (constructor parameters), and closes it with the engine. Two
 * engines in one JVM thus have separate tracers and metrics. Library and test code without an
 * engine uses {@link #disabled()}.
 *
 * <p>What remains process-wide is OpenTelemetry's own: the SDK built by {@link #fromEnvironment}
 * reads the process environment, and its exporters are found on the classpath. It is not
 * registered as {@code GlobalOpenTelemetry}.
 */
public final class Telemetry implements AutoCloseable {
  /** Instrumentation scope of every span the engine makes. */
  public static final String INSTRUMENTATION_SCOPE = "io.storageengine";
  /** Logger that shows span starts and ends at DEBUG. */
  public static final String TRACE_LOGGER = "io.storageengine.trace";
  static final String SERVICE_NAME = "storage-engine";

  private static final Logger LOG = LoggerFactory.getLogger(Telemetry.class);

  private static final Telemetry NONE = new Telemetry(OpenTelemetry.noop(), false, new Metrics(), null);

  private final OpenTelemetry openTelemetry;
  private final Tracer tracer;
  private final boolean tracing;
  private final Metrics metrics;
  private final OpenTelemetrySdk sdk;

  private Telemetry(OpenTelemetry openTelemetry, boolean tracing, Metrics metrics, OpenTelemetrySdk sdk) {
    this.openTelemetry = openTelemetry;
    this.tracer = openTelemetry.getTracer(INSTRUMENTATION_SCOPE);
    this.tracing = tracing;
    this.metrics = metrics;
    this.sdk = sdk;
  }

  /**
   * The sink of components built without telemetry (library use, tests, tools): tracing off, and
   * metrics that no engine scrapes. One shared instance, never closed; an engine never reports here.
   */
  public static Telemetry none() {
    return NONE;
  }

  /** Tracing off, fresh metrics (the caller closes it). */
  public static Telemetry disabled() {
    return new Telemetry(OpenTelemetry.noop(), false, new Metrics(), null);
  }

  /** From the process environment: see the class comment. */
  public static Telemetry fromEnvironment() {
    return fromEnvironment(System.getenv());
  }

  /**
   * From {@code env} ({@code OTEL_*} variables). The SDK is used only when
   * {@code OTEL_SDK_DISABLED} is {@code false}; metrics and logs exporters default to
   * {@code none} (metrics are scraped from {@code /metrics}) and the service name to
   * {@value #SERVICE_NAME}.
   */
  public static Telemetry fromEnvironment(Map<String, String> env) {
    boolean traceLog = LoggerFactory.getLogger(TRACE_LOGGER).isDebugEnabled();
    String disabled = env.get("OTEL_SDK_DISABLED");
    if (disabled != null && disabled.trim().equalsIgnoreCase("false")) {
      Map<String, String> properties = new LinkedHashMap<>();
      properties.put("otel.service.name", SERVICE_NAME);
      properties.put("otel.metrics.exporter", "none");
      properties.put("otel.logs.exporter", "none");
      // The standard variable names as properties: the same values the SDK reads from the
      // process environment, and a way to configure it from a given map in tests.
      env.forEach((k, v) -> {
        if (k.startsWith("OTEL_")) {
          properties.put(k.toLowerCase(Locale.ROOT).replace('_', '.'), v);
        }
      });
      OpenTelemetrySdk sdk = AutoConfiguredOpenTelemetrySdk.builder()
          .addPropertiesSupplier(() -> properties)
          .addTracerProviderCustomizer((builder, config) ->
              traceLog ? builder.addSpanProcessor(new TraceLogSpanProcessor()) : builder)
          .disableShutdownHook()
          .build()
          .getOpenTelemetrySdk();
      LOG.info("OpenTelemetry tracing enabled (service {})",
          properties.getOrDefault("otel.service.name", SERVICE_NAME));
      return new Telemetry(sdk, true, new Metrics(), sdk);
    }
    if (traceLog) {
      return builder().spanProcessor(new TraceLogSpanProcessor()).build();
    }
    return disabled();
  }

  /** Tracing into the given span processors (tests, span logging without an exporter). */
  public static Builder builder() {
    return new Builder();
  }

  public OpenTelemetry openTelemetry() {
    return openTelemetry;
  }

  public Tracer tracer() {
    return tracer;
  }

  /** True when spans are recorded somewhere (an exporter or the trace log). */
  public boolean tracingEnabled() {
    return tracing;
  }

  public Metrics metrics() {
    return metrics;
  }

  /** Flushes and stops the SDK and closes the metrics. */
  @Override
  public void close() {
    if (this == NONE) {
      return;
    }
    if (sdk != null) {
      sdk.close(); // flushes pending spans to the exporter, waiting up to 10 seconds
    }
    metrics.close();
  }

  /** Options of a {@link Telemetry} with an SDK tracer provider and no exporter of its own. */
  public static final class Builder {
    private final List<SpanProcessor> processors = new ArrayList<>();

    private Builder() {}

    /** Adds a processor that receives every span (e.g. a {@code SimpleSpanProcessor} over an exporter). */
    public Builder spanProcessor(SpanProcessor processor) {
      processors.add(Objects.requireNonNull(processor, "processor"));
      return this;
    }

    public Telemetry build() {
      SdkTracerProviderBuilder tracing = SdkTracerProvider.builder();
      processors.forEach(tracing::addSpanProcessor);
      OpenTelemetrySdk sdk = OpenTelemetrySdk.builder().setTracerProvider(tracing.build()).build();
      return new Telemetry(sdk, true, new Metrics(), sdk);
    }
  }
}
