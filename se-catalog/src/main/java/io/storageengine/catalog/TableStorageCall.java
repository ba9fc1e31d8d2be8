package io.storageengine.catalog;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.storageengine.common.telemetry.SpanFields;
import io.storageengine.common.telemetry.Telemetry;
import java.io.Closeable;
import java.io.IOException;

/**
 * One logical call to table storage: a {@code storage.operation} span and, when it
 * {@linkplain #end ends}, one sample of the object-store metrics tagged {@code storage=table}.
 *
 * <p>When tracing is off no span is built and no location is parsed: the call costs a clock
 * read and the metric update. Not thread-safe; {@link #end} is idempotent.
 */
final class TableStorageCall {
  /** The {@code storage} tag of table-storage metrics (cluster storage is {@code cluster}). */
  static final String STORAGE = "table";

  private final Telemetry telemetry;
  private final String operation;
  private final Span span;
  private final long startNanos = System.nanoTime();
  private Throwable failure;
  private int retries;
  private String retryErrorKind;
  private boolean ended;

  private TableStorageCall(Telemetry telemetry, String operation, Span span) {
    this.telemetry = telemetry;
    this.operation = operation;
    this.span = span;
  }

  /**
   * Starts a call of {@code operation} on {@code location} (null when the call names no single
   * location); {@code root} is the catalog's warehouse as a path, or null.
   */
  static TableStorageCall start(Telemetry telemetry, String operation, String location, String root) {
    if (!telemetry.tracingEnabled()) {
      return new TableStorageCall(telemetry, operation, Span.getInvalid());
    }
    var builder = telemetry.tracer().spanBuilder(SpanFields.STORAGE_OPERATION)
        .setSpanKind(SpanKind.CLIENT)
        .setAttribute(SpanFields.IO_OPERATION, operation);
    if (root != null && !root.isEmpty()) {
      builder.setAttribute(SpanFields.IO_ROOT, root);
    }
    StorageLocation parsed = StorageLocation.parse(location);
    if (parsed != null) {
      if (parsed.bucket() != null) {
        builder.setAttribute(SpanFields.IO_BUCKET, parsed.bucket());
      }
      builder.setAttribute(SpanFields.IO_PATH, parsed.path());
    }
    return new TableStorageCall(telemetry, operation, builder.startSpan());
  }

  /** Sets the location after the fact, for calls whose location is known only at the end. */
  void location(String location) {
    StorageLocation parsed = span.isRecording() ? StorageLocation.parse(location) : null;
    if (parsed != null) {
      if (parsed.bucket() != null) {
        span.setAttribute(SpanFields.IO_BUCKET, parsed.bucket());
      }
      span.setAttribute(SpanFields.IO_PATH, parsed.path());
    }
  }

  void size(long bytes) {
    span.setAttribute(SpanFields.IO_SIZE, bytes);
  }

  void resultCount(long count) {
    span.setAttribute(SpanFields.IO_RESULT_COUNT, count);
  }

  /** For create-only writes: whether the file was absent and the write could start. */
  void conditionMet(boolean met) {
    span.setAttribute(SpanFields.IO_CONDITION_MET, met);
  }

  /** An attempt succeeded: an earlier failure of the same call was recovered from. */
  void succeeded() {
    failure = null;
  }

  /** An attempt failed; the call ends failed unless a later attempt succeeds. */
  void failed(Throwable cause) {
    failure = cause;
  }

  /** The retries of the whole call and the kind of the last failure that caused one. */
  void retries(int count, String lastErrorKind) {
    this.retries = count;
    this.retryErrorKind = lastErrorKind;
  }

  /** Ends the span and records the metric, once. */
  /**
   * Closes the stream this call covers and ends the call with the {@code bytes} it moved; a
   * failure to close fails the call and is rethrown.
   */
  void endWithClose(Closeable stream, long bytes) throws IOException {
    try {
      stream.close();
    } catch (IOException | RuntimeException e) {
      failed(e);
      throw e;
    } finally {
      size(bytes);
      end();
    }
  }

  void end() {
    if (ended) {
      return;
    }
    ended = true;
    span.setAttribute(SpanFields.IO_RETRY_COUNT, (long) retries);
    if (retryErrorKind != null) {
      span.setAttribute(SpanFields.IO_RETRY_ERROR_KIND, retryErrorKind);
    }
    if (failure != null) {
      SpanFields.fail(span, failure);
    } else {
      span.setAttribute(SpanFields.ERROR, false);
    }
    span.end();
    telemetry.metrics().storageOperation(STORAGE, operation, failure != null, retries, retryErrorKind,
        System.nanoTime() - startNanos);
  }
}
