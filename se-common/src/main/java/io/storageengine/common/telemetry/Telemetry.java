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
 * <p>One instance is {@link #install installed} per process at startup and reached through
 * {@link #current()}; before that, {@code current()} is a disabled instance.
 */
public final class Telemetry implements AutoCloseable {
  /** Instrumentation scope of every span the engine makes. */
  public static final String INSTRUMENTATION_SCOPE = "io.storageengine";
  /** Logger that shows span starts and ends at DEBUG. */
  public static final String TRACE_LOGGER = "io.storageengine.trace";
  static final String SERVICE_NAME = "storage-engine";

  private static final Logger LOG = LoggerFactory.getLogger(Telemetry.class);
  private static final Telemetry DISABLED = new Telemetry(OpenTelemetry.noop(), false, new Metrics(), null);
  private static volatile Telemetry current = DISABLED;

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

  /** The installed telemetry, or a disabled one (no-op tracer, unscraped metrics). */
  public static Telemetry current() {
    return current;
  }

  /** True when an instance was {@link #install installed} (and not closed since). */
  public static boolean isInstalled() {
    return current != DISABLED;
  }

  /** Makes {@code telemetry} {@link #current()}; returns the one it replaces. */
  public static Telemetry install(Telemetry telemetry) {
    Telemetry previous = current;
    current = Objects.requireNonNull(telemetry, "telemetry");
    return previous;
  }

  /** Tracing off, fresh metrics. */
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

  /** Flushes and stops the SDK, closes the metrics, and uninstalls this instance if it is current. */
  @Override
  public void close() {
    if (this == DISABLED) {
      return;
    }
    if (current == this) {
      current = DISABLED;
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
