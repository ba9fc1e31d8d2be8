/**
 * Traces and metrics of the engine.
 *
 * <p>{@link io.storageengine.common.telemetry.Telemetry} is built once per engine at startup
 * ({@link io.storageengine.common.telemetry.Telemetry#fromEnvironment()}) and handed explicitly to
 * ingestion, the WAL, reconciliation and the catalogs, which report to the tracer and
 * {@link io.storageengine.common.telemetry.Metrics} they were given; there is no global instance.
 * When tracing is off, the tracer is OpenTelemetry's no-op one.
 *
 * <p>This module brings no span exporter: the SDK's autoconfiguration finds one on the classpath
 * at runtime. se-server brings the OTLP one (the default); a program that builds telemetry from
 * the environment without se-server adds an exporter or sets {@code OTEL_TRACES_EXPORTER}.
 *
 * <p>Span fields never carry SQL text, tickets, headers, credentials or byte payloads: only
 * names, ids, counts, sizes, durations and error kinds (see {@link
 * io.storageengine.common.telemetry.SpanFields}).
 */
package io.storageengine.common.telemetry;
