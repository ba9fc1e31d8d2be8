package io.storageengine.common.telemetry;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import java.util.function.Supplier;

/**
 * The trace of one reconcile pass of a table: a root span {@code reconcile.run} (a new trace per
 * pass) with children {@code reconcile.materialize} and {@code reconcile.commit}, and the
 * {@code se.reconcile.*} metrics when the pass ends. Open it on the thread that runs the pass,
 * in try-with-resources; the run span is current until {@link #close}, so WAL reads, catalog
 * calls and storage calls of the pass nest under it.
 */
public final class ReconcileTrace implements AutoCloseable {
  private final Telemetry telemetry;
  private final String catalogId;
  private String table;
  private final Span run;
  private final Scope scope;
  private final long startNanos = System.nanoTime();
  private String outcome = "failed";
  private long rows;
  private int slice = -1;
  private long slicePosition = -1;

  private ReconcileTrace(Telemetry telemetry, String catalogId, String table, String tableUuid) {
    this.telemetry = telemetry;
    this.catalogId = catalogId;
    this.table = table;
    this.run = telemetry.tracer().spanBuilder(SpanFields.RECONCILE_RUN).setNoParent()
        .setAttribute(SpanFields.CATALOG_ID, catalogId)
        .setAttribute(SpanFields.TABLE_UUID, tableUuid)
        .startSpan();
    this.scope = run.makeCurrent();
  }

  /** Starts a pass over the table {@code tableUuid} of {@code catalogId}, reported to {@code telemetry}. */
  public static ReconcileTrace start(Telemetry telemetry, String catalogId, String tableUuid) {
    return new ReconcileTrace(telemetry, catalogId, null, tableUuid);
  }

  /** Names the table once it is loaded ({@code namespace.name}), for the span and the metrics. */
  public void table(String name) {
    this.table = name;
    run.setAttribute(SpanFields.TABLE, name);
  }

  /** The pass is one slice's: its metrics are reported per slice too. */
  public void slice(int id) {
    this.slice = id;
    run.setAttribute(SpanFields.SLICE, (long) id);
  }

  /** The WAL seq the slice's progress reached with this pass's commit. */
  public void slicePosition(long walSeq) {
    this.slicePosition = walSeq;
  }

  /**
   * Opens the {@code reconcile.materialize} child for a block that cannot be a lambda; close it
   * in try-with-resources: {@code try (ReconcileTrace.Step step = trace.materializing()) {...}}.
   */
  public Step materializing() {
    return new Step(telemetry.tracer().spanBuilder(SpanFields.RECONCILE_MATERIALIZE).startSpan());
  }

  /** Opens the {@code reconcile.commit} child; see {@link #materializing}. */
  public Step committing() {
    return new Step(telemetry.tracer().spanBuilder(SpanFields.RECONCILE_COMMIT).startSpan());
  }

  /** A child span of the pass, current until closed. */
  public static final class Step implements AutoCloseable {
    private final Span span;
    private final Scope scope;
    private boolean failed;

    private Step(Span span) {
      this.span = span;
      this.scope = span.makeCurrent();
    }

    /** Marks the step failed (an exception left it, or the commit conflicted). */
    public void fail(Throwable failure) {
      failed = true;
      SpanFields.fail(span, failure);
    }

    @Override
    public void close() {
      if (!failed) {
        span.setAttribute(SpanFields.ERROR, false);
      }
      scope.close();
      span.end();
    }
  }

  /** Sets the WAL range the pass covers. */
  public void walRange(long fromSeq, long toSeq) {
    run.setAttribute(SpanFields.WAL_FROM, fromSeq);
    run.setAttribute(SpanFields.WAL_TO, toSeq);
  }

  /** Runs {@code body} (reading the WAL and writing files) as a {@code reconcile.materialize} child. */
  public <T> T materialize(Supplier<T> body) {
    return child(SpanFields.RECONCILE_MATERIALIZE, body);
  }

  /** Runs {@code body} (the Iceberg commit) as a {@code reconcile.commit} child. */
  public <T> T commit(Supplier<T> body) {
    return child(SpanFields.RECONCILE_COMMIT, body);
  }

  /** What the pass did; {@code outcome} is {@code committed}, {@code up_to_date}, {@code conflict}, ... */
  public void result(String outcome, long rows, long files, long deletionVectors) {
    this.outcome = outcome;
    this.rows = rows;
    run.setAttribute(SpanFields.OUTCOME, outcome);
    run.setAttribute(SpanFields.ROWS, rows);
    run.setAttribute(SpanFields.FILES, files);
    run.setAttribute(SpanFields.DELETION_VECTORS, deletionVectors);
  }

  /** Marks the pass failed (when it ends with an exception). */
  public void failed(Throwable failure) {
    outcome = "failed";
    SpanFields.fail(run, failure);
  }

  @Override
  public void close() {
    run.setAttribute(SpanFields.OUTCOME, outcome);
    if (!"failed".equals(outcome)) {
      run.setAttribute(SpanFields.ERROR, false);
    }
    scope.close();
    run.end();
    telemetry.metrics().reconcilePass(catalogId, table, outcome, rows, System.nanoTime() - startNanos);
    if (slice >= 0) {
      telemetry.metrics().reconcileSlice(catalogId, table, slice, rows, slicePosition);
    }
  }

  private <T> T child(String name, Supplier<T> body) {
    Span span = telemetry.tracer().spanBuilder(name).startSpan();
    try (Scope ignored = span.makeCurrent()) {
      T result = body.get();
      span.setAttribute(SpanFields.ERROR, false);
      return result;
    } catch (RuntimeException | Error e) {
      SpanFields.fail(span, e);
      throw e;
    } finally {
      span.end();
    }
  }

  /** The current span (a materialize or commit child, or the run), to add fields such as row counts. */
  public static Span currentSpan() {
    return Span.current();
  }
}
