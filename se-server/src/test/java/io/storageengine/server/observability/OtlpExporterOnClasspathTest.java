package io.storageengine.server.observability;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.trace.Span;
import io.storageengine.common.telemetry.Telemetry;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The OTLP exporter is a runtime dependency of se-server, not of se-common: tracing from the
 * environment with the SDK's default exporter ({@code otlp}) must work for the server process.
 */
class OtlpExporterOnClasspathTest {

  @Test
  void tracingFromTheEnvironmentFindsTheDefaultOtlpExporter() {
    // Nothing listens on port 1: the exporter is only built, and its batch of one span is
    // dropped on close after a short timeout, without failing the close.
    try (Telemetry telemetry = Telemetry.fromEnvironment(Map.of(
        "OTEL_SDK_DISABLED", "false",
        "OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1",
        "OTEL_EXPORTER_OTLP_TIMEOUT", "200"))) {
      assertThat(telemetry.tracingEnabled()).isTrue();
      Span span = telemetry.tracer().spanBuilder("otlp-exporter-check").startSpan();
      assertThat(span.isRecording()).isTrue();
      span.end();
    }
  }
}
