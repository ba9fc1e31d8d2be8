package io.storageengine.objectstore;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.storageengine.common.telemetry.RetryScope;
import io.storageengine.common.telemetry.SpanFields;
import io.storageengine.common.telemetry.Telemetry;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * An {@link ObjectStore} that reports every call as a {@code storage.operation} span and in the
 * object-store metrics, then delegates. Spans carry the operation ({@code get}, {@code
 * get_range}, {@code head}, {@code put}, {@code put_if_absent}, {@code put_if_match}, {@code
 * list}, {@code list_children}, {@code delete}), the bucket and root of the store, the key or
 * prefix, sizes, the retry count and the kind of the last retried failure; never the bytes.
 *
 * <p>Retries are counted across the whole logical call: when a retry loop above this store
 * opened a {@link RetryScope} (the WAL does), every attempt of that loop belongs to one span,
 * which ends when the loop closes its scope; a failed attempt followed by a successful one leaves
 * the span successful. Retries inside the wrapped store ({@link RetryScope#noteRetry}) count too.
 */
public final class TracingObjectStore implements ObjectStore {
  private final ObjectStore delegate;
  private final String storage;
  private final Telemetry telemetry;
  private final String bucket;
  private final String root;

  /**
   * @param storage what the store holds, for the metrics' {@code storage} tag ({@code cluster})
   */
  public TracingObjectStore(ObjectStore delegate, String storage, Telemetry telemetry) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
    this.storage = Objects.requireNonNull(storage, "storage");
    this.telemetry = Objects.requireNonNull(telemetry, "telemetry");
    String description = delegate.describe();
    if (description.startsWith("s3://")) {
      String rest = description.substring("s3://".length());
      int slash = rest.indexOf('/');
      this.bucket = slash < 0 ? rest : rest.substring(0, slash);
      this.root = slash < 0 ? "" : rest.substring(slash + 1);
    } else {
      this.bucket = null;
      this.root = description.startsWith("fs:") ? description.substring("fs:".length()) : description;
    }
  }

  /** The wrapped store. */
  public ObjectStore delegate() {
    return delegate;
  }

  @Override
  public Optional<Blob> get(String key) {
    return traced("get", key, () -> delegate.get(key),
        (span, blob) -> blob.ifPresent(b -> span.setAttribute(SpanFields.IO_SIZE, (long) b.data().length)));
  }

  @Override
  public Optional<byte[]> getRange(String key, long offset, int length) {
    return traced("get_range", key, () -> delegate.getRange(key, offset, length),
        (span, bytes) -> bytes.ifPresent(b -> span.setAttribute(SpanFields.IO_SIZE, (long) b.length)));
  }

  @Override
  public Optional<ObjectInfo> head(String key) {
    return traced("head", key, () -> delegate.head(key),
        (span, info) -> info.ifPresent(i -> span.setAttribute(SpanFields.IO_SIZE, i.size())));
  }

  @Override
  public String put(String key, byte[] data) {
    return traced("put", key, () -> delegate.put(key, data),
        (span, etag) -> span.setAttribute(SpanFields.IO_SIZE, (long) data.length));
  }

  @Override
  public Optional<String> putIfAbsent(String key, byte[] data) {
    return traced("put_if_absent", key, () -> delegate.putIfAbsent(key, data), (span, etag) -> {
      span.setAttribute(SpanFields.IO_SIZE, (long) data.length);
      span.setAttribute(SpanFields.IO_CONDITION_MET, etag.isPresent());
    });
  }

  @Override
  public Optional<String> putIfMatch(String key, byte[] data, String etag) {
    return traced("put_if_match", key, () -> delegate.putIfMatch(key, data, etag), (span, newEtag) -> {
      span.setAttribute(SpanFields.IO_SIZE, (long) data.length);
      span.setAttribute(SpanFields.IO_CONDITION_MET, newEtag.isPresent());
    });
  }

  @Override
  public List<ObjectInfo> list(String prefix) {
    return traced("list", prefix, () -> delegate.list(prefix),
        (span, infos) -> span.setAttribute(SpanFields.IO_RESULT_COUNT, (long) infos.size()));
  }

  @Override
  public Children listChildren(String prefix) {
    return traced("list_children", prefix, () -> delegate.listChildren(prefix),
        (span, children) -> span.setAttribute(SpanFields.IO_RESULT_COUNT,
            (long) children.objects().size() + children.directories().size()));
  }

  @Override
  public void delete(String key) {
    traced("delete", key, () -> {
      delegate.delete(key);
      return null;
    }, (span, nothing) -> {});
  }

  @Override
  public String describe() {
    return delegate.describe();
  }

  @Override
  public void close() {
    delegate.close();
  }

  /** Sets result fields (sizes, whether a condition held) on a successful attempt's span. */
  @FunctionalInterface
  private interface ResultFields<T> {
    void set(Span span, T result);
  }

  private <T> T traced(String operation, String path, Supplier<T> body, ResultFields<T> fields) {
    RetryScope scope = RetryScope.current();
    if (scope != null && scope.attachment() instanceof Call call && call.isSame(this, operation, path)) {
      return call.attempt(body, fields); // a retry of a call already traced
    }
    if (scope != null && scope.attachment() == null) {
      Call call = new Call(operation, path, scope);
      scope.attach(call, call::finish);
      return call.attempt(body, fields);
    }
    // No retry loop above (or it holds another call): this call is its own scope.
    try (RetryScope own = RetryScope.open()) {
      Call call = new Call(operation, path, own);
      own.attach(call, call::finish);
      return call.attempt(body, fields);
    }
  }

  /** One logical call: its span stays open over every attempt until its scope closes. */
  private final class Call {
    private final String operation;
    private final String path;
    private final RetryScope scope;
    private final Span span;
    private final long startNanos = System.nanoTime();
    private Throwable lastFailure;

    Call(String operation, String path, RetryScope scope) {
      this.operation = operation;
      this.path = path;
      this.scope = scope;
      var builder = telemetry.tracer().spanBuilder(SpanFields.STORAGE_OPERATION)
          .setSpanKind(SpanKind.CLIENT)
          .setAttribute(SpanFields.IO_OPERATION, operation)
          .setAttribute(SpanFields.IO_ROOT, root)
          .setAttribute(SpanFields.IO_PATH, path);
      if (bucket != null) {
        builder.setAttribute(SpanFields.IO_BUCKET, bucket);
      }
      this.span = builder.startSpan();
    }

    boolean isSame(TracingObjectStore store, String operation, String path) {
      return store == TracingObjectStore.this && this.operation.equals(operation) && this.path.equals(path);
    }

    <T> T attempt(Supplier<T> body, ResultFields<T> fields) {
      try {
        T result = body.get();
        lastFailure = null;
        fields.set(span, result);
        return result;
      } catch (RuntimeException | Error e) {
        lastFailure = e;
        throw e;
      }
    }

    void finish() {
      int retries = scope.retries();
      span.setAttribute(SpanFields.IO_RETRY_COUNT, (long) retries);
      if (scope.lastErrorKind() != null) {
        span.setAttribute(SpanFields.IO_RETRY_ERROR_KIND, scope.lastErrorKind());
      }
      if (lastFailure != null) {
        SpanFields.fail(span, lastFailure);
      } else {
        span.setAttribute(SpanFields.ERROR, false);
      }
      span.end();
      telemetry.metrics().storageOperation(storage, operation, lastFailure != null, retries,
          scope.lastErrorKind(), System.nanoTime() - startNanos);
    }
  }
}
