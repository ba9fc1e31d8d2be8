package io.storageengine.common.telemetry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ReconcileAndIngestTraceTest {
  private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
  private Telemetry telemetry;

  @BeforeEach
  void open() {
    telemetry = Telemetry.builder().spanProcessor(SimpleSpanProcessor.create(exporter)).build();
  }

  @AfterEach
  void close() {
    telemetry.close();
  }

  @Test
  void aReconcilePassIsATraceWithMaterializeAndCommitChildren() {
    Span unrelated = telemetry.tracer().spanBuilder("caller").startSpan();
    try (Scope ignored = unrelated.makeCurrent();
        ReconcileTrace pass = ReconcileTrace.start(telemetry, "warehouse", "0c8a-uuid")) {
      pass.table("crm.customers");
      pass.walRange(3, 5);
      int files = pass.materialize(() -> {
        telemetry.tracer().spanBuilder("storage.operation").startSpan().end();
        return 2;
      });
      try (ReconcileTrace.Step step = pass.committing()) {
        telemetry.tracer().spanBuilder("catalog.operation").startSpan().end();
      }
      pass.result("committed", 120, files, 1);
    } finally {
      unrelated.end();
    }
    List<SpanData> spans = exporter.getFinishedSpanItems();
    SpanData run = byName(spans, SpanFields.RECONCILE_RUN);
    SpanData materialize = byName(spans, SpanFields.RECONCILE_MATERIALIZE);
    SpanData commit = byName(spans, SpanFields.RECONCILE_COMMIT);
    SpanData storage = byName(spans, "storage.operation");
    // A trace of its own, not a child of whatever was current.
    assertThat(run.getParentSpanContext().isValid()).isFalse();
    assertThat(run.getTraceId()).isNotEqualTo(byName(spans, "caller").getTraceId());
    assertThat(materialize.getParentSpanId()).isEqualTo(run.getSpanId());
    assertThat(commit.getParentSpanId()).isEqualTo(run.getSpanId());
    assertThat(byName(spans, "catalog.operation").getParentSpanId()).isEqualTo(commit.getSpanId());
    assertThat(storage.getParentSpanId()).isEqualTo(materialize.getSpanId());
    assertThat(run.getAttributes().get(SpanFields.TABLE)).isEqualTo("crm.customers");
    assertThat(run.getAttributes().get(SpanFields.WAL_FROM)).isEqualTo(3);
    assertThat(run.getAttributes().get(SpanFields.WAL_TO)).isEqualTo(5);
    assertThat(run.getAttributes().get(SpanFields.ROWS)).isEqualTo(120);
    assertThat(run.getAttributes().get(SpanFields.FILES)).isEqualTo(2);
    assertThat(run.getAttributes().get(SpanFields.DELETION_VECTORS)).isEqualTo(1);
    assertThat(run.getAttributes().get(SpanFields.OUTCOME)).isEqualTo("committed");
    assertThat(telemetry.metrics().scrape())
        .contains("se_reconcile_duration_seconds_count{outcome=\"committed\"} 1")
        .contains("se_reconcile_rows_total{catalog=\"warehouse\",table=\"crm.customers\"} 120.0");
  }

  @Test
  void aFailedCommitMarksTheChildAndThePass() {
    assertThatThrownBy(() -> {
      try (ReconcileTrace pass = ReconcileTrace.start(telemetry, "warehouse", "uuid")) {
        try {
          pass.commit(() -> {
            throw new SeException(ErrorCode.CONFLICT, "commit conflicted");
          });
        } catch (SeException e) {
          pass.failed(e);
          throw e;
        }
      }
    }).isInstanceOf(SeException.class).hasMessage("commit conflicted");
    SpanData commit = byName(exporter.getFinishedSpanItems(), SpanFields.RECONCILE_COMMIT);
    SpanData run = byName(exporter.getFinishedSpanItems(), SpanFields.RECONCILE_RUN);
    assertThat(commit.getAttributes().get(SpanFields.ERROR_KIND)).isEqualTo("conflict");
    assertThat(run.getAttributes().get(SpanFields.OUTCOME)).isEqualTo("failed");
    assertThat(run.getAttributes().get(SpanFields.ERROR)).isTrue();
  }

  @Test
  void anIngestedBatchIsASpanUnderTheCallAndFeedsTheMetrics() {
    Span call = telemetry.tracer().spanBuilder("flight.DoPut").startSpan();
    IngestTrace batch;
    try (Scope ignored = call.makeCurrent()) {
      batch = IngestTrace.accepted(telemetry, "warehouse", "crm.customers", 7, 100, 4096);
    }
    batch.durable(12);
    IngestTrace.rejected(telemetry, "warehouse", "crm.customers", new SeException(ErrorCode.INVALID_ARGUMENT, "column x"));
    call.end();
    SpanData span = byName(exporter.getFinishedSpanItems(), SpanFields.INGEST_BATCH);
    assertThat(span.getParentSpanId()).isEqualTo(call.getSpanContext().getSpanId());
    assertThat(span.getAttributes().get(SpanFields.REQUEST_ID)).isEqualTo(7);
    assertThat(span.getAttributes().get(SpanFields.ROWS)).isEqualTo(100);
    assertThat(span.getAttributes().get(SpanFields.BYTES)).isEqualTo(4096);
    assertThat(span.getAttributes().get(SpanFields.SEGMENT_SEQ)).isEqualTo(12);
    assertThat(telemetry.metrics().scrape())
        .contains("se_ingest_rows_total{catalog=\"warehouse\",table=\"crm.customers\"} 100.0")
        .contains("se_ingest_ack_latency_seconds_count 1")
        .contains("se_ingest_rejections_total{catalog=\"warehouse\",reason=\"invalid_argument\",table=\"crm.customers\"} 1.0");
  }

  private static SpanData byName(List<SpanData> spans, String name) {
    return spans.stream().filter(s -> s.getName().equals(name)).findFirst().orElseThrow();
  }
}
