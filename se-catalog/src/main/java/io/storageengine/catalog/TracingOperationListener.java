package io.storageengine.catalog;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Scope;
import io.storageengine.common.telemetry.SpanFields;
import io.storageengine.common.telemetry.Telemetry;
import java.util.Collection;
import java.util.Map;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NoSuchViewException;

/**
 * An {@link OperationListener} that makes every operation of a tenant catalog a
 * {@code catalog.operation} span ({@code catalog.id}, {@code catalog.operation} = the method
 * name, {@code error}, {@code error.kind}, {@code outcome}) and a sample of the
 * {@code se.catalog.operation.duration} metric. The span is current while the operation runs, so
 * the object-store or HTTP work it causes nests under it. Give it to
 * {@link TenantCatalogRegistry.Builder#listener} and every catalog the registry builds is traced.
 *
 * <p>A lookup answered "does not exist" or "already exists" is a routine outcome, not an error:
 * {@code outcome} says which and {@code error} stays false. Arguments (names, properties) are
 * never recorded.
 */
public final class TracingOperationListener implements OperationListener {
  private final Telemetry telemetry;

  /** Reports to {@code telemetry}. */
  public TracingOperationListener(Telemetry telemetry) {
    this.telemetry = java.util.Objects.requireNonNull(telemetry, "telemetry");
  }

  @Override
  public TracedOperation begin(String catalogId, String operation) {
    Telemetry t = telemetry;
    Span span = t.tracer().spanBuilder(SpanFields.CATALOG_OPERATION)
        .setSpanKind(SpanKind.CLIENT)
        .setAttribute(SpanFields.CATALOG_ID, catalogId)
        .setAttribute(SpanFields.CATALOG_OPERATION_NAME, operation)
        .startSpan();
    return new TracedOperation(t, operation, span, span.makeCurrent());
  }

  /** One traced operation; {@link #end} closes its span. */
  public static final class TracedOperation implements Operation {
    private final Telemetry telemetry;
    private final String operation;
    private final Span span;
    private final Scope scope;
    private final long startNanos = System.nanoTime();

    private TracedOperation(Telemetry telemetry, String operation, Span span, Scope scope) {
      this.telemetry = telemetry;
      this.operation = operation;
      this.span = span;
      this.scope = scope;
    }

    /**
     * Records what the operation returned: the size of a returned list (or map) as
     * {@code catalog.result_count}; anything else is ignored (never recorded as such).
     */
    @Override
    public void result(Object value) {
      if (value instanceof Collection<?> collection) {
        span.setAttribute(SpanFields.CATALOG_RESULT_COUNT, (long) collection.size());
      } else if (value instanceof Map<?, ?> map) {
        span.setAttribute(SpanFields.CATALOG_RESULT_COUNT, (long) map.size());
      }
    }

    @Override
    public void end(Throwable failure) {
      scope.close();
      boolean failed = false;
      if (failure == null) {
        span.setAttribute(SpanFields.OUTCOME, "ok");
        span.setAttribute(SpanFields.ERROR, false);
      } else if (routineOutcome(failure) != null) {
        span.setAttribute(SpanFields.OUTCOME, routineOutcome(failure));
        span.setAttribute(SpanFields.ERROR, false);
      } else {
        failed = true;
        span.setAttribute(SpanFields.OUTCOME, "failed");
        SpanFields.fail(span, failure);
      }
      span.end();
      telemetry.metrics().catalogOperation(operation, failed, System.nanoTime() - startNanos);
    }

    private static String routineOutcome(Throwable e) {
      if (e instanceof NoSuchTableException || e instanceof NoSuchNamespaceException
          || e instanceof NoSuchViewException) {
        return "not_found";
      }
      if (e instanceof AlreadyExistsException) {
        return "already_exists";
      }
      return null;
    }
  }
}
