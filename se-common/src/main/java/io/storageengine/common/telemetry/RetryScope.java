package io.storageengine.common.telemetry;

/**
 * The attempts of one logical object-store call, so that a retry loop and the store under it
 * report one {@code storage.operation} span with the retries counted across the whole call.
 *
 * <p>A retry loop opens a scope around its loop and calls {@link #retrying} before each new
 * attempt. A store that retries internally (S3 on a 409 conflict) calls {@link #noteRetry}. The
 * tracing store attaches its span to the innermost open scope on the first attempt and finds it
 * again on the next ones; closing the scope ends it. Scopes are per thread and nest.
 *
 * <p>Not thread-safe: a scope belongs to the thread that opened it.
 */
public final class RetryScope implements AutoCloseable {
  private static final ThreadLocal<RetryScope> CURRENT = new ThreadLocal<>();

  private final RetryScope outer;
  private int retries;
  private String lastErrorKind;
  private Object attachment;
  private Runnable onClose;
  private boolean closed;

  private RetryScope(RetryScope outer) {
    this.outer = outer;
  }

  /** Opens a scope on this thread; close it in a finally block. */
  public static RetryScope open() {
    RetryScope scope = new RetryScope(CURRENT.get());
    CURRENT.set(scope);
    return scope;
  }

  /** The innermost open scope of this thread, or null. */
  public static RetryScope current() {
    return CURRENT.get();
  }

  /** Counts a retry in the innermost open scope, if any ({@code errorKind}: why, e.g. {@code conflict}). */
  public static void noteRetry(String errorKind) {
    RetryScope scope = CURRENT.get();
    if (scope != null) {
      scope.retrying(errorKind);
    }
  }

  /** Records that the call is about to be tried again after a failure of {@code errorKind}. */
  public void retrying(String errorKind) {
    retries++;
    lastErrorKind = errorKind;
  }

  public int retries() {
    return retries;
  }

  /** The kind of the last failure that caused a retry, or null when there was none. */
  public String lastErrorKind() {
    return lastErrorKind;
  }

  /** What the tracing store attached on the first attempt, or null. */
  public Object attachment() {
    return attachment;
  }

  /** Attaches {@code value} and runs {@code onClose} when the scope closes (after the last attempt). */
  public void attach(Object value, Runnable onClose) {
    if (attachment != null) {
      throw new IllegalStateException("retry scope already has an attachment");
    }
    this.attachment = value;
    this.onClose = onClose;
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    // Restore the outer scope even if this one was not the innermost (a caller forgot a close).
    if (CURRENT.get() == this) {
      if (outer == null) {
        CURRENT.remove();
      } else {
        CURRENT.set(outer);
      }
    }
    if (onClose != null) {
      onClose.run();
    }
  }
}
