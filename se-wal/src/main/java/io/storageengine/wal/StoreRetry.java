package io.storageengine.wal;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.common.telemetry.RetryScope;
import io.storageengine.common.telemetry.SpanFields;
import java.time.Duration;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bounded retries of one object-store call that failed with UNAVAILABLE. Only UNAVAILABLE is
 * retried: it is the one failure the store documents as transient. The caller must make the call
 * safe to repeat (conditional writes whose lost response it can recognise, reads, deletes).
 * Each call runs in a {@link RetryScope}, so a tracing store reports its attempts as one
 * {@code storage.operation} span with the retry count; {@code call} must therefore make one store
 * call per attempt.
 */
final class StoreRetry {
  private static final Logger LOG = LoggerFactory.getLogger(StoreRetry.class);

  private final int attempts;
  private final long backoffMillis;

  StoreRetry(int attempts, Duration backoff) {
    if (attempts < 1) {
      throw new IllegalArgumentException("attempts must be at least 1, got " + attempts);
    }
    if (backoff.isNegative()) {
      throw new IllegalArgumentException("negative backoff " + backoff);
    }
    this.attempts = attempts;
    this.backoffMillis = backoff.toMillis();
  }

  /**
   * Runs {@code call}, repeating it after UNAVAILABLE with a growing pause; after the last
   * attempt the failure propagates as UNAVAILABLE naming {@code what}.
   */
  <T> T call(String what, Supplier<T> call) {
    // One scope for every attempt: a tracing store reports them as one call with its retries.
    try (RetryScope scope = RetryScope.open()) {
      for (int attempt = 1; ; attempt++) {
        try {
          return call.get();
        } catch (SeException e) {
          if (e.code() != ErrorCode.UNAVAILABLE) {
            throw e;
          }
          if (attempt >= attempts) {
            throw new SeException(ErrorCode.UNAVAILABLE,
                "cannot " + what + " after " + attempts + " attempts: " + e.getMessage(), e);
          }
          LOG.debug("cannot {} (attempt {} of {}): {}", what, attempt, attempts, e.getMessage());
          scope.retrying(SpanFields.errorKind(e));
          pause(what, backoffMillis * attempt);
        }
      }
    }
  }

  void run(String what, Runnable call) {
    call(what, () -> {
      call.run();
      return null;
    });
  }

  private static void pause(String what, long millis) {
    if (millis <= 0) {
      return;
    }
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SeException(ErrorCode.UNAVAILABLE, "interrupted while retrying to " + what);
    }
  }
}
