package io.storageengine.common.telemetry;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Context;

/**
 * One ingested batch, from validation to acknowledgement: an {@code ingest.batch} span (child
 * of the Flight call's span when that is current) with catalog, table, request id, rows and
 * bytes, and the ingestion metrics. The span ends when the batch is durable ({@link #durable})
 * or failed ({@link #failed}); either may be called from another thread (the WAL committer).
 */
public final class IngestTrace {
  private final Telemetry telemetry;
  private final String catalogId;
  private final String table;
  private final Span span;
  private final long startNanos = System.nanoTime();

  private IngestTrace(Telemetry telemetry, String catalogId, String table, long requestId, long rows, long bytes) {
    this.telemetry = telemetry;
    this.catalogId = catalogId;
    this.table = table;
    this.span = telemetry.tracer().spanBuilder(SpanFields.INGEST_BATCH)
        .setParent(Context.current())
        .setAttribute(SpanFields.CATALOG_ID, catalogId)
        .setAttribute(SpanFields.TABLE, table)
        .setAttribute(SpanFields.REQUEST_ID, requestId)
        .setAttribute(SpanFields.ROWS, rows)
        .setAttribute(SpanFields.BYTES, bytes)
        .startSpan();
    telemetry.metrics().ingestBatch(catalogId, table, rows, bytes);
  }

  /** A validated batch about to be queued for the WAL; counts it in the ingestion metrics. */
  public static IngestTrace accepted(Telemetry telemetry, String catalogId, String table, long requestId,
      long rows, long bytes) {
    return new IngestTrace(telemetry, catalogId, table, requestId, rows, bytes);
  }

  /** Counts a batch or stream rejected before it reached the WAL (validation, unknown table). */
  public static void rejected(Telemetry telemetry, String catalogId, String table, Throwable failure) {
    telemetry.metrics().ingestRejected(catalogId, table, SpanFields.errorKind(failure));
  }

  /** The batch is in WAL segment {@code seq}: ends the span and records the ack latency. */
  public void durable(long seq) {
    span.setAttribute(SpanFields.SEGMENT_SEQ, seq);
    span.setAttribute(SpanFields.ERROR, false);
    span.end();
    telemetry.metrics().ackLatency(System.nanoTime() - startNanos);
  }

  /** The batch could not be made durable. */
  public void failed(Throwable failure) {
    SpanFields.fail(span, failure);
    span.end();
    telemetry.metrics().ingestRejected(catalogId, table, SpanFields.errorKind(failure));
  }
}
