package io.storageengine.common.telemetry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class TelemetryTest {

  /** Runs {@code body} with the trace logger at {@code level}. */
  private static void withTraceLog(Level level, Runnable body) {
    Logger logger = (Logger) LoggerFactory.getLogger(Telemetry.TRACE_LOGGER);
    Level before = logger.getLevel();
    logger.setLevel(level);
    try {
      body.run();
    } finally {
      logger.setLevel(before);
    }
  }

  @Test
  void disabledByDefaultWithANoOpTracer() {
    withTraceLog(Level.INFO, this::disabledWithoutTraceLog);
  }

  private void disabledWithoutTraceLog() {
    try (Telemetry telemetry = Telemetry.fromEnvironment(Map.of())) {
      assertThat(telemetry.tracingEnabled()).isFalse();
      Span span = telemetry.tracer().spanBuilder("x").startSpan();
      assertThat(span.isRecording()).isFalse();
      span.end();
    }
    assertThat(Telemetry.disabled().tracingEnabled()).isFalse();
  }

  @Test
  void sdkEnabledOnlyByOtelSdkDisabledFalse() {
    try (Telemetry telemetry = Telemetry.fromEnvironment(
        Map.of("OTEL_SDK_DISABLED", "false", "OTEL_TRACES_EXPORTER", "none"))) {
      assertThat(telemetry.tracingEnabled()).isTrue();
      Span span = telemetry.tracer().spanBuilder("x").startSpan();
      assertThat(span.isRecording()).isTrue();
      span.end();
    }
    withTraceLog(Level.INFO, () -> {
      try (Telemetry telemetry = Telemetry.fromEnvironment(Map.of("OTEL_SDK_DISABLED", "true"))) {
        assertThat(telemetry.tracingEnabled()).isFalse();
      }
    });
  }

  @Test
  void instancesAreSeparateAndClosingOneLeavesTheOtherWorking() {
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    Telemetry first = Telemetry.builder().spanProcessor(SimpleSpanProcessor.create(exporter)).build();
    try (Telemetry second = Telemetry.disabled()) {
      Span parent = first.tracer().spanBuilder("parent").startSpan();
      try (Scope ignored = parent.makeCurrent()) {
        first.tracer().spanBuilder("child").startSpan().end();
        second.tracer().spanBuilder("elsewhere").startSpan().end();
      } finally {
        parent.end();
      }
      List<SpanData> spans = exporter.getFinishedSpanItems();
      assertThat(spans).extracting(SpanData::getName).containsExactly("child", "parent");
      assertThat(spans.get(0).getParentSpanId()).isEqualTo(spans.get(1).getSpanId());
      first.metrics().ingestBatch("first", "t", 1, 1);
      assertThat(first.metrics().scrape()).contains("catalog=\"first\"");
      assertThat(second.metrics().scrape()).doesNotContain("catalog=\"first\"");
      first.close();
      second.metrics().ingestBatch("second", "t", 1, 1);
      assertThat(second.metrics().scrape()).contains("catalog=\"second\"");
    } finally {
      first.close();
    }
  }

  @Test
  void failedSpansCarryTheErrorKindButNotTheMessage() {
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    try (Telemetry telemetry = Telemetry.builder().spanProcessor(SimpleSpanProcessor.create(exporter)).build()) {
      Span span = telemetry.tracer().spanBuilder("op").startSpan();
      SpanFields.fail(span, new SeException(ErrorCode.UNAVAILABLE, "password=hunter2 in the message"));
      span.end();
      SpanData data = exporter.getFinishedSpanItems().get(0);
      assertThat(data.getAttributes().get(SpanFields.ERROR)).isTrue();
      assertThat(data.getAttributes().get(SpanFields.ERROR_KIND)).isEqualTo("unavailable");
      assertThat(data.getAttributes().toString() + data.getStatus()).doesNotContain("hunter2");
      assertThat(SpanFields.errorKind(new IllegalStateException("x"))).isEqualTo("IllegalStateException");
    }
  }

  @Test
  void traceLoggerShowsSpanStartAndEndWithDurationAndFields() {
    Logger logger = (Logger) LoggerFactory.getLogger(Telemetry.TRACE_LOGGER);
    Level before = logger.getLevel();
    ListAppender<ILoggingEvent> appender = new ListAppender<>();
    appender.start();
    logger.addAppender(appender);
    logger.setLevel(Level.DEBUG);
    try (Telemetry telemetry = Telemetry.fromEnvironment(Map.of())) {
      assertThat(telemetry.tracingEnabled()).isTrue();
      telemetry.tracer().spanBuilder("flight.DoPut").setAttribute(SpanFields.CATALOG_ID, "warehouse")
          .startSpan().end();
    } finally {
      logger.detachAppender(appender);
      logger.setLevel(before);
    }
    assertThat(appender.list).extracting(ILoggingEvent::getFormattedMessage)
        .anySatisfy(m -> assertThat(m).startsWith("span start flight.DoPut trace="))
        .anySatisfy(m -> assertThat(m).matches("span end flight\\.DoPut \\d+\\.\\d{3} ms trace=\\w+ span=\\w+ "
            + "\\{catalog\\.id=warehouse\\}"));
  }

  @Test
  void metricsAreScrapedInPrometheusFormat() {
    try (Metrics metrics = new Metrics()) {
      metrics.ingestBatch("warehouse", "crm.customers", 10, 1000);
      metrics.ingestBatch("warehouse", "crm.customers", 5, 500);
      metrics.ingestRejected("warehouse", "crm.customers", "invalid_argument");
      metrics.ackLatency(Duration.ofMillis(120).toNanos());
      metrics.walFlush(4096, Duration.ofMillis(30).toNanos());
      metrics.walBacklog("warehouse", "crm.customers", 3, 12_000);
      metrics.reconcilePass("warehouse", "crm.customers", "committed", 15, Duration.ofSeconds(1).toNanos());
      metrics.freshness(Duration.ofSeconds(2));
      metrics.flightCall("GetFlightInfo", "query", "INVALID_ARGUMENT", 1_000_000);
      metrics.storageOperation("cluster", "put_if_absent", false, 2, "unavailable", 1_000_000);
      metrics.arrowAllocator("root", () -> 42, () -> 84);
      String text = metrics.scrape();
      assertThat(text)
          .contains("se_ingest_rows_total{catalog=\"warehouse\",table=\"crm.customers\"} 15.0")
          .contains("se_ingest_bytes_total{catalog=\"warehouse\",table=\"crm.customers\"} 1500.0")
          .contains("se_ingest_batches_total{catalog=\"warehouse\",table=\"crm.customers\"} 2.0")
          .contains("se_ingest_rejections_total{catalog=\"warehouse\",reason=\"invalid_argument\",table=\"crm.customers\"} 1.0")
          .contains("se_ingest_ack_latency_seconds_bucket")
          .contains("se_wal_flush_size_bytes_count 1")
          .contains("se_wal_flush_latency_seconds_count 1")
          .contains("se_wal_backlog_segments{catalog=\"warehouse\",table=\"crm.customers\"} 3.0")
          .contains("se_wal_backlog_bytes{catalog=\"warehouse\",table=\"crm.customers\"} 12000.0")
          .contains("se_reconcile_duration_seconds_count{outcome=\"committed\"} 1")
          .contains("se_reconcile_rows_total{catalog=\"warehouse\",table=\"crm.customers\"} 15.0")
          .contains("se_freshness_seconds_count 1")
          .contains("se_query_requests_total{method=\"GetFlightInfo\"} 1.0")
          .contains("se_query_errors_total{method=\"GetFlightInfo\",status=\"INVALID_ARGUMENT\"} 1.0")
          .contains("se_objectstore_retries_total{kind=\"unavailable\",operation=\"put_if_absent\",storage=\"cluster\"} 2.0")
          .contains("se_arrow_memory_allocated_bytes{allocator=\"root\"} 42.0")
          .contains("jvm_memory_used_bytes");
    }
  }

  @Test
  void retryScopesCountRetriesAndNest() {
    assertThat(RetryScope.current()).isNull();
    RetryScope.noteRetry("ignored"); // no scope: nothing to count
    try (RetryScope outer = RetryScope.open()) {
      outer.retrying("unavailable");
      try (RetryScope inner = RetryScope.open()) {
        RetryScope.noteRetry("conflict");
        assertThat(inner.retries()).isEqualTo(1);
        assertThat(inner.lastErrorKind()).isEqualTo("conflict");
      }
      assertThat(RetryScope.current()).isSameAs(outer);
      assertThat(outer.retries()).isEqualTo(1);
      assertThat(outer.lastErrorKind()).isEqualTo("unavailable");
      int[] closed = {0};
      outer.attach("call", () -> closed[0]++);
      assertThatThrownBy(() -> outer.attach("other", () -> {}))
          .isInstanceOf(IllegalStateException.class).hasMessage("retry scope already has an attachment");
      outer.close();
      outer.close();
      assertThat(closed[0]).isEqualTo(1);
    }
    assertThat(RetryScope.current()).isNull();
  }
}
